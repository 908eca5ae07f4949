"""The packet fault's traces on one node, found and undone from the node alone (the
process that struck may be dead): our iptables chains, the holder under its pid file,
root qdiscs with our handle."""
from __future__ import annotations

import re

from clusters.nodes.ssh import NodeSession
from nemesis import iptables_chain as chains
from nemesis.fault import NodeTraces
from nemesis.packet_mechanisms import HANDLE, IN_CHAIN, OUT_CHAIN, TC, holder_paths

HOLDER_STOP_TIMEOUT = 10
OUR_QDISCS = f"{TC} qdisc show 2>/dev/null | grep ' {HANDLE} .*root' || true"
OUR_RULES = chains.listing_script(OUT_CHAIN, IN_CHAIN)
# rules first: once no rule queues, stopping the holder can release everything it held
RULES_HEAL = (f"{chains.remove_script('OUTPUT', OUT_CHAIN)}; "
              f"{chains.remove_script('INPUT', IN_CHAIN)}")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _qdisc_devices(listing: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r" dev (\S+) root", listing)]


def stop_holder(session: NodeSession, name: str = "packet-holder") -> bool:
    """TERM to the holder `name` (it releases every held packet), KILL if it hangs; True
    if one was running."""
    _, pid_file, _ = holder_paths(session, name)
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


TRACES = NodeTraces(undo=undo_traces, left=traces_left, network=True)
