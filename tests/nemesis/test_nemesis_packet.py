"""The packet fault, struck for real on the shared local cluster (this kernel has no
netem: the fallback path, iptables + htb + the NFQUEUE holder), its heal, also after the
control process was SIGKILLed, and a whole run with it."""
from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from checkers.history.stream import raw_events
from harness.runner import TestOptions, run_test
from nemesis import packet_mechanisms as mechanisms
from nemesis import packet_traces
from nemesis.heal import verify_healed
from nemesis.packet import PacketFault
from nemesis.roles import RoleResolver
from nemesis.runner import DEFAULT_TARGETS
from nemesis.schedule import START, build_schedule, load_schedule
from results.plots import new_axes, shade_faults
from results.timeline import read_timeline
from tests.nemesis.striker import cluster_heal, strike_then_sigkill

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
BROKER_PORT = 9092
UDP_PORT = 47123


def fault(cluster) -> PacketFault:
    return PacketFault(RoleResolver(cluster).resolve)


def connect_ms(cluster, from_node: str, to_node: str, tries: int = 5) -> float:
    """The median time from_node takes to open a TCP connection to to_node's broker: one
    round trip (SYN, SYN-ACK)."""
    host = cluster.inventory.node(to_node).host
    probe = ("import socket, statistics, time\n"
             "times = []\n"
             f"for _ in range({tries}):\n"
             "    t = time.monotonic()\n"
             f"    socket.create_connection(({host!r}, {BROKER_PORT}), timeout=10).close()\n"
             "    times.append((time.monotonic() - t) * 1000)\n"
             "print(statistics.median(times))")
    out = cluster.ssh[from_node].exec(f"python3 -c {shlex.quote(probe)}", timeout=60).stdout
    return float(out)


def wait_bound(cluster, node: str, proto: str) -> None:
    """Until the node's listener holds the test port (/proc/net/udp or tcp: port in hex,
    then the unset remote end and the state, 07 an unconnected udp socket, 0A listening)."""
    state = {"udp": "07", "tcp": "0A"}[proto]
    bound = f"grep -q ':{UDP_PORT:04X} 00000000:0000 {state} ' /proc/net/{proto}"
    cluster.ssh[node].exec(f"for i in $(seq 200); do {bound} && exit 0; sleep 0.05; done; "
                           "exit 1", timeout=30)


def listen_then_send(cluster, from_node: str, to_node: str, listen: str, send: str, proto: str,
                     timeout: float) -> str:
    """Runs the `listen` program on to_node, and once its socket is bound the
    `send` program on from_node; returns what the listener printed."""
    got: dict = {}
    listener = threading.Thread(target=lambda: got.update(out=cluster.ssh[to_node].exec(
        f"python3 -c {shlex.quote(listen)}", timeout=timeout).stdout))
    listener.start()
    wait_bound(cluster, to_node, proto)
    cluster.ssh[from_node].exec(f"python3 -c {shlex.quote(send)}", timeout=timeout)
    listener.join()
    return got["out"]


def udp_arrivals(cluster, from_node: str, to_node: str, count: int = 400) -> list[int]:
    """The sequence numbers of the `count` datagrams from_node sends, as to_node
    receives them (in arrival order)."""
    listen = ("import socket\n"
              "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
              f"s.bind(('0.0.0.0', {UDP_PORT})); s.settimeout(2); seen = []\n"
              "try:\n"
              "    while True:\n"
              "        seen.append(s.recv(100).decode())\n"
              "except socket.timeout:\n"
              "    print(' '.join(seen))")
    host = cluster.inventory.node(to_node).host
    send = ("import socket, time\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"for i in range({count}):\n"
            f"    s.sendto(str(i).encode(), ({host!r}, {UDP_PORT})); time.sleep(0.002)")
    return [int(n) for n in listen_then_send(cluster, from_node, to_node, listen, send, "udp", 60).split()]


def udp_received(cluster, from_node: str, to_node: str) -> int:
    return len(udp_arrivals(cluster, from_node, to_node))


def tcp_transfer_s(cluster, from_node: str, to_node: str, size: int = 500_000) -> float:
    """Seconds to_node takes to receive `size` bytes over TCP from from_node, from the
    first byte to the last (the sender's buffers do not count)."""
    listen = ("import socket, time\n"
              "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
              f"s.bind(('0.0.0.0', {UDP_PORT})); s.listen(1); s.settimeout(20)\n"
              "c, _ = s.accept(); c.settimeout(30); got = len(c.recv(65536)); t = time.monotonic()\n"
              "while True:\n"
              "    chunk = c.recv(65536)\n"
              "    if not chunk: break\n"
              "    got += len(chunk)\n"
              "print(got, time.monotonic() - t)")
    host = cluster.inventory.node(to_node).host
    send = ("import socket\n"
            f"c = socket.create_connection(({host!r}, {UDP_PORT}), timeout=30)\n"
            f"c.sendall(b'x' * {size}); c.close()")
    out = listen_then_send(cluster, from_node, to_node, listen, send, "tcp", 90)
    received, seconds = out.split()
    assert int(received) == size
    return float(seconds)


def out_of_order(arrivals: list[int]) -> int:
    """How many datagrams arrived after one sent later than them."""
    highest, late = -1, 0
    for n in arrivals:
        late += n < highest
        highest = max(highest, n)
    return late


def no_traces(cluster) -> dict[str, list[str]]:
    """Our rules, qdiscs and holder per node, seen on the node (not through heal)."""
    return {node: packet_traces.traces_left(cluster, cluster.ssh[node]) for node in cluster.nodes}


def path(value: dict, node: str) -> str:
    """The path the node took. This machine's kernel has no netem: "fallback" here."""
    return value["mechanisms"][node]["path"]


def used(value: dict, node: str) -> list[str]:
    return value["mechanisms"][node]["used"]


def expected_path(mechanism: dict) -> str:
    return "netem" if mechanism["netem"] else "fallback"


def test_delay_slows_the_struck_links_only_and_stop_undoes_it(healed_cluster):
    cluster = healed_cluster
    before = connect_ms(cluster, "n1", "n2")
    packets = fault(cluster)
    value = packets.start(cluster, {"target": "links", "links": [["n1", "n2"], ["n2", "n1"]],
                                    "behaviour": {"delay_ms": 100, "jitter_ms": 5}})
    assert "errors" not in value, value
    assert path(value, "n1") == expected_path(value["mechanisms"]["n1"])
    assert used(value, "n1") == {"fallback": ["nfqueue"], "netem": ["netem"]}[path(value, "n1")]
    assert set(value["mechanisms"]) == {"n1", "n2"}
    delayed = connect_ms(cluster, "n1", "n2")
    assert delayed >= 180 > before + 100, (before, delayed)  # 100 ms each way
    assert connect_ms(cluster, "n1", "n3") < 90  # n1 -> n3 is not struck
    assert "errors" not in packets.stop(cluster)
    assert connect_ms(cluster, "n1", "n2") < 90
    assert no_traces(cluster) == {"n1": [], "n2": [], "n3": []}


def test_loss_drops_a_share_and_rate_throttles(healed_cluster):
    cluster = healed_cluster
    assert udp_received(cluster, "n1", "n2") >= 390
    packets = fault(cluster)
    value = packets.start(cluster, {"target": "one", "nodes": ["n1"],
                                    "behaviour": {"loss_pct": 50, "rate_kbit": 2000}})
    assert "errors" not in value, value
    assert len(value["links"]) == 4  # n1 <-> n2, n1 <-> n3
    # fallback: the sender's htb, and the sender's own ingress loss from n2 and n3
    assert used(value, "n1") == {"fallback": ["htb", "iptables-statistic"],
                                 "netem": ["netem", "htb"]}[path(value, "n1")]
    received = udp_received(cluster, "n1", "n2")
    assert 120 <= received <= 280, received  # 400 sent, half lost
    packets.stop(cluster)
    assert udp_received(cluster, "n1", "n2") >= 390
    # 500 kB through a 1000 kbit/s class: 4 s; unshaped it takes milliseconds
    assert tcp_transfer_s(cluster, "n1", "n2") < 1
    packets.start(cluster, {"target": "links", "links": [["n1", "n2"]],
                            "behaviour": {"rate_kbit": 1000}})
    assert 3 <= tcp_transfer_s(cluster, "n1", "n2") <= 8
    assert tcp_transfer_s(cluster, "n2", "n1") < 1  # the other direction is not struck
    packets.stop(cluster)


def test_duplication_reordering_and_corruption_by_the_holder(healed_cluster):
    cluster = healed_cluster
    baseline = udp_arrivals(cluster, "n2", "n3")
    assert len(baseline) >= 390 and out_of_order(baseline) == 0
    packets = fault(cluster)
    link = {"target": "links", "links": [["n2", "n3"]]}
    value = packets.start(cluster, {**link, "behaviour": {"delay_ms": 40, "reorder_pct": 50,
                                                          "duplicate_pct": 50}})
    assert used(value, "n2") == {"fallback": ["nfqueue"], "netem": ["netem"]}[path(value, "n2")]
    assert used(value, "n3") == []  # the receiver does nothing here
    arrivals = udp_arrivals(cluster, "n2", "n3")
    assert 500 <= len(arrivals) <= 700, len(arrivals)  # 400 sent, half of them twice
    assert set(arrivals) == set(range(400))
    assert out_of_order(arrivals) >= 50, out_of_order(arrivals)  # half overtake the held
    packets.stop(cluster)
    # a flipped bit fails the UDP checksum at the receiver: corruption is loss there
    packets.start(cluster, {**link, "behaviour": {"corrupt_pct": 50}})
    assert 120 <= udp_received(cluster, "n2", "n3") <= 280
    packets.stop(cluster)
    assert no_traces(cluster) == {"n1": [], "n2": [], "n3": []}


STRIKE_AND_WAIT = """
import sys, time
from clusters.cluster import Cluster
from nemesis.packet import PacketFault
cluster = Cluster.open(sys.argv[1], start=False)
value = PacketFault(lambda role: []).start(cluster, {"target": "links",
    "links": [["n2", "n3"], ["n3", "n2"]],
    "behaviour": {"delay_ms": 80, "loss_pct": 10, "rate_kbit": 5000, "duplicate_pct": 5}})
print(repr(value), flush=True)
time.sleep(600)
"""


def left_in_namespace(local, node: str) -> list[str]:
    """Our qdiscs, rules and holder as the namespace itself shows them (not through SSH
    or the harness's own checks)."""
    def run(*cmd: str) -> str:
        return subprocess.run(["ip", "netns", "exec", local.netns(node), *cmd],
                              capture_output=True, text=True, check=True).stdout
    found = [line for line in run("tc", "qdisc", "show").splitlines()
             if mechanisms.HANDLE in line]
    found += [line for line in run("iptables", "-S").splitlines() if "LOGTRIAL-PACKET" in line]
    found += [f"holder pid {pid}" for pid in run("ip", "netns", "pids", local.netns(node)).split()
              if "packet-holder.py" in command_line(pid)]
    return found


def command_line(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:
        return ""  # gone already (the commands that listed it)


def test_heal_after_the_control_process_is_sigkilled(healed_cluster, local_cluster):
    cluster = healed_cluster
    struck = strike_then_sigkill(STRIKE_AND_WAIT, cluster.inventory.path)
    assert "'mechanisms'" in struck and "errors" not in struck, struck
    assert no_traces(cluster)["n2"]  # the dead process left its fault in place
    assert len(left_in_namespace(local_cluster, "n2")) >= 3  # qdisc, rules, holder
    healed = cluster_heal(cluster.inventory.path)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    actions = [line.strip() for line in healed.stdout.splitlines() if line.startswith("  ")]
    assert any("n2: stopped the packet holder" in a for a in actions), actions
    assert any("n3: removed logtrial's packet qdisc" in a for a in actions), actions
    assert any("n2: removed logtrial's packet iptables chains" in a for a in actions), actions
    assert no_traces(cluster) == {"n1": [], "n2": [], "n3": []}
    assert [left_in_namespace(local_cluster, n) for n in cluster.nodes] == [[], [], []]
    assert connect_ms(cluster, "n2", "n3") < 90


def last_packet_event(store: Path) -> str | None:
    """The f of the newest packet event in the run's history so far."""
    events = []
    for history in store.glob("*/*/history.jsonl"):
        lines = history.read_text(encoding="utf-8").splitlines()
        events += [line for line in lines if '"process":"nemesis"' in line and "-packet" in line]
    return json.loads(events[-1])["f"] if events else None


@pytest.mark.slow
def test_a_run_sigkilled_mid_fault_is_healed_by_cluster_heal(healed_cluster, local_cluster,
                                                             tmp_path):
    cluster, store = healed_cluster, tmp_path / "store"
    run = subprocess.Popen([sys.executable, "-m", "harness.cli", "test", "--nodes-file",
                            str(cluster.inventory.path), "--store", str(store), "--time-limit",
                            "40", "--rate", "20", "--concurrency", "2", "--nemesis", "packet",
                            "--nemesis-interval", "4", "--seed", "2", "--leave-db-running",
                            "--no-check", "--no-report", "--hang-timeout", "0"],  # no watchdog: heal by hand
                           cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while last_packet_event(store) != "start-packet" and time.monotonic() < deadline:
            time.sleep(0.1)
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    finally:
        run.kill()
    assert last_packet_event(store) == "start-packet"
    assert any(left_in_namespace(local_cluster, n) for n in cluster.nodes)
    healed = subprocess.run([sys.executable, "-m", "harness.cli", "cluster", "heal",
                             "--inventory", str(cluster.inventory.path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "packet" in healed.stdout
    assert [left_in_namespace(local_cluster, n) for n in cluster.nodes] == [[], [], []]


@pytest.mark.slow
def test_a_run_with_packet_faults_records_and_shades_them(cluster, tmp_path):
    options = TestOptions.from_flat(nodes_file=str(cluster.inventory.path), store=str(tmp_path / "store"),
                          leave_db_running=True, time_limit=30, rate=40, concurrency=4,
                          nemesis=("packet",), nemesis_interval=5, seed=3,
                          recovery_time=5, final_time_limit=60, check=False, report=True)
    result = run_test(options)
    assert result.status == "complete"
    history = result.run_dir / "history.jsonl"
    starts = [e for e in raw_events(history) if e["process"] == "nemesis"
              and e["f"] == "start-packet"]
    assert starts
    for event in starts:
        assert {"behaviour", "links", "mechanisms"} <= set(event["value"]), event
        assert all(m["path"] == expected_path(m) for m in event["value"]["mechanisms"].values())
    # the history replays as the seeded plan: same targets, links and behaviours
    planned = [s.params for s in build_schedule(["packet"], cluster.nodes, 5, 3, DEFAULT_TARGETS,
                                                30) if s.action == START]
    replayed = [s.params for s in load_schedule(history) if s.action == START]
    assert len(replayed) == len(starts) and len(replayed) <= len(planned)
    for plan, replay in zip(planned, replayed):
        assert (plan["target"], plan["behaviour"]) == (replay["target"], replay["behaviour"])
        assert plan.get("links") in (None, replay.get("links"))
        assert plan.get("nodes") in (None, replay.get("nodes"))
    timeline = read_timeline(history)
    assert "packet" in timeline.faults.kinds()
    _, axes = new_axes("ops")
    assert "fault: packet" in [h.get_label() for h in shade_faults(axes, timeline)]
    assert (result.run_dir / "report.html").exists()
    verify_healed(cluster)
