"""Kept for callers not yet moved: the queue's verdict, now decided by
checkers/verdict.py from checkers/taxonomy.py."""
from __future__ import annotations

from checkers.verdict import Evidence, verdict as _verdict

__all__ = ["Evidence", "verdict"]


def verdict(found, evidence: Evidence, allow=(), forbid=()) -> tuple[bool | str, list[str]]:
    return _verdict(found, "queue", evidence, allow=allow, forbid=forbid)
