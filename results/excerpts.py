"""History excerpts: the lines around each operation a report links to.

A browser cannot jump to a line of a plain .jsonl file, so the report carries
the few lines around every referenced operation, each anchored as `#h<index>`.
Collected in the same streaming pass as everything else; memory is bounded by
the number of references, not the history's length.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from checkers.history.stream import Line, event_index

CONTEXT_LINES = 5
MAX_REFERENCES = 300


@dataclass
class ExcerptLine:
    index: int
    line_no: int
    text: str
    referenced: bool


@dataclass
class ExcerptCollector:
    referenced: set[int]
    context: int = CONTEXT_LINES
    lines: list[ExcerptLine] = field(default_factory=list)
    recent: deque = field(default_factory=deque)
    keep_until: int = -1  # keep lines up to this line number (the context after a reference)

    def feed(self, line: Line) -> None:
        index = event_index(line.event, line.no)
        is_ref = index in self.referenced
        entry = ExcerptLine(index, line.no, line.raw.decode("utf-8", "replace"), is_ref)
        if is_ref:
            self.lines.extend(self.recent)
            self.recent.clear()
            self.keep_until = line.no + self.context
        if is_ref or line.no <= self.keep_until:
            self.lines.append(entry)
            return
        self.recent.append(entry)
        if len(self.recent) > self.context:
            self.recent.popleft()

    def blocks(self) -> list[list[ExcerptLine]]:
        """Runs of consecutive lines, one block per stretch of the history."""
        blocks: list[list[ExcerptLine]] = []
        for entry in self.lines:
            if blocks and entry.line_no == blocks[-1][-1].line_no + 1:
                blocks[-1].append(entry)
            else:
                blocks.append([entry])
        return blocks
