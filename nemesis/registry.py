"""The fault kinds by name, and the history `f` names each one writes."""
from __future__ import annotations

from typing import Callable, Sequence

from nemesis import client_delay
from nemesis.clock import ClockFault
from nemesis import control_link
from nemesis.fault import Fault
from nemesis.kill import KillFault
from nemesis import membership
from nemesis import packet
from nemesis.partition import PartitionFault
from nemesis.pause import PauseFault
from nemesis import producer_state
from nemesis.shapes import SHAPES

FAULT_NAMES = ("pause", "kill", "partition", "clock", "producer-state", "membership", "packet",
               "client-delay", "control-link")
# what `all` means: producer-state is left out, as its truncate and retention modes
# delete records on purpose (expected lost-write/unseen); membership too, as it wipes a
# node's log dir, a KRaft voter's included, which beside kill or pause can lose what a
# static quorum committed (docs/nemesis.md); packet too, so `all` runs stay as they were
# (it slows replication for whole intervals), client-delay (a targeted scenario) and
# control-link (it tests the harness, not Kafka): ask for them by name
BY_NAME_ONLY = ("producer-state", "membership", "packet", "client-delay", "control-link")
ALL_FAULTS = tuple(name for name in FAULT_NAMES if name not in BY_NAME_ONLY)

# history f -> (fault, action): what a recorded nemesis event means when replayed
F_NAMES: dict[str, tuple[str, str]] = {
    "pause": ("pause", "start"), "resume": ("pause", "stop"),
    "kill": ("kill", "start"), "start": ("kill", "stop"),
    "start-partition": ("partition", "start"), "stop-partition": ("partition", "stop"),
    "bump-clock": ("clock", "start"), "strobe-clock": ("clock", "start"),
    "reset-clock": ("clock", "stop"),
    **{f: ("producer-state", "start") for f in producer_state.START_F.values()},
    producer_state.STOP_F: ("producer-state", "stop"),
    **{f: ("membership", "start") for f in membership.START_F.values()},
    **{f: ("membership", "stop") for f in (*membership.STOP_F.values(), membership.IDLE_STOP_F)},
    packet.START_F: ("packet", "start"), packet.STOP_F: ("packet", "stop"),
    client_delay.START_F: ("client-delay", "start"),
    client_delay.STOP_F: ("client-delay", "stop"),
    control_link.CUT_F: ("control-link", "start"), control_link.RESTORE_F: ("control-link", "stop"),
}


def parse_kinds(text: str) -> list[str]:
    """`--nemesis` value -> fault names: a comma list, `all` or `none`.
    Raises ValueError naming the unknown ones and listing the valid names."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if names == ["none"] or not names:
        return []
    if "all" in names:
        return list(ALL_FAULTS)
    unknown = [n for n in names if n not in FAULT_NAMES]
    if unknown:
        raise ValueError(f"unknown fault {', '.join(map(repr, unknown))} "
                         f"(valid: {', '.join(FAULT_NAMES)}, all, none)")
    return list(dict.fromkeys(names))


def make_faults(kinds: Sequence[str], resolve_role: Callable[[str], list[str]],
                partition_clients: bool = False,
                partition_shapes: Sequence[str] | None = None,
                topics: Sequence[str] | None = None,
                op_timeout_s: float = client_delay.DEFAULT_OP_TIMEOUT_S) -> dict[str, Fault]:
    """One fault object per kind (they remember what they struck until stopped)."""
    shape_names = list(partition_shapes or SHAPES)
    makers: dict[str, Callable[[], Fault]] = {
        "pause": lambda: PauseFault(resolve_role),
        "kill": lambda: KillFault(resolve_role),
        "partition": lambda: PartitionFault(partition_clients, shape_names),
        "clock": lambda: ClockFault(resolve_role),
        "producer-state": lambda: producer_state.ProducerStateFault(topics),
        "membership": lambda: membership.MembershipFault(topics),
        "packet": lambda: packet.PacketFault(resolve_role),
        "client-delay": lambda: client_delay.ClientDelayFault(resolve_role, op_timeout_s),
        "control-link": lambda: control_link.ControlLinkFault(resolve_role),
    }
    return {kind: makers[kind]() for kind in kinds}
