"""Consistency models: how they relate, and the anomalies each proscribes.

The lattice is the one Elle checks against (elle.consistency-model), drawn
from Adya ("Weak Consistency"; Adya, Liskov, O'Neil), Bailis et al. ("Highly
Available Transactions"), Cerone et al. ("A Framework for Transactional
Consistency Models with Atomic Visibility"), Daudjee and Salem, and
Zuikeviciute: model -> the weaker models it implies. A history that satisfies
a model satisfies every model it implies.

Which anomaly each model forbids is declared with the anomaly, in
checkers/verdict/taxonomy.py (`forbidden_by`: the weakest models that forbid
it). A model proscribes the anomalies of every model it implies, itself
included. `violated()` names the weakest violated models (`not`) and the
stronger ones that therefore fail too (`also_not`), like Elle's boundary.

Models about single objects (linearizable, sequential, causal, PRAM and the
session guarantees) are in the lattice because Elle's are, so their names are
accepted; no anomaly logtrial finds is declared against them alone.
"""

from __future__ import annotations

from functools import cache

from checkers.verdict.taxonomy import TYPES

DEFAULT_MODEL = "strict-serializable"

# model -> the weaker models it implies (one step; the rest follows)
MODELS: dict[str, tuple[str, ...]] = {
    # Adya's and SQL's ladder
    "read-uncommitted": (),
    "read-committed": ("read-uncommitted",),
    "cursor-stability": ("read-committed",),
    "monotonic-view": ("read-committed",),
    "monotonic-snapshot-read": ("read-committed",),
    "consistent-view": ("cursor-stability", "monotonic-view"),
    "forward-consistent-view": ("consistent-view",),
    "update-serializable": ("forward-consistent-view",),
    "repeatable-read": ("cursor-stability", "monotonic-atomic-view"),
    "snapshot-isolation": ("forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read",
                           "parallel-snapshot-isolation", "prefix"),
    "serializable": ("repeatable-read", "update-serializable", "snapshot-isolation", "view-serializable"),
    "view-serializable": (),
    "strict-serializable": ("serializable", "snapshot-isolation", "strong-snapshot-isolation",
                            "strong-session-serializable", "session-serializable", "linearizable"),
    # atomic visibility (Bailis, Cerone)
    "monotonic-atomic-view": ("read-committed",),
    "read-atomic": ("monotonic-atomic-view",),
    "update-atomic": ("read-atomic",),
    "causal-cerone": ("read-atomic",),
    "prefix": ("causal-cerone",),
    "parallel-snapshot-isolation": ("causal-cerone", "update-atomic"),
    # session and real-time variants (Daudjee and Salem; Elle's generalizations)
    "strong-session-read-uncommitted": ("read-uncommitted",),
    "strong-session-read-committed": ("read-committed", "strong-session-read-uncommitted"),
    "strong-read-uncommitted": ("strong-session-read-uncommitted",),
    "strong-read-committed": ("strong-session-read-committed", "strong-read-uncommitted"),
    "strong-session-snapshot-isolation": ("snapshot-isolation", "strong-session-read-committed"),
    "strong-snapshot-isolation": ("strong-session-snapshot-isolation", "strong-read-committed"),
    "strong-session-serializable": ("serializable", "strong-session-snapshot-isolation"),
    "session-serializable": ("1SR",),
    "1SR": (),
    # single-object models
    "linearizable": ("sequential",),
    "sequential": ("causal",),
    "causal": ("writes-follow-reads", "PRAM"),
    "PRAM": ("monotonic-reads", "monotonic-writes", "read-your-writes"),
    "writes-follow-reads": (),
    "monotonic-reads": (),
    "monotonic-writes": (),
    "read-your-writes": (),
}

# other names for the same models (Adya's PL levels among them)
ALIASES: dict[str, str] = {
    "PL-1": "read-uncommitted", "PL-2": "read-committed", "PL-CS": "cursor-stability",
    "PL-2L": "monotonic-view", "PL-MSR": "monotonic-snapshot-read", "PL-2+": "consistent-view",
    "PL-FCV": "forward-consistent-view", "PL-3U": "update-serializable", "PL-2.99": "repeatable-read",
    "PL-SI": "snapshot-isolation", "PL-3": "serializable", "conflict-serializable": "serializable",
    "PL-SS": "strict-serializable", "strong-serializable": "strict-serializable",
    "strong-session-PL-1": "strong-session-read-uncommitted", "strong-session-PL-2": "strong-session-read-committed",
    "strong-PL-1": "strong-read-uncommitted", "strong-PL-2": "strong-read-committed",
}


def known_names() -> list[str]:
    return sorted(MODELS) + sorted(ALIASES)


def check_model(name: str) -> str:
    """The model's own name (an alias resolved); ValueError lists the known ones."""
    name = ALIASES.get(name, name)
    if name not in MODELS:
        raise ValueError(f"unknown consistency model {name!r}; known: {', '.join(known_names())}")
    return name


@cache
def weaker(name: str) -> frozenset[str]:
    """Every model `name` implies, itself included."""
    name = check_model(name)
    found = {name}
    for implied in MODELS[name]:
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
