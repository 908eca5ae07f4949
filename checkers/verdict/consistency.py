"""Consistency models and the anomalies each proscribes (Adya, as in Elle).

A model proscribes its own anomalies plus those of every model it implies
(every weaker model). `violated()` names the weakest violated models (`not`)
and the stronger ones that therefore fail too (`also_not`), like Elle.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from checkers.verdict.taxonomy import TYPES

@dataclass(frozen=True)
class Model:
    implies: tuple[str, ...]        # weaker models this one includes


# Which anomaly each model forbids is declared with the anomaly, in
# checkers/verdict/taxonomy.py (`forbidden_by`); here only how models relate.
MODELS: dict[str, Model] = {
    "read-uncommitted": Model(()),
    "read-committed": Model(("read-uncommitted",)),
    "cursor-stability": Model(("read-committed",)),
    "repeatable-read": Model(("cursor-stability",)),
    "snapshot-isolation": Model(("cursor-stability",)),
    "serializable": Model(("repeatable-read", "snapshot-isolation")),
    "strong-session-serializable": Model(("serializable",)),
    "strict-serializable": Model(("strong-session-serializable",)),
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


@cache
def proscribed(name: str) -> frozenset[str]:
    """Every anomaly type the model forbids (its own and its weaker models')."""
    models = weaker(name)
    return frozenset(t.name for t in TYPES.values() if models & set(t.forbidden_by))


def violated(anomaly_types) -> tuple[list[str], list[str]]:
    """(not, also_not): the weakest models some found anomaly violates, and
    the other violated models (stronger ones)."""
    found = set(anomaly_types)
    bad = {m for m in MODELS if proscribed(m) & found}
    weakest = sorted(m for m in bad if not any(w in bad for w in weaker(m) - {m}))
    return weakest, sorted(bad - set(weakest))
