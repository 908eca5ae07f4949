"""Is the soak's history complete? (benchmarks/soak.py)

Against the contract (docs/history-format.md): every completion follows an invoke of
its process with the same `f`, so every acknowledged send and transaction has both;
and an operation without a completion is allowed only where the run ended before it
was written, which in a complete run means a worker still inside its op when the
main phase's deadline passed (harness/workers.py logs those by name). The writer's
own counts (test.json "counts") must match what the file holds."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Iterator

from checkers.history.wellformed import wellformedness_problems

STUCK = re.compile(r"workers still inside an op after the deadline \(their ops stay open\): \[(.*)\]")


def completeness(run_dir: Path) -> dict:
    record = json.loads((run_dir / "test.json").read_text())
    first_final = record.get("final", {}).get("first_index")
    tally = tally_history(run_dir / "history.jsonl", first_final)
    problems = wellformedness_problems(read_events(run_dir / "history.jsonl"), "queue")
    stuck = stuck_workers(run_dir / "logtrial.log")
    main_open = [op for op in tally["open_ops"] if op["phase"] == "main"]
    return {
        **tally,
        "status": record.get("status"),
        "final_reads": {k: v for k, v in record.get("final", {}).items() if not isinstance(v, (list, dict))},
        "writer_counts": record.get("counts"),
        "writer_counts_match_file": record.get("counts") == tally["completions"],
        "wellformedness_problems": problems[:20],
        "wellformedness_problem_count": len(problems),
        "stuck_workers_logged": stuck,
        # open ops the contract allows: one per worker logged as stuck, in the main phase
        "unexplained_open_ops": max(0, len(main_open) - len(stuck)) + len(tally["open_ops"]) - len(main_open),
    }


def read_events(path: Path) -> Iterator[dict]:
    """The history line by line, not all at once (an hour's is hundreds of MB)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def tally_history(path: Path, first_final: int | None) -> dict:
    """Completions by type, acknowledged sends and transactions, nemesis events by f, and
    the operations left without a completion."""
    completions: Counter[str] = Counter()
    acknowledged: Counter[str] = Counter()
    nemesis: Counter[str] = Counter()
    open_ops: dict[int, dict] = {}
    events = 0
    for e in read_events(path):
        events += 1
        if e["process"] == "nemesis":
            nemesis[e["f"]] += 1
        elif e["type"] == "invoke":
            open_ops[e["process"]] = e
        else:
            open_ops.pop(e["process"], None)
            completions[e["type"]] += 1
            if e["type"] == "ok":
                acknowledged.update(_acknowledged(e))
    return {"events": events, "completions": dict(completions), "acknowledged": dict(acknowledged),
            "nemesis_events": dict(nemesis),
            "open_ops": [_open_op(e, first_final) for e in open_ops.values()]}


def _acknowledged(ok: dict) -> list[str]:
    """What an ok completion acknowledges: a send, a transaction, and the sends in it."""
    if ok["f"] == "send":
        return ["send"]
    if ok["f"] == "txn":
        return ["txn"] + ["send in txn"] * sum(1 for m in ok["value"] if m[0] == "send")
    return []


def _open_op(invoke: dict, first_final: int | None) -> dict:
    phase = "final" if first_final is not None and invoke["index"] >= first_final else "main"
    return {"index": invoke["index"], "process": invoke["process"], "f": invoke["f"], "phase": phase}


def stuck_workers(log_path: Path) -> list[str]:
    """Workers the runner named as still inside an op after the main phase's deadline."""
    if not log_path.exists():
        return []
    names: list[str] = []
    with open(log_path, errors="replace") as f:
        for line in f:
            if match := STUCK.search(line):
                names += [n.strip(" '\"") for n in match.group(1).split(",")]
    return names
