"""Hand-written run directories for the results tests.

`queue_history` writes a small queue-workload history with a partition window,
and, when asked, an inconsistent offset: two acknowledged sends to key 1 that
both claim offset 5. The results.json written beside it names the exact indices
of those sends, as the queue checker would.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

MS = 1_000_000
HOSTILE = "<script>alert('x')</script>&\"quote\""


class HistoryBuilder:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.time = 0

    def add(self, process: Any, type_: str, f: str, value: Any, step_ms: int = 5, **extra: Any) -> int:
        self.time += step_ms * MS
        index = len(self.lines)
        self.lines.append({"index": index, "time": self.time, "type": type_, "process": process, "f": f,
                           "value": value, **extra})
        return index

    def write(self, path: Path) -> None:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))


def queue_history(conflict: bool) -> tuple[HistoryBuilder, dict[str, Any]]:
    """A history; `refs` says where the conflicting sends and polls are."""
    h = HistoryBuilder()
    next_offset = {0: 0, 1: 0, 2: 0}
    sent: dict[int, list[list[int]]] = {0: [], 1: [], 2: []}
    refs: dict[str, Any] = {"sends": [], "poll": None}
    value = 100
    for round_no in range(40):
        if round_no == 10:
            h.add("nemesis", "info", "start-partition", {"n1": ["n2", "n3"]})
        if round_no == 25:
            h.add("nemesis", "info", "stop-partition", None)
        if round_no == 18:
            h.add("nemesis", "info", "pause", ["n2"])
        if round_no == 22:
            h.add("nemesis", "info", "resume", ["n2"])
        key = round_no % 3
        process = round_no % 2
        value += 1
        h.add(process, "invoke", "send", [["send", key, value]])
        offset = next_offset[key]
        next_offset[key] += 1
        if conflict and key == 1 and offset == 6:
            offset = 5  # a second value claims offset 5 of key 1
        slow = 200 if 10 <= round_no < 25 else 3
        if round_no == 30:
            h.add(process, "info", "send", [["send", key, value]], step_ms=slow, error=["TIMEOUT", HOSTILE])
            continue
        index = h.add(process, "ok", "send", [["send", key, [offset, value]]], step_ms=slow)
        sent[key].append([offset, value])
        if key == 1 and offset == 5:
            refs["sends"].append(index)
        if round_no % 4 == 3:
            h.add(2, "invoke", "poll", [["poll"]])
            polled = {str(k): list(v) for k, v in sent.items() if v}
            poll_index = h.add(2, "ok", "poll", [["poll", polled]], step_ms=4)
            if refs["poll"] is None and len(refs["sends"]) == 2:
                refs["poll"] = poll_index
    h.add(3, "invoke", "send", [["send", 0, 999]])  # never completed: counts as info
    return h, refs


def test_json(name: str, timestamp: str, status: str = "complete", **options: Any) -> dict[str, Any]:
    start = datetime.strptime(timestamp, "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
    return {"name": name, "status": status, "workload": "queue", "nemesis": ["partition", "pause"],
            "start_time": start.isoformat(), "end_time": (start + timedelta(seconds=65)).isoformat(),
            "options": {"time_limit": 60, "txn": False, "concurrency": 3, **options},
            "versions": {"kafka": "3.9.0", "logtrial": "0.1.0", "confluent-kafka": "2.6.1"}}


def invalid_results(refs: dict[str, Any], h: HistoryBuilder) -> dict[str, Any]:
    ops = [{"index": i, "process": h.lines[i]["process"], "time": h.lines[i]["time"], "f": "send", "type": "ok",
            "offset": 5, "value": h.lines[i]["value"][0][2][1]} for i in refs["sends"]]
    cycle_ops = [h.lines[i] for i in refs["sends"]]
    return {
        "valid": False,
        "anomaly_types": ["G1c", "inconsistent-offsets", "mystery-type", "unseen"],
        "bad_anomaly_types": ["G1c", "inconsistent-offsets"],
        "anomalies": {
            "inconsistent-offsets": {"count": 1, "examples": [{
                "key": 1, "offsets": [5], "values": [h.lines[i]["value"][0][2][1] for i in refs["sends"]],
                "ops": ops, "explanation": f"Offset 5 of key 1 holds two values {HOSTILE}"}]},
            "G1c": {"count": 1, "examples": [{
                "cycle": [{"op": cycle_ops[0], "name": "T1", "edge": "wr", "to": cycle_ops[1]["index"],
                           "why": "op A wrote what B read", "key": 1, "value": 117, "offset": 5},
                          {"op": cycle_ops[1], "name": "T2", "edge": "ww", "to": cycle_ops[0]["index"],
                           "why": "B's write precedes A's", "key": 1, "value": 120, "offset": 5}],
                "steps": ["A wrote 5", "B overwrote it"], "explanation": "A and B each saw the other first.",
                "keys": [1]}]},
            "unseen": {"count": 2, "examples": [{"key": 0, "values": [150], "explanation": "never polled"}]},
            "mystery-type": {"count": 3, "examples": [{"weird": {"nested": [1, 2, {"deep": HOSTILE}]}}],
                             "note": "a field the report does not know"},
        },
        "series": {"unseen": {"times": [i * 5_000_000_000 for i in range(13)],
                              "keys": {"0": [0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 0, 0, 0], "2": [0, 0, 1, 1, 2, 2, 2, 1, 0, 0, 0, 0, 0]}}},
        "stats": {"ops": 61, "sends": 40, "polls": 10},
    }


def make_run(store: Path, name: str, timestamp: str, kind: str = "invalid") -> Path:
    """kind: invalid | valid | corrupt | running"""
    run_dir = store / name / timestamp
    (run_dir / "nodes" / "n1").mkdir(parents=True)
    (run_dir / "nodes" / "n1" / "server.log").write_text("broker started\n")
    (run_dir / "logtrial.log").write_text("run started\n")
    h, refs = queue_history(conflict=(kind == "invalid"))
    h.write(run_dir / "history.jsonl")
    if kind == "corrupt":
        (run_dir / "test.json").write_text('{"name": "broken", "status": ')
        with open(run_dir / "history.jsonl", "a") as f:
            f.write('{"index": 999, "time": 1, "type": "ok", "proc')  # cut off mid-line
        return run_dir
    status = "running" if kind == "running" else "complete"
    (run_dir / "test.json").write_text(json.dumps(test_json(name, timestamp, status)))
    if kind == "invalid":
        (run_dir / "results.json").write_text(json.dumps(invalid_results(refs, h)))
    elif kind == "valid":
        (run_dir / "results.json").write_text(json.dumps(
            {"valid": True, "anomaly_types": [], "bad_anomaly_types": [], "anomalies": {}, "stats": {"ops": 61}}))
    return run_dir
