"""The fault kinds, listed once. Each is declared in its own module (nemesis/kind.py says
what a kind holds); every table about faults is read from this list. Adding a fault kind
is one new module with its KIND and one line here."""
from __future__ import annotations

from typing import Sequence

from nemesis import (client_delay, clock, control_link, kill, membership, packet, partition, pause,
                     power, producer_state)
from nemesis.fault import Fault
from nemesis.kind import FaultContext, FaultKind

KINDS: tuple[FaultKind, ...] = (
    pause.KIND,
    kill.KIND,
    partition.KIND,
    clock.KIND,
    producer_state.KIND,
    membership.KIND,
    packet.KIND,
    client_delay.KIND,
    control_link.KIND,
    power.KIND,
)
BY_NAME: dict[str, FaultKind] = {kind.name: kind for kind in KINDS}
FAULT_NAMES: tuple[str, ...] = tuple(BY_NAME)
# what `--nemesis all` means: each kind left out says why (FaultKind.by_name_only)
ALL_FAULTS: tuple[str, ...] = tuple(kind.name for kind in KINDS if kind.in_all)
BY_NAME_ONLY: tuple[str, ...] = tuple(kind.name for kind in KINDS if not kind.in_all)
# history f -> (fault, action): what a recorded nemesis event means when replayed
F_NAMES: dict[str, tuple[str, str]] = {f: (kind.name, action) for kind in KINDS
                                       for f, action in kind.history_f.items()}


def fault_kind(name: str) -> FaultKind:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown fault {name!r} (valid: {', '.join(FAULT_NAMES)})") from None


def parse_kinds(text: str) -> list[str]:
    """`--nemesis` value -> fault names: a comma list, `all` or `none`.
    Raises ValueError naming the unknown ones and listing the valid names."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if names == ["none"] or not names:
        return []
    if "all" in names:
        return list(ALL_FAULTS)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown fault {', '.join(map(repr, unknown))} "
                         f"(valid: {', '.join(FAULT_NAMES)}, all, none)")
    return list(dict.fromkeys(names))


def db_settings(kinds: Sequence[str]) -> dict[str, str]:
    """The database settings the faults `kinds` need the cluster to run with."""
    return {key: value for name in kinds for key, value in (fault_kind(name).db_settings or {}).items()}


def make_faults(kinds: Sequence[str], context: FaultContext) -> dict[str, Fault]:
    """One fault object per kind (they remember what they struck until stopped)."""
    return {name: fault_kind(name).make(context) for name in kinds}
