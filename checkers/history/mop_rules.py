"""What a well-formed operation value looks like, per workload
(docs/history-format.md), checked one event at a time.

Each workload has two checks (checkers/history/formats.py names them): one of an invoke's micro-ops, which
records the values it writes in `written` (value -> line) to catch a value
written twice, and one that checks that an ok completion's micro-ops match its
invoke's. Both return MopProblems (empty when fine). Operations with an `f`
the workload does not know are left alone: checkers ignore them.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain


@dataclass(frozen=True)
class MopProblem:
    what: str
    both: bool = False     # the problem involves the invoke's line too


def _int(x) -> bool:
    return type(x) is int or (isinstance(x, int) and not isinstance(x, bool))
# Parsed JSON holds no int subclass but bool, so on it `type(x) is int` is
# _int(x) without a call: the per-micro-op loops below use that.


def _show(x) -> str:
    return json.dumps(x)[:80]


_LIST = {list}


def _mops(value) -> list | None:
    """`value` if it is a list of non-empty lists, else None."""
    # the usual case without a Python-level loop (this runs for every event)
    if type(value) is list and (set(map(type, value)) == _LIST or not value) and all(value):
        return value
    if not isinstance(value, list):
        return None
    for m in value:
        if not (isinstance(m, list) and m):
            return None
    return value


# ---------------------------------------------------------------- queue

QUEUE_MOPS = {"send": ("send",), "poll": ("poll",), "txn": ("send", "poll")}


def queue_invoke(e: dict, line: int, written: dict) -> list[MopProblem]:
    f = e["f"]
    if f in ("assign", "subscribe"):
        ok = isinstance(e.get("value"), list) and all(_int(k) for k in e["value"])
        return [] if ok else [MopProblem(f"{f} must carry a list of int keys, not {_show(e.get('value'))}")]
    if f not in QUEUE_MOPS:
        return []
    mops = _mops(e.get("value"))
    if mops is None:
        return [MopProblem(f"a {f} must carry a list of micro-ops, not {_show(e.get('value'))}")]
    problems = []
    for m in mops:
        if m[0] not in QUEUE_MOPS[f]:
            problems.append(MopProblem(f"a {f} may not hold the micro-op {_show(m)}"))
        elif m[0] == "send":
            if len(m) != 3 or type(m[1]) is not int or type(m[2]) is not int:
                problems.append(MopProblem(f'a send micro-op must be ["send", key, value] with integers, '
                                           f"not {_show(m)}"))
            elif m[2] in written:
                problems.append(MopProblem(f"value {m[2]} is sent again (to key {m[1]}); line "
                                           f"{written[m[2]]} already sent it: values must be unique"))
            else:
                written[m[2]] = line
    return problems


_TWO, _INTS = {2}, {int}


def _pairs_ok(pairs) -> bool:
    """`pairs` is [[int, int], ...]: three passes in C, not a loop per pair."""
    return type(pairs) is list and (not pairs or set(map(type, pairs)) == _LIST and set(map(len, pairs)) == _TWO
                                    and set(map(type, chain.from_iterable(pairs))) == _INTS)


def _poll_result_problem(result) -> str | None:
    if not isinstance(result, dict):
        return f"a poll's result must be a map of key to [[offset, value], ...], not {_show(result)}"
    for key, pairs in result.items():
        if not str(key).lstrip("-").isdigit():
            return f"poll result key {_show(key)} is not an int"
        if not _pairs_ok(pairs) and (not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and _int(p[0]) and _int(p[1]) for p in pairs)):
            return f"poll result for key {key} must be [[offset, value], ...] with integers, not {_show(pairs)}"
    return None


def queue_completion(invoke: dict, done: dict) -> list[MopProblem]:
    if done["type"] != "ok" or invoke["f"] not in QUEUE_MOPS:
        return []
    sent, got = _mops(invoke.get("value")) or [], _mops(done.get("value"))
    if got is None or len(got) != len(sent):
        return [MopProblem(f"an ok {invoke['f']} must complete with one micro-op per invoked one "
                           f"({len(sent)}), not {_show(done.get('value'))}", both=True)]
    for a, b in zip(sent, got):
        if a[0] != b[0]:
            return [MopProblem(f"completion micro-op {_show(b)} does not match its invoke's {_show(a)}",
                               both=True)]
        if a[0] == "send":
            if len(b) != 3 or b[1] != a[1] or not isinstance(b[2], list) or len(b[2]) != 2 \
                    or b[2][1] != a[2] or not (b[2][0] is None or type(b[2][0]) is int):
                return [MopProblem(f"completion micro-op {_show(b)} does not match its invoke's {_show(a)}: "
                                   'expected ["send", key, [offset or null, value]] with the same key and value',
                                   both=True)]
        else:
            problem = _poll_result_problem(b[1] if len(b) > 1 else None)
            if problem:
                return [MopProblem(problem)]
    return []


# ---------------------------------------------------------------- list-append

def list_append_invoke(e: dict, line: int, written: dict) -> list[MopProblem]:
    if e["f"] != "txn":
        return []
    mops = _mops(e.get("value"))
    if mops is None:
        return [MopProblem(f"a txn must carry a list of micro-ops, not {_show(e.get('value'))}")]
    problems = []
    for m in mops:
        if len(m) != 3 or m[0] not in ("append", "r"):
            problems.append(MopProblem(f'a micro-op must be ["append", key, value] or ["r", key, null], '
                                       f"not {_show(m)}"))
        elif type(m[1]) is not int:
            problems.append(MopProblem(f"key {_show(m[1])} in {_show(m)} is not an int"))
        elif m[0] == "append":
            if m[2] is None or isinstance(m[2], (list, dict)):
                problems.append(MopProblem(f"an append's value must be a number or string, not {_show(m[2])}"))
            elif (m[1], m[2]) in written:
                problems.append(MopProblem(f"value {_show(m[2])} is appended to key {m[1]} again; line "
                                           f"{written[(m[1], m[2])]} already appended it: values must be "
                                           "unique per key"))
            else:
                written[(m[1], m[2])] = line
    return problems


def list_append_completion(invoke: dict, done: dict) -> list[MopProblem]:
    if done["type"] != "ok" or invoke["f"] != "txn":
        return []
    sent, got = _mops(invoke.get("value")) or [], _mops(done.get("value"))
    if got is None or len(got) != len(sent):
        return [MopProblem(f"an ok txn must complete with one micro-op per invoked one ({len(sent)}), "
                           f"not {_show(done.get('value'))}", both=True)]
    for a, b in zip(sent, got):
        if len(b) != 3 or b[0] != a[0] or b[1] != a[1] or (a[0] == "append" and b[2] != a[2]):
            return [MopProblem(f"completion micro-op {_show(b)} does not match its invoke's {_show(a)}",
                               both=True)]
        if a[0] == "r" and not (b[2] is None or isinstance(b[2], list)):
            return [MopProblem(f"a read must complete with a list (or null for empty), not {_show(b[2])}")]
    return []


InvokeRule = Callable[[dict, int, dict], list[MopProblem]]
CompletionRule = Callable[[dict, dict], list[MopProblem]]
