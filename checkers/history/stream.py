"""Streaming a history.jsonl one event at a time, tolerating damage.

Reports read histories that may be huge (millions of lines) or cut off mid-line
by a crash. Events are yielded with their 1-based line number; lines that are
not JSON objects are counted and remembered (a few) instead of raising.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NamedTuple

MAX_REMEMBERED_BAD_LINES = 20


@dataclass
class BadLines:
    count: int = 0
    examples: list[str] = field(default_factory=list)  # "line 12: Expecting value"

    def add(self, line_no: int, why: str) -> None:
        self.count += 1
        if len(self.examples) < MAX_REMEMBERED_BAD_LINES:
            self.examples.append(f"line {line_no}: {why}")


class Line(NamedTuple):
    no: int                 # 1-based line number in the file
    event: dict[str, Any]
    raw: bytes              # the line as written, for showing it verbatim


def events(path: Path, bad: BadLines | None = None) -> Iterator[Line]:
    """Every well-formed line of the history."""
    bad = bad if bad is not None else BadLines()
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                bad.add(line_no, f"not JSON ({e})")
                continue
            if not isinstance(event, dict):
                bad.add(line_no, "not a JSON object")
                continue
            yield Line(line_no, event, raw.rstrip(b"\r\n"))


def event_index(event: dict[str, Any], line_no: int) -> int:
    """The event's `index`, or its position in the file when the field is missing."""
    index = event.get("index")
    return index if isinstance(index, int) else line_no - 1


def event_time(event: dict[str, Any]) -> int | None:
    time = event.get("time")
    return time if isinstance(time, (int, float)) and not isinstance(time, bool) else None


def raw_events(path: str | Path) -> Iterator[dict]:
    """Yields the events of a history file as they are, unchecked (the tests
    and benchmarks read what the harness wrote this way).

    A torn last line (the control node died mid-write) is skipped; a malformed
    line anywhere else raises ValueError naming the file and line.
    """
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines) and not line.endswith("\n"):
                return  # torn final write
            raise ValueError(f"{path}:{number}: not a JSON object: {e}") from None
