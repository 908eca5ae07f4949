"""`logtrial doctor --nodes-file`: what each node of an inventory needs, asked over SSH,
so that a missing tool is named before a run rather than as a fault that fails halfway
(a packet fault without python3, a clock fault without libfaketime)."""
from __future__ import annotations

import shlex
from pathlib import Path

from clusters.nodes.faketime import LIBRARY as FAKETIME_LIB
from clusters.nodes.inventory import load_inventory
from clusters.nodes.ssh import NodeSession, SSHError, SSHPool
from clusters.system_kind import SystemKind, Tools
from clusters.systems import kind_of
from harness.commands.doctor_check import Check
from nemesis.packet_detect import detect as detect_packet_paths

# command on every node -> what needs it; required ones every run needs
NODE_TOOLS = {
    "setsid": ("daemons (util-linux)", True), "nohup": ("daemons (coreutils)", True),
    "timeout": ("bounded remote commands (coreutils)", True),
    "iptables": ("partition, control-link, client-delay faults", True),
    "python3": ("packet delay and client-delay (the NFQUEUE holder)", False),
    "tc": ("packet rate limits and netem (iproute2)", False),
    "fusermount3": ("the power fault's layer, powerfs (apt install fuse3)", False),
}
PRESENT = "present"


def node_tools(kind: SystemKind, role: str | None) -> Tools:
    """The tools a node needs: every node's, and what its system runs on a node of its
    role (SystemKind.node_tools)."""
    return {**NODE_TOOLS, **kind.node_tools(role)}


def tools_script(tools: Tools) -> str:
    """One remote command that prints `name path` per tool found, and the library."""
    lookups = [f"p=$(command -v {t} || ls /usr/sbin/{t} /sbin/{t} 2>/dev/null | head -1); "
               f"echo {t} ${{p:-none}}" for t in tools]
    lookups.append(f"[ -e {shlex.quote(FAKETIME_LIB)} ] && echo libfaketime {PRESENT} "
                   f"|| echo libfaketime none")
    lookups.append(f"[ -c /dev/fuse ] && echo /dev/fuse {PRESENT} || echo /dev/fuse none")
    return "; ".join(lookups)


def parse_tools(stdout: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


def node_checks(session: NodeSession, tools: Tools) -> list[Check]:
    """What one node has: its tools, libfaketime, and the path packet faults would take."""
    found = parse_tools(session.exec(tools_script(tools), timeout=30, check=False).stdout)
    return checks_from(found, detect_packet_paths(session), tools)


def checks_from(found: dict[str, str], paths: dict,
                tools: Tools) -> list[Check]:
    """The report's lines for what a node was found to have (`parse_tools`, and
    nemesis/packet_detect.py's `detect`)."""
    checks = []
    for tool, (need, required) in tools.items():
        where = found.get(tool, "none")
        checks.append(Check(tool, where != "none",
                            where if where != "none" else f"missing: needed by {need}", required))
    has_faketime = found.get("libfaketime") == PRESENT
    checks.append(Check("libfaketime", has_faketime, FAKETIME_LIB if has_faketime
                        else "missing: needed by clock faults (apt install libfaketime)", False))
    has_fuse = found.get("/dev/fuse") == PRESENT and found.get("fusermount3", "none") != "none"
    checks.append(Check("FUSE", has_fuse, "/dev/fuse and fusermount3" if has_fuse
                        else "missing /dev/fuse or fusermount3: needed by the power fault", False))
    checks.append(Check("packet faults", paths["netem"] or (paths["htb"] and paths["nfqueue"]),
                        f"path {paths['path']} (netem {paths['netem']}, htb {paths['htb']}, "
                        f"nfqueue {paths['nfqueue']})", False))
    return checks


def check_nodes(inventory_path: str | Path, insecure_host_keys: bool = False) -> dict[str, list[Check]]:
    """Every node's checks; a node that cannot be reached gets one failed check saying why."""
    inventory = load_inventory(inventory_path)
    kind = kind_of(inventory)
    pool = SSHPool(inventory, insecure_host_keys=insecure_host_keys)
    results: dict[str, list[Check]] = {}
    try:
        for node in inventory.nodes:
            try:
                results[node.name] = node_checks(pool[node.name], node_tools(kind, node.role))
            except SSHError as e:
                results[node.name] = [Check("ssh", False, str(e))]
    finally:
        pool.close()
    return results
