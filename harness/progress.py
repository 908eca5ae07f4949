"""Live progress on the terminal: phase, elapsed, ops ok/fail/info, faults.

On a TTY one line is rewritten in place; otherwise a line is printed every
`period` seconds (CI logs stay readable)."""
from __future__ import annotations

import sys
import threading
from typing import Callable, TextIO


class Progress:
    def __init__(self, status_line: Callable[[], str], stream: TextIO | None = None, period: float | None = None,
                 after: float = 0.0):
        """after: seconds before the first line (nothing at all for what ends sooner)."""
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.period = period if period is not None else (0.5 if self.tty else 10.0)
        self.after = after
        self.shown = False
        self._status_line = status_line
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="progress", daemon=True)

    def start(self) -> "Progress":
        self._thread.start()
        return self

    def _loop(self) -> None:
        wait = self.after or self.period
        while not self._stop.wait(wait):
            self.show()
            wait = self.period

    def show(self) -> None:
        self.shown = True
        line = self._status_line()
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def say(self, message: str) -> None:
        """A permanent line (phase changes, where the report is)."""
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(message + "\n")
        self.stream.flush()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        if self.after and not self.shown:
            return  # over before it was worth a line
        self.show()
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
