"""Fault windows from the nemesis events of a history.

Nemesis events name what they did (`start-partition`/`stop-partition`,
`pause`/`resume`, `kill`/`start`, `bump-clock`/`reset-clock`, ...; the table
is nemesis/registry.py's F_NAMES, unknown `start-X`/`stop-X` pairs also count). Each kind of
fault becomes a list of [start, end) windows for shading plots; events that
neither open nor close a known kind are kept as instants.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nemesis.registry import F_NAMES

# nemesis/registry.py's F_NAMES is the one table of the f names each fault writes
OPENS = {"start": True, "stop": False}


def classify(f: str) -> tuple[str, bool] | None:
    """(kind, opens) for a nemesis `f`, or None if it is neither a start nor a stop."""
    if f in F_NAMES:
        kind, action = F_NAMES[f]
        return kind, OPENS.get(action, True)
    for prefix, opens in (("start-", True), ("stop-", False)):
        if f.startswith(prefix) and len(f) > len(prefix):
            return f[len(prefix):], opens
    return None


@dataclass
class FaultWindows:
    windows: list[tuple[str, float, float]] = field(default_factory=list)  # (kind, start_s, end_s)
    instants: list[tuple[str, float]] = field(default_factory=list)        # (f, time_s)
    open: dict[str, float] = field(default_factory=dict)                   # kind -> start_s

    def add(self, f: str, time_s: float) -> None:
        kind_opens = classify(f)
        if kind_opens is None:
            self.instants.append((f, time_s))
            return
        kind, opens = kind_opens
        if opens:
            self.open.setdefault(kind, time_s)  # a second start while open extends nothing
        elif kind in self.open:
            self.windows.append((kind, self.open.pop(kind), time_s))

    def close_all(self, end_s: float) -> None:
        """Faults still active when the history ends last until its end."""
        for kind, start in sorted(self.open.items()):
            self.windows.append((kind, start, max(start, end_s)))
        self.open.clear()

    def kinds(self) -> list[str]:
        return sorted({kind for kind, _, _ in self.windows})
