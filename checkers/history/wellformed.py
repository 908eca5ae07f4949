"""Structural checks of a history against the contract (docs/history-format.md):
not anomalies in Kafka, but mistakes in how the history was written.

Each problem is a string naming the line (index) and what is wrong."""
from __future__ import annotations

from typing import Iterable

from checkers.history.formats import format_for

COMPLETIONS = {"ok", "fail", "info"}


def wellformedness_problems(events: Iterable[dict], workload: str = "queue") -> list[str]:
    problems: list[str] = []
    open_ops: dict[int, dict] = {}
    retired: set[int] = set()
    written: dict[int, int] = {}
    last_time = -1
    for position, e in enumerate(events):
        where = f"index {e.get('index')}"
        if e.get("index") != position:
            problems.append(f"{where}: index should be {position}")
        if not isinstance(e.get("time"), int) or e["time"] < last_time:
            problems.append(f"{where}: time {e.get('time')} goes backwards (previous {last_time})")
        last_time = e.get("time", last_time)
        if e.get("process") == "nemesis":
            if e.get("type") != "info":
                problems.append(f"{where}: nemesis events are info")
            continue
        process = e.get("process")
        if not isinstance(process, int) or process < 0:
            problems.append(f"{where}: bad process {process!r}")
            continue
        if e.get("type") == "invoke":
            if process in open_ops:
                problems.append(f"{where}: process {process} invokes with an op still open")
            if process in retired:
                problems.append(f"{where}: process {process} invokes again after an info")
            open_ops[process] = e
            for value in _written_values(e, workload):
                if value in written:
                    problems.append(f"{where}: value {value} already written at index {written[value]}")
                written[value] = e["index"]
        elif e.get("type") in COMPLETIONS:
            invoke = open_ops.pop(process, None)
            if invoke is None:
                problems.append(f"{where}: completion without an invoke for process {process}")
                continue
            if invoke.get("f") != e.get("f"):
                problems.append(f"{where}: completes {e.get('f')} but {invoke.get('f')} was invoked")
            if e["type"] == "info":
                retired.add(process)
            if e["type"] == "ok":
                problems += [f"{where}: {p}" for p in _ok_value_problems(invoke, e, workload)]
        else:
            problems.append(f"{where}: unknown type {e.get('type')!r}")
    return problems


def _written_values(invoke: dict, workload: str) -> list[int]:
    if not isinstance(invoke.get("value"), list):
        return []
    kind = format_for(workload).write_mop
    return [m[2] for m in invoke["value"] if isinstance(m, list) and m and m[0] == kind]


def _ok_value_problems(invoke: dict, ok: dict, workload: str) -> list[str]:
    """An acknowledged send carries an offset; micro-ops line up with the invoke."""
    problems = []
    if invoke["f"] not in ("send", "poll", "txn"):
        return problems
    if len(invoke["value"]) != len(ok["value"]):
        return [f"{len(ok['value'])} micro-ops completed, {len(invoke['value'])} invoked"]
    for asked, got in zip(invoke["value"], ok["value"]):
        if asked[0] != got[0]:
            problems.append(f"micro-op {got[0]} completes {asked[0]}")
        elif asked[0] == "send" and not _acknowledged_send(asked, got):
            problems.append(f"send {asked} acknowledged as {got} (needs [offset, value])")
        elif asked[0] == "r" and not isinstance(got[2], list):
            problems.append(f"read of key {asked[1]} completed without a list")
    return problems


def _acknowledged_send(asked: list, got: list) -> bool:
    """["send", k, v] acknowledged as ["send", k, [offset, v]] with an int offset."""
    return (len(got) == 3 and got[1] == asked[1] and isinstance(got[2], list) and len(got[2]) == 2
            and isinstance(got[2][0], int) and got[2][1] == asked[2])
