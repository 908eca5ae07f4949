"""Bad input: what is wrong with a history, and where (file:line). No Spark
here, so reporting a broken file never waits for a JVM."""
from __future__ import annotations

import json
from dataclasses import dataclass

TYPES = ("invoke", "ok", "fail", "info")
MAX_REPORTED = 5


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    what: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.what}"


class HistoryError(ValueError):
    """The history does not follow the contract. `problems` lists the first
    few offending lines; `count` how many lines are bad in all."""

    def __init__(self, problems: list[Problem], count: int | None = None):
        self.problems = problems
        self.count = count if count is not None else len(problems)
        more = f" ({self.count} in all; first {len(problems)} shown)" if self.count > len(problems) else ""
        super().__init__("bad history" + more + ":\n" + "\n".join(f"  {p}" for p in problems))


def malformed_json(err: json.JSONDecodeError, text: str) -> str:
    """What is wrong with a line that is not JSON, and where in the line (the
    decoder's own line and column count the line's newline, so a line cut
    short read as "column 1" of a next one)."""
    line = text.rstrip("\r\n")
    where = "at the end of the line" if err.pos >= len(line) else f"at column {err.pos + 1}"
    return f"malformed JSON ({err.msg} {where}): {line.strip()[:120]!r}"
