"""Progress of `logtrial check` and `to-parquet` on a long history: the bytes of it read
so far, the pass under way (checkers/progress.py) and the time taken, one line rewritten
in place, on a terminal only (a pipe or a CI log gets the summary alone)."""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, TextIO

from checkers import progress as passes
from common import exit_codes
from harness.progress import Progress

# seconds before the first line: a history checked sooner shows nothing but its summary
AFTER_ENV = "LOGTRIAL_PROGRESS_AFTER"
DEFAULT_AFTER = 3.0
# seconds between two lines
EVERY_ENV = "LOGTRIAL_PROGRESS_EVERY"
DEFAULT_EVERY = 0.5


def bytes_read(path: Path) -> int | None:
    """How far this process has read into `path`: the furthest offset of its open
    descriptors on it (/proc/self/fdinfo), None while none is open."""
    target, positions = os.path.realpath(path), []
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for fd in descriptors:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == target:
                with open(f"/proc/self/fdinfo/{fd}") as info:
                    positions.append(int(info.readline().split()[1]))  # "pos:\t<offset>"
        except (OSError, ValueError, IndexError):
            continue  # closed meanwhile
    return max(positions) if positions else None


class CheckStatus:
    """The status line: '<history>: 120.0 of 400.0 MB read | reading history | 12 s', or
    '<history>: 400.0 MB | checking | 15 s' in a pass that does not read the file."""

    def __init__(self, history: Path) -> None:
        self.history, self.started = history, time.monotonic()
        self.total = history.stat().st_size if history.is_file() else None
        self.furthest, self.shown_pass = 0, None

    def line(self) -> str:
        parts = [f"{self.history.name}:"]
        under_way = passes.current()
        if under_way != self.shown_pass:  # each pass reads the history from its start
            self.furthest, self.shown_pass = 0, under_way
        if self.total is not None:
            read = max(bytes_read(self.history) or 0, passes.parsed_bytes())
            self.furthest = min(max(self.furthest, read), self.total)
            parts.append(f"{self.furthest / 1e6:.1f} of {self.total / 1e6:.1f} MB read |" if self.furthest
                         else f"{self.total / 1e6:.1f} MB |")  # a pass on what was read before
        parts.append(f"{under_way or 'between passes'} | {time.monotonic() - self.started:.0f} s")
        return " ".join(parts)


@contextmanager
def shown(history: Path, stream: TextIO | None = None) -> Iterator[None]:
    """Shows the check's progress while the block runs, on a terminal only."""
    stream = stream or sys.stderr
    if not stream.isatty():
        yield
        return
    progress = Progress(CheckStatus(history).line, stream, period=_seconds(EVERY_ENV, DEFAULT_EVERY),
                        after=_seconds(AFTER_ENV, DEFAULT_AFTER)).start()
    try:
        yield
    finally:
        progress.stop()


def _seconds(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    try:
        return float(value) if value else default
    except ValueError:
        print(f"logtrial: environment variable {name}={value!r} is not a number of seconds",
              file=sys.stderr)
        sys.exit(exit_codes.BAD_INPUT)
