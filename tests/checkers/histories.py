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


class Builder:
    """A history built event by event; `op` returns the history indices of
    its invoke and completion so tests can assert locations."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def invoke(self, process, f, value) -> int:
        self.events.append({"type": "invoke", "process": process, "f": f, "value": value})
        return len(self.events) - 1

    def complete(self, process, f, type_, value, error=None) -> int:
        event = {"type": type_, "process": process, "f": f, "value": value}
        if error is not None:
            event["error"] = error
        self.events.append(event)
        return len(self.events) - 1

    def op(self, process, f, invoke_value, type_, complete_value, error=None) -> tuple[int, int]:
        return (self.invoke(process, f, invoke_value),
                self.complete(process, f, type_, complete_value, error))

    def assign(self, process, keys: list[int], starts: dict[int, int] | None = None,
               f: str = "assign") -> tuple[int, int]:
        """An ok assign (or subscribe) of `keys`; `starts`: its recorded starts."""
        at = self.op(process, f, keys, "ok", keys)
        if starts is not None:
            self.events[at[1]]["starts"] = {str(k): o for k, o in starts.items()}
        return at

    def send(self, process, key_offset_values, type_="ok") -> tuple[int, int]:
        """One send op of several (key, offset, value) micro-ops."""
        inv = [["send", k, v] for k, _, v in key_offset_values]
        done = [["send", k, [o, v]] for k, o, v in key_offset_values] if type_ == "ok" else None
        return self.op(process, "send", inv, type_, done)

    def nemesis(self, f: str, value: dict) -> int:
        """A nemesis event (a start of a logtrial run's carries `fault` and `may_lose_data`)."""
        self.events.append({"type": "info", "process": "nemesis", "f": f, "value": value})
        return len(self.events) - 1

    def poll(self, process, *results: dict) -> tuple[int, int]:
        """One poll op; each result is {key: [(offset, value), ...]}."""
        done = [["poll", {str(k): [list(p) for p in pairs] for k, pairs in r.items()}] for r in results]
        return self.op(process, "poll", [["poll"] for _ in results], "ok", done)

    def write(self, path: Path) -> Path:
        return write_history(path, self.events)
