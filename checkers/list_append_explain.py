"""Plain words for the list-append checker's non-cycle anomalies (cycles are
worded by checkers.cycles). Each function takes an example dict as
list_append builds it and returns one sentence."""

from __future__ import annotations

import json


def _op(op: dict | None) -> str:
    if not op:
        return "an unknown operation"
    return f"op {op['index']} (process {op['process']}, {op['type']})"


def _list(text) -> str:
    xs = json.loads(text) if isinstance(text, str) else text
    return "[" + ", ".join(map(str, xs or [])) + "]"


def internal(e: dict) -> str:
    return (f"{_op(e['op'])} read key {e['key']} as {_list(e['read'])} (micro-op {e['pos']}), "
            f"but its own earlier reads and appends say {_list(e['expected'])}")


def future_read(e: dict) -> str:
    return (f"{_op(e['op'])} read {_list(e['read'])} from key {e['key']} (micro-op {e['pos']}) "
            f"before appending it itself")


def duplicate_elements(e: dict) -> str:
    return (f"{_op(e['op'])} read key {e['key']} holding {_list(e['read'])} more than once "
            f"(micro-op {e['pos']})")


def incompatible_order(e: dict) -> str:
    return (f"{_op(e['op'])} read key {e['key']} as {_list(e['read'])}, which is not a prefix "
            f"of the longest read {_list(e['longest'])}")


def g1a(e: dict) -> str:
    return (f"{_op(e['op'])} read key {e['key']} as {_list(e['read'])}, containing {e['element']}, "
            f"appended by {_op(e['writer'])} which failed")


def g1b(e: dict) -> str:
    return (f"{_op(e['op'])} read key {e['key']} as {_list(e['read'])}, ending in {e['element']}: "
            f"an intermediate state of {_op(e['writer'])}, which appended more to the key")


def dirty_update(e: dict) -> str:
    return (f"on key {e['key']}, {_op(e['op'])} appended {e['value']} right after "
            f"{e['aborted']}, appended by {_op(e['aborted_op'])} which failed")


def lost_update(e: dict) -> str:
    ops = ", ".join(_op(o) for o in e["ops"])
    return (f"{ops} all read key {e['key']} as {_list(e['version'])} and then appended to it: "
            f"each should have seen the others' appends")


EXPLAIN = {"internal": internal, "future-read": future_read,
           "duplicate-elements": duplicate_elements, "incompatible-order": incompatible_order,
           "G1a": g1a, "G1b": g1b, "dirty-update": dirty_update, "lost-update": lost_update}
