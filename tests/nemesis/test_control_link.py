"""control-link on the shared cluster: the control node's SSH link to a node cut and
restored (iptables on this machine), the cluster's and the clients' traffic untouched;
SSH calls across the cut fail in bounded time and the faults that needed them are
recorded `info` with their error; a run with the fault, and with its link lost again
from outside during its heal, still ends with a verdict."""
from __future__ import annotations

import json
import threading
import time

import pytest
from click.testing import CliRunner

from checkers.history.stream import raw_events
from clusters.nodes.ssh import SSHError
from harness.cli import main
from harness.runner import TestOptions, run_test
from clusters.nodes.inventory import load_inventory
from nemesis.control_link import ControlLinkFault, chain_for, cut, cut_nodes, restore
from nemesis.heal import heal, verify_healed
from nemesis.pause import PauseFault
from nemesis.roles import RoleResolver

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SSH_BOUND_S = 30  # an SSH call across a cut: a session open (10 s) and a reconnect (10 s), then the error


def test_a_cut_link_fails_ssh_in_bounded_time_and_spares_kafka(healed_cluster):
    cluster = healed_cluster
    fault = ControlLinkFault(RoleResolver(cluster).resolve)
    assert fault.start(cluster, {"target": "one", "nodes": ["n2"]}) == {"target": "one", "nodes": ["n2"]}
    assert cut_nodes(cluster.inventory) == ["n2"]
    started = time.monotonic()
    with pytest.raises(SSHError, match="node n2"):
        cluster.ssh["n2"].exec("true", timeout=5)
    assert time.monotonic() - started < SSH_BOUND_S
    assert cluster.ssh["n1"].exec("echo up").stdout == "up\n"  # the other links stay
    assert cluster.db.serves_metadata("n2")  # Kafka's port: the clients' path is not cut
    # a fault on the cut node meanwhile: its error, in bounded time, not a hang
    started = time.monotonic()
    value = PauseFault(RoleResolver(cluster).resolve).start(cluster, {"target": "one", "nodes": ["n2"]})
    assert "SSHError" in value["errors"]["n2"] and time.monotonic() - started < SSH_BOUND_S
    assert fault.stop(cluster) == {"nodes": ["n2"]}
    assert cluster.ssh["n2"].exec("echo back").stdout == "back\n"
    # left cut, the heal restores it first of all
    fault.start(cluster, {"target": "one", "nodes": ["n3"]})
    assert heal(cluster)[0] == "n3: restored the control node's SSH link"
    verify_healed(cluster)


ALL = {"target": "all", "nodes": ["n1", "n2", "n3"]}
# every link cut at 0.5 s, a pause of every broker at 1 s (it cannot reach them: recorded
# `info` with its error once SSH gives up, within SSH_BOUND_S), the links back at 26 s,
# the main phase over at 29 s
SCHEDULE = [("cut-control-link", {**ALL, "at": 0.5}), ("pause", {**ALL, "at": 1.0}),
            ("restore-control-link", {"nodes": ALL["nodes"], "at": 26.0}),
            ("resume", {"nodes": ALL["nodes"], "at": 27.0})]
TIME_LIMIT = 29.0


def write_schedule(path) -> None:
    path.write_text("".join(json.dumps({"index": i, "time": int(value["at"] * 1e9), "type": "info",
                                        "process": "nemesis", "f": f, "value": value}) + "\n"
                            for i, (f, value) in enumerate(SCHEDULE)))


def cut_before_heal(cluster, store, done: threading.Event, did: list, seconds: float = 20.0) -> None:
    """From outside the run: n1's SSH link lost a second before the main phase ends,
    for `seconds`, over the run's heal (a chain of the test's own, which the heal does
    not know: a real outage, not the fault's)."""
    chain = chain_for(cluster.inventory, "TEST")
    try:
        main_since = None
        while not done.is_set():
            phases = [json.loads(p.read_text()).get("phase") for p in store.glob("*/*/test.json")]
            main_since = main_since or (time.monotonic() if "main" in phases else None)
            if main_since and time.monotonic() - main_since > TIME_LIMIT - 1:
                cut(cluster.inventory, "n1", chain)
                did.append(phases)
                done.wait(seconds)
                return
            time.sleep(0.2)
    finally:
        restore(cluster.inventory, chain)


def test_a_run_with_the_fault_and_a_link_lost_over_its_heal_gets_its_verdict(healed_cluster, tmp_path):
    cluster = healed_cluster
    store = tmp_path / "store"
    write_schedule(tmp_path / "schedule.jsonl")
    done, did = threading.Event(), []
    outsider = threading.Thread(target=cut_before_heal, args=(cluster, store, done, did))
    outsider.start()
    try:
        result = run_test(TestOptions.from_flat(
            nodes_file=str(cluster.inventory.path), store=str(store), leave_db_running=True,
            time_limit=TIME_LIMIT, rate=30, concurrency=3, nemesis_schedule=str(tmp_path / "schedule.jsonl"),
            recovery_time=2, final_time_limit=30, engine="local", report=False))
    finally:
        done.set()
        outsider.join()
    assert result.status == "complete" and result.valid in (True, False), result
    events = [e for e in raw_events(result.run_dir / "history.jsonl") if e["process"] == "nemesis"]
    assert [e["f"] for e in events][:2] == ["cut-control-link", "pause"]
    (pause,) = [e for e in events if e["f"] == "pause"]
    assert pause["type"] == "info" and pause["error"][0] == "nemesis-error"
    assert set(pause["value"]["errors"]) == {"n1", "n2", "n3"}
    assert did, "the link was never lost from outside"
    assert events[-1]["f"] == "heal"  # the heal outlasted the lost link, and said so
    verify_healed(cluster)


def test_cluster_heal_restores_a_cut_link_left_by_a_killed_run(healed_cluster, local_cluster):
    """A run killed while the link to a node was cut leaves the cut on this machine:
    `cluster heal` restores it before it connects to the nodes, which would fail on it."""
    cluster = healed_cluster
    cut(cluster.inventory, "n2")   # as ControlLinkFault.start leaves it: the cluster's own chain
    try:
        result = CliRunner().invoke(main, ["cluster", "heal", "--name", local_cluster.name],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert "n2: restored the control node's SSH link" in result.output
        assert cut_nodes(cluster.inventory) == []
        assert cluster.ssh["n2"].exec("echo back").stdout == "back\n"
    finally:
        restore(cluster.inventory)


def test_cluster_down_removes_a_cut_link_left_on_this_machine(fresh_cluster):
    """The cut lives in this machine's OUTPUT chain, outside the cluster's namespaces:
    `down` removes it too, and `down` again has nothing left to do."""
    local = fresh_cluster(nodes=1, suffix="cl")
    inventory = load_inventory(local.inventory_path)
    cut(inventory, "n1")
    assert cut_nodes(inventory) == ["n1"]
    result = CliRunner().invoke(main, ["cluster", "down", "--name", local.name], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "n1: restored the control node's SSH link" in result.output
    assert cut_nodes(inventory) == []
