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
so a heal finds it on the node alone and touches nothing else there
(nemesis/packet_traces.py); what a node has is probed by nemesis/packet_detect.py.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Sequence

from clusters.nodes.ssh import NodeSession
from nemesis import iptables_chain as chains
from nemesis import packet_behaviour as behaviours

HANDLE = "4c54:"            # "LT": our root qdisc on any device
CLASS = "4c54:1"
LEAF = "4c55:"
OUT_CHAIN = "LOGTRIAL-PACKET"      # NFQUEUE, from OUTPUT
IN_CHAIN = "LOGTRIAL-PACKET-IN"    # loss, from INPUT
QUEUE = 19540
MARK = 0x4C54                       # the holder's duplicates: our OUTPUT chain lets them by
TC = "tc"
HOLDER_SOURCE = Path(__file__).with_name("packet_holder.py")


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


def queue_rules(hosts: Sequence[str]) -> list[str]:
    return [f"-m mark --mark {MARK:#x} -j RETURN"] + [
        f"-d {h} -j NFQUEUE --queue-num {QUEUE} --queue-bypass" for h in hosts]


def loss_rules(sources: Sequence[str], loss_pct: float) -> list[str]:
    return [f"-s {h} -m statistic --mode random --probability {loss_pct / 100:.4f} -j DROP"
            for h in sources]


def holder_paths(session: NodeSession, name: str = "packet-holder") -> tuple[str, str, str]:
    """(script, pid file, log) of the node's holder called `name` (each fault kind that
    holds packets runs its own, on its own queue)."""
    home = session.node.home
    return f"{home}/{name}.py", f"{home}/{name}.pid", f"{home}/{name}.log"


def start_holder(session: NodeSession, behaviour: dict, queue: int = QUEUE, mark: int = MARK,
                 name: str = "packet-holder") -> None:
    script, pid_file, log_file = holder_paths(session, name)
    session.exec(f"mkdir -p {shlex.quote(session.node.home)}", timeout=15)
    session.upload(HOLDER_SOURCE, script)
    session.start_daemon(f"python3 {shlex.quote(script)} --queue {queue} --mark {mark:#x} "
                         f"{behaviours.holder_args(behaviour)}", pid_file, log_file)
    # bound before the rule sends it packets (else --queue-bypass lets them by unheld)
    check = f"grep -q '^ *{queue} ' /proc/net/netfilter/nfnetlink_queue"
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
        session.exec(chains.create_script("OUTPUT", OUT_CHAIN, queue_rules(hosts)), timeout=30)
        used.append("nfqueue")
    return used


def drop_ingress(session: NodeSession, sources: Sequence[str], loss_pct: float) -> list[str]:
    """Drops a share of what the node receives from `sources` (fallback loss)."""
    session.exec(chains.create_script("INPUT", IN_CHAIN, loss_rules(sources, loss_pct)),
                 timeout=30)
    return ["iptables-statistic"]
