"""The topics a fault acts on: those the runner names, widened to every topic sharing
their prefix (the workload creates topics as it rotates keys), or every non-internal
topic when it names none."""
from __future__ import annotations

from typing import Iterable, Sequence


def topic_prefixes(topics: Sequence[str]) -> list[str]:
    """`run-q-3` -> `run-q-`: the workload numbers its topics as keys rotate."""
    return sorted({t.rsplit("-", 1)[0] + "-" if "-" in t else t for t in topics})


def fault_topics(names: Iterable[str], prefixes: Sequence[str]) -> list[str]:
    """The non-internal topics among `names` that start with one of the prefixes (all of
    them when there is no prefix)."""
    return sorted(t for t in names if not t.startswith("__")
                  and (not prefixes or any(t.startswith(p) for p in prefixes)))
