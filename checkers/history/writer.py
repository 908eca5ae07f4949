"""Streaming writer for history.jsonl (readers: read.py, stream.py).

The format is the contract in docs/history-format.md:
one JSON object per line with `index` and `time` (ns since the test started,
monotonic) filled in here, so callers only say what happened.

Events are written to a buffered file as they happen; a background thread
flushes the buffer at least every `flush_interval` seconds, so a crash of the
control node loses at most the last second of events.
"""
from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

COMPLETION_TYPES = ("ok", "fail", "info")
FLUSH_CHARS = 1 << 16  # pending history written out at this size, or every flush_interval


class HistoryWriter:
    """Thread-safe, append-only history.jsonl writer."""

    def __init__(self, path: str | Path, start_ns: int | None = None, flush_interval: float = 0.5):
        self.path = Path(path)
        self.start_ns = time.monotonic_ns() if start_ns is None else start_ns
        self.counts: Counter[str] = Counter()  # completions of client ops by type, for progress
        # whole lines only reach the file (see _write_out): a control node killed
        # at any instant leaves a history that parses to its last line
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._pending: list[str] = []
        self._pending_chars = 0
        self._lock = threading.Lock()
        self._index = 0
        self._closed = False
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
        self._stop_flusher = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, args=(flush_interval,),
                                         name="history-flusher", daemon=True)
        self._flusher.start()

    # -- the three kinds of event -------------------------------------------------------
    def invoke(self, process: int, f: str, value: Any, **extra: Any) -> int:
        return self.append({"type": "invoke", "process": process, "f": f, "value": value, **extra})

    def complete(self, type: str, process: int, f: str, value: Any,
                 error: tuple[str, str] | list | None = None, **extra: Any) -> int:
        if type not in COMPLETION_TYPES:
            raise ValueError(f"completion type must be one of {COMPLETION_TYPES}, not {type!r}")
        event = {"type": type, "process": process, "f": f, "value": value}
        if error is not None:
            event["error"] = list(error)
        event.update(extra)
        return self.append(event)

    def nemesis(self, f: str, value: Any, **extra: Any) -> int:
        return self.append({"type": "info", "process": "nemesis", "f": f, "value": value, **extra})

    # -- plumbing -------------------------------------------------------------------------
    def append(self, event: dict) -> int:
        """Stamps index and time on `event` and writes it; returns its index.

        The event is encoded outside the lock; only the stamp and the write are
        serialised, so concurrent processes mostly do not wait for each other."""
        body = self._dumps(event)
        counted = event["type"] != "invoke" and event["process"] != "nemesis"
        with self._lock:
            if self._closed:
                raise RuntimeError(f"history {self.path} is closed")
            index = self._index
            line = f'{{"index":{index},"time":{time.monotonic_ns() - self.start_ns},{body[1:]}\n'
            self._pending.append(line)
            self._pending_chars += len(line)
            if self._pending_chars >= FLUSH_CHARS:
                self._write_out()
            self._index = index + 1
            if counted:
                self.counts[event["type"]] += 1
        return index

    @property
    def event_count(self) -> int:
        return self._index

    def elapsed_s(self) -> float:
        return (time.monotonic_ns() - self.start_ns) / 1e9

    def flush(self) -> None:
        with self._lock:
            if not self._closed:
                self._write_out()

    def _write_out(self) -> None:
        """Writes the pending lines, whole, with as few write calls as the
        kernel allows (caller holds the lock)."""
        data = "".join(self._pending).encode("utf-8")
        self._pending, self._pending_chars = [], 0
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def _flush_loop(self, interval: float) -> None:
        while not self._stop_flusher.wait(interval):
            self.flush()

    def close(self) -> None:
        """Flushes and closes; idempotent (it is called from finally blocks)."""
        self._stop_flusher.set()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._write_out()
            os.close(self._fd)

    def __enter__(self) -> "HistoryWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
