"""The nemesis's start events that declare their fault (docs/history-format.md,
"Nemesis events"): `value.fault` and `value.may_lose_data`.

The checkers' own readers drop nemesis events (the Parquet companion does not
even keep them), so these are found in a pass of their own over the JSON Lines
history: a byte search for the declaration's key, in blocks, parsing only the
lines that hold it. That costs a read of the file (from the page cache, after a
check), not a parse of it.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from checkers.history.companion import SOURCE, is_companion
from checkers.history.lines import BLOCK_BYTES

MARK = b'"may_lose_data"'


def declared_starts(source: str | Path, block_bytes: int = BLOCK_BYTES) -> list[dict]:
    """Every nemesis event of the history at `source` whose value has
    `may_lose_data`, in file order. `source` may be a history.jsonl or its
    Parquet companion (whose history, beside it, is read). Anything else (a
    Parquet file of events, a remote URI), a companion whose history is gone
    and an old history give none. Lines that are not JSON objects are skipped:
    the check's own reading reports them."""
    path = _history_of(Path(source))
    if path is None:
        return []
    return [event for event in map(_event, _marked_lines(path, block_bytes)) if _declares(event)]


def _history_of(source: Path) -> Path | None:
    if is_companion(source):
        try:
            source = source.parent / json.loads((source / SOURCE).read_text())["history"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return source if source.is_file() and source.suffix != ".parquet" else None


def _marked_lines(path: Path, block_bytes: int) -> Iterator[bytes]:
    """The lines of `path` that contain MARK, read a block of whole lines at a time."""
    with open(path, "rb") as f:
        rest = b""
        while block := f.read(block_bytes):
            data = rest + block
            end = data.rfind(b"\n") + 1
            rest = data[end:]
            yield from _lines_with(data[:end])
        yield from _lines_with(rest)


def _lines_with(data: bytes) -> Iterator[bytes]:
    at = data.find(MARK)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        yield data[start:end]
        at = data.find(MARK, end)


def _event(line: bytes) -> dict | None:
    try:
        event = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return event if isinstance(event, dict) else None


def _declares(event: dict | None) -> bool:
    return (event is not None and event.get("process") == "nemesis"
            and isinstance(event.get("value"), dict) and "may_lose_data" in event["value"])
