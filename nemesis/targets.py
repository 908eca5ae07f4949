"""Which nodes a process fault (pause, kill, clock) strikes.

`one`, `minority`, `majority`, `all` are chosen from the node list by the seeded rng,
so they are part of the (pure) schedule. `controller` (the active KRaft controller)
and `leader` (the leader of a partition under test) are roles: only the running
cluster knows who holds them, so they are resolved when the fault strikes.
"""
from __future__ import annotations

import random
from typing import Sequence

COUNT_TARGETS = ("one", "minority", "majority", "all")
ROLE_TARGETS = ("controller", "leader")
TARGETS = COUNT_TARGETS + ROLE_TARGETS


def parse_targets(value: str) -> list[str]:
    """`one,majority` -> its names, once each; ValueError naming an unknown one."""
    names = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [n for n in names if n not in TARGETS]
    if unknown or not names:
        what = f"unknown target {', '.join(map(repr, unknown))}" if unknown else "no target"
        raise ValueError(f"{what} (valid: {', '.join(TARGETS)})")
    return list(dict.fromkeys(names))


def count_for(spec: str, n: int) -> int:
    """How many of n nodes a count target strikes (minority: the largest minority)."""
    return {"one": 1, "minority": max(1, (n - 1) // 2), "majority": n // 2 + 1, "all": n}[spec]


def choose(spec: str, nodes: Sequence[str], rng: random.Random) -> list[str] | None:
    """The struck nodes for a count target, or None for a role (resolved at strike time)."""
    if spec in ROLE_TARGETS:
        return None
    if spec not in COUNT_TARGETS:
        raise ValueError(f"unknown target {spec!r} (valid: {', '.join(TARGETS)})")
    return sorted(rng.sample(sorted(nodes), count_for(spec, len(nodes))))
