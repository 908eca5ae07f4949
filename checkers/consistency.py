"""Consistency models and the anomalies each proscribes (Adya, as in Elle).

A model proscribes its own anomalies plus those of every model it implies
(every weaker model). `violated()` names the weakest violated models (`not`)
and the stronger ones that therefore fail too (`also_not`), like Elle.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

ORDER_VARIANTS = ("G0", "G1c", "G-single", "G2-item")


@dataclass(frozen=True)
class Model:
    implies: tuple[str, ...]        # weaker models this one includes
    proscribes: frozenset[str]      # anomalies it forbids itself


MODELS: dict[str, Model] = {
    # Broken-storage anomalies: no model, however weak, allows them.
    "read-uncommitted": Model((), frozenset({
        "G0", "internal", "duplicate-elements", "incompatible-order", "future-read"})),
    "read-committed": Model(("read-uncommitted",), frozenset({
        "G1a", "G1b", "G1c", "dirty-update"})),
    "cursor-stability": Model(("read-committed",), frozenset({"lost-update"})),
    # PL-2.99: no item anti-dependency cycles, whatever their number of rw edges.
    "repeatable-read": Model(("cursor-stability",), frozenset({"G-single", "G2-item"})),
    "snapshot-isolation": Model(("cursor-stability",), frozenset({"G-single"})),
    "serializable": Model(("repeatable-read", "snapshot-isolation"), frozenset()),
    "strong-session-serializable": Model(("serializable",), frozenset(
        f"{a}-process" for a in ORDER_VARIANTS)),
    "strict-serializable": Model(("strong-session-serializable",), frozenset(
        f"{a}-realtime" for a in ORDER_VARIANTS)),
}


def check_model(name: str) -> str:
    if name not in MODELS:
        raise ValueError(f"unknown consistency model {name!r}; known: {', '.join(MODELS)}")
    return name


@cache
def weaker(name: str) -> frozenset[str]:
    """Every model `name` implies, itself included."""
    found = {name}
    for implied in MODELS[check_model(name)].implies:
        found |= weaker(implied)
    return frozenset(found)


def proscribed(name: str) -> frozenset[str]:
    """Every anomaly type the model forbids."""
    return frozenset().union(*(MODELS[m].proscribes for m in weaker(name)))


def violated(anomaly_types) -> tuple[list[str], list[str]]:
    """(not, also_not): the weakest models some found anomaly violates, and
    the other violated models (stronger ones)."""
    found = set(anomaly_types)
    bad = {m for m in MODELS if proscribed(m) & found}
    weakest = sorted(m for m in bad if not any(w in bad for w in weaker(m) - {m}))
    return weakest, sorted(bad - set(weakest))
