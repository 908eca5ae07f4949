"""How the packet fault shapes one node's traffic, and how a heal finds and undoes it.

A node shapes what it SENDS on a struck link (egress), by one of two paths, chosen per
node by what its kernel has:

- netem: an htb root qdisc (handle 4c54:) whose one class (the behaviour's rate, or
  unlimited) holds a netem qdisc; u32 filters send the struck destinations there, all
  other traffic (SSH, clients) passes unshaped.
- fallback (no netem): the same htb class for the rate; delay, jitter, reordering,
  duplication and corruption by NFQUEUE (iptables chain LOGTRIAL-PACKET from OUTPUT,
  `--queue-bypass`) and the holder (nemesis/packet_holder.py) under a pid file; loss by
  the RECEIVING node (chain LOGTRIAL-PACKET-IN from INPUT, `-m statistic`), so a lost
  packet is lost on the wire rather than refused to its sender.

Everything carries a name of ours (the qdisc handle, the chains, the holder's pid file),
so a heal finds it on the node alone and touches nothing else there.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Sequence

from clusters.ssh import NodeSession
from nemesis import packet_behaviour as behaviours
from nemesis.fault import NodeTraces

HANDLE = "4c54:"            # "LT": our root qdisc on any device
CLASS = "4c54:1"
LEAF = "4c55:"
OUT_CHAIN = "LOGTRIAL-PACKET"      # NFQUEUE, from OUTPUT
IN_CHAIN = "LOGTRIAL-PACKET-IN"    # loss, from INPUT
QUEUE = 19540
MARK = 0x4C54                       # the holder's duplicates: our OUTPUT chain lets them by
IPTABLES = "iptables -w 10"
TC = "tc"
HOLDER_SOURCE = Path(__file__).with_name("packet_holder.py")
HOLDER_STOP_TIMEOUT = 10


# -- detection: one small probe per mechanism ----------------------------------------------
def _probe_qdisc(session: NodeSession, kind: str) -> bool:
    """Whether the kernel has qdisc `kind`: added to lo under our handle and removed at
    once (a heal removes it too if we die in between)."""
    script = (f"{TC} qdisc add dev lo root handle {HANDLE} {kind} >/dev/null 2>&1 && "
              f"{TC} qdisc del dev lo root handle {HANDLE} && echo yes")
    return session.exec(script, check=False, timeout=15).stdout.strip() == "yes"


def netem_available(session: NodeSession) -> bool:
    return _probe_qdisc(session, "netem")


def htb_available(session: NodeSession) -> bool:
    return _probe_qdisc(session, "htb")


def nfqueue_available(session: NodeSession) -> bool:
    """nfnetlink_queue in the kernel and a python3 to run the holder."""
    script = ("{ [ -e /proc/net/netfilter/nfnetlink_queue ] || modprobe nfnetlink_queue; } "
              ">/dev/null 2>&1; [ -e /proc/net/netfilter/nfnetlink_queue ] && "
              "command -v python3 >/dev/null && echo yes")
    return session.exec(script, check=False, timeout=15).stdout.strip() == "yes"


def detect(session: NodeSession) -> dict:
    """What the node has, and so the path its egress takes."""
    found = {"netem": netem_available(session), "htb": htb_available(session),
             "nfqueue": nfqueue_available(session)}
    return {"path": "netem" if found["netem"] else "fallback", **found}


# -- what one node does ------------------------------------------------------------------
def devices(session: NodeSession, hosts: Sequence[str]) -> dict[str, list[str]]:
    """The struck destinations grouped by the device that reaches them."""
    script = "; ".join(f"ip -o route get {shlex.quote(h)}" for h in hosts)
    found: dict[str, list[str]] = {}
    for host, line in zip(hosts, session.exec(script, timeout=15).stdout.splitlines()):
        match = re.search(r"\bdev (\S+)", line)
        if not match:
            raise RuntimeError(f"{session.node.name}: no route to {host}: {line}")
        found.setdefault(match.group(1), []).append(host)
    return found


def qdisc_script(dev: str, hosts: Sequence[str], behaviour: dict, netem: bool) -> str:
    """htb root, one class, netem under it (netem path), filters for `hosts`."""
    rate = behaviour.get("rate_kbit") or behaviours.UNLIMITED_KBIT
    steps = [f"{TC} qdisc add dev {dev} root handle {HANDLE} htb",
             f"{TC} class add dev {dev} parent {HANDLE} classid {CLASS} htb rate {rate}kbit"]
    args = behaviours.netem_args(behaviour)
    if netem and args:
        steps.append(f"{TC} qdisc add dev {dev} parent {CLASS} handle {LEAF} netem {args}")
    steps += [f"{TC} filter add dev {dev} parent {HANDLE} protocol ip prio 1 u32 "
              f"match ip dst {h}/32 flowid {CLASS}" for h in hosts]
    return " && ".join(steps)


def chain_script(hook: str, chain: str, rules: Sequence[str]) -> str:
    """(Re)creates `chain` with `rules`, jumped to from the top of `hook`."""
    steps = [f"({IPTABLES} -N {chain} 2>/dev/null || {IPTABLES} -F {chain})",
             f"({IPTABLES} -C {hook} -j {chain} 2>/dev/null || {IPTABLES} -I {hook} 1 -j {chain})"]
    steps += [f"{IPTABLES} -A {chain} {rule}" for rule in rules]
    return " && ".join(steps)


def queue_rules(hosts: Sequence[str]) -> list[str]:
    return [f"-m mark --mark {MARK:#x} -j RETURN"] + [
        f"-d {h} -j NFQUEUE --queue-num {QUEUE} --queue-bypass" for h in hosts]


def loss_rules(sources: Sequence[str], loss_pct: float) -> list[str]:
    return [f"-s {h} -m statistic --mode random --probability {loss_pct / 100:.4f} -j DROP"
            for h in sources]


def holder_paths(session: NodeSession) -> tuple[str, str, str]:
    """(script, pid file, log) of the node's holder."""
    home = session.node.home
    return f"{home}/packet-holder.py", f"{home}/packet-holder.pid", f"{home}/packet-holder.log"


def start_holder(session: NodeSession, behaviour: dict) -> None:
    script, pid_file, log_file = holder_paths(session)
    session.exec(f"mkdir -p {shlex.quote(session.node.home)}", timeout=15)
    session.upload(HOLDER_SOURCE, script)
    session.start_daemon(f"python3 {shlex.quote(script)} --queue {QUEUE} --mark {MARK:#x} "
                         f"{behaviours.holder_args(behaviour)}", pid_file, log_file)
    # bound before the rule sends it packets (else --queue-bypass lets them by unheld)
    check = f"grep -q '^ *{QUEUE} ' /proc/net/netfilter/nfnetlink_queue"
    session.exec(f"for i in $(seq 100); do {check} && exit 0; sleep 0.05; done; exit 1",
                 timeout=15)


def shape_egress(session: NodeSession, hosts: Sequence[str], behaviour: dict,
                 found: dict) -> list[str]:
    """Shapes what the node sends to `hosts`; returns the mechanisms it used."""
    netem = found["path"] == "netem"
    used = []
    needs_qdisc = behaviour.get("rate_kbit") or (netem and behaviours.netem_args(behaviour))
    if needs_qdisc:
        if not found["htb"]:
            raise RuntimeError(f"{session.node.name}: no htb qdisc in this kernel")
        for dev, dests in devices(session, hosts).items():
            session.exec(qdisc_script(dev, dests, behaviour, netem), timeout=30)
        used += ["netem"] if netem else []
        used += ["htb"] if behaviour.get("rate_kbit") else []
    if not netem and behaviours.held(behaviour):
        if not found["nfqueue"]:
            raise RuntimeError(f"{session.node.name}: neither netem nor NFQUEUE (with "
                               "python3) here: cannot delay, reorder, duplicate or corrupt")
        start_holder(session, behaviour)
        session.exec(chain_script("OUTPUT", OUT_CHAIN, queue_rules(hosts)), timeout=30)
        used.append("nfqueue")
    return used


def drop_ingress(session: NodeSession, sources: Sequence[str], loss_pct: float) -> list[str]:
    """Drops a share of what the node receives from `sources` (fallback loss)."""
    session.exec(chain_script("INPUT", IN_CHAIN, loss_rules(sources, loss_pct)), timeout=30)
    return ["iptables-statistic"]


# -- traces --------------------------------------------------------------------------------
OUR_QDISCS = f"{TC} qdisc show 2>/dev/null | grep ' {HANDLE} .*root' || true"
OUR_RULES = (f"{IPTABLES} -S 2>/dev/null | grep -e {shlex.quote(OUT_CHAIN)} "
             f"-e {shlex.quote(IN_CHAIN)} || true")


def _chain_heal(hook: str, chain: str) -> str:
    return (f"while {IPTABLES} -D {hook} -j {chain} 2>/dev/null; do :; done; "
            f"{IPTABLES} -F {chain} 2>/dev/null; {IPTABLES} -X {chain} 2>/dev/null")


# rules first: once no rule queues, stopping the holder can release everything it held
RULES_HEAL = f"{_chain_heal('OUTPUT', OUT_CHAIN)}; {_chain_heal('INPUT', IN_CHAIN)}; true"


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _qdisc_devices(listing: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r" dev (\S+) root", listing)]


def stop_holder(session: NodeSession) -> bool:
    """TERM to the holder (it releases every held packet), KILL if it hangs; True if one
    was running."""
    _, pid_file, _ = holder_paths(session)
    if not session.signal(pid_file, "TERM"):
        return False
    if not session.wait_exit(pid_file, HOLDER_STOP_TIMEOUT):
        session.signal(pid_file, "KILL")
        session.wait_exit(pid_file, HOLDER_STOP_TIMEOUT)
    return True


def undo_traces(cluster, session: NodeSession) -> list[str]:
    """Removes our chains, stops the holder, deletes our root qdiscs."""
    node, actions = session.node.name, []
    found = session.exec(f"{OUR_RULES}; {OUR_QDISCS}; {RULES_HEAL}", timeout=30).stdout
    rules = [line for line in _lines(found) if line.startswith("-")]
    if rules:
        actions.append(f"{node}: removed logtrial's packet iptables chains ({len(rules)} rules)")
    if stop_holder(session):
        actions.append(f"{node}: stopped the packet holder (held packets released)")
    for dev in _qdisc_devices(found):
        session.exec(f"{TC} qdisc del dev {dev} root handle {HANDLE}", check=False, timeout=15)
        actions.append(f"{node}: removed logtrial's packet qdisc on {dev}")
    return actions


def traces_left(cluster, session: NodeSession) -> list[str]:
    found = _lines(session.exec(f"{OUR_RULES}; {OUR_QDISCS}", timeout=30).stdout)
    problems = [f"logtrial's packet rule remains: {line}" for line in found if line.startswith("-")]
    problems += [f"logtrial's packet qdisc remains: {line}" for line in found
                 if line.startswith("qdisc")]
    if session.pid_alive(holder_paths(session)[1]):
        problems.append("packet holder still running")
    return problems


TRACES = NodeTraces(undo=undo_traces, left=traces_left)
