"""Writing small hand-made histories for checker tests."""
from __future__ import annotations

import json
from pathlib import Path


def write_history(path: Path, events: list[dict]) -> Path:
    """Write `events` as history.jsonl, filling in index and time in order."""
    with open(path, "w") as out:
        for i, event in enumerate(events):
            line = {"index": i, "time": (i + 1) * 1000, **event}
            out.write(json.dumps(line) + "\n")
    return path


def op(process, f, invoke_value, type_, complete_value, error=None) -> list[dict]:
    """An invoke and its completion, back to back."""
    done = {"type": type_, "process": process, "f": f, "value": complete_value}
    if error is not None:
        done["error"] = error
    return [{"type": "invoke", "process": process, "f": f, "value": invoke_value}, done]
