"""Bad input: what is wrong with a history, and where (file:line). No Spark
here, so reporting a broken file never waits for a JVM."""
from __future__ import annotations

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
