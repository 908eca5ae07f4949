"""What a node's kernel offers the packet fault: one small probe per mechanism, and the
path its egress takes (nemesis/packet_mechanisms.py)."""
from __future__ import annotations

from clusters.nodes.ssh import NodeSession
from nemesis.packet_mechanisms import HANDLE, TC


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
