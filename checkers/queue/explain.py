"""Plain-words explanations of queue anomaly examples (examples are data;
these turn one into a sentence for the report)."""
from __future__ import annotations


def _op(op: dict) -> str:
    return f"op {op['index']} ({op['f']} {op['type']}, process {op['process']}, t={op['time']}ns)"


def _inconsistent(e: dict) -> str:
    seen = "; ".join(f"{_op(op)} saw {op['value']}" for op in e["ops"])
    return (f"Offset {e['offsets'][0]} of key {e['key']} holds {len(e['values'])} different values "
            f"{e['values']}: {seen}.")


def _duplicate(e: dict) -> str:
    seen = "; ".join(f"{_op(op)} saw it at offset {op['offset']}" for op in e["ops"])
    return (f"Value {e['values'][0]} was sent to key {e['key']} once but sits at offsets {e['offsets']}: {seen}.")


def _lost(e: dict) -> str:
    op = e["ops"][0]
    how = ("was acknowledged at offset {o} by {op}" if op["type"] == "ok" else
           "landed at offset {o} ({op} is indefinite, but a poll returned one of its values)")
    text = (f"The send of {e['values'][0]} to key {e['key']} "
            + how.format(o=e["offsets"][0], op=_op(op))
            + f", but no poll ever returned it, although polls read key {e['key']} up to offset "
              f"{e['max_read_offset']}")
    if "max_read_op" in e:
        text += f" ({_op(e['max_read_op'])} read {e['max_read_op']['value']} there)"
    if e.get("first_offset") is not None and e["first_offset"] != e["offsets"][0]:
        text += f"; a poll saw {e['values'][0]} at offset {e['first_offset']} first"
    return text + "."


def _unseen(e: dict) -> str:
    op = e["ops"][0]
    where = f"at offset {e['offsets'][0]}" if e["offsets"] else "at an unknown offset"
    text = (f"The send of {e['values'][0]} to key {e['key']} was acknowledged {where} by {_op(op)}, "
            f"but no poll returned it by the end of the history")
    if e["offsets"] and e.get("max_read_offset") is not None and e["offsets"][0] <= e["max_read_offset"]:
        text += (f", although polls read key {e['key']} up to offset {e['max_read_offset']} "
                 f"(so it is a lost-write too)")
    return text + "."


def _aborted(e: dict) -> str:
    writer, reader = e["ops"]
    return (f"{_op(reader)} polled {e['values'][0]} from key {e['key']} at offset {e['offsets'][0]}, "
            f"but the send of {e['values'][0]} by {_op(writer)} failed: an aborted write was read.")


def _precommitted(e: dict) -> str:
    op = e["ops"][0]
    return (f"Transaction {_op(op)} sent {e['values'][0]} to key {e['key']} and polled it back at offset "
            f"{e['offsets'][0]} before it committed.")


def _gap(e: dict) -> str:
    d = e["delta"]
    if d > 1:
        return f"skipping {d - 1} offset(s) known to hold values"
    return f"going back {1 - d} offset(s) in the key's order" if d < 1 else "in order"


def _across(verb: str, noun: str):
    def explain(e: dict) -> str:
        prev, this = e["ops"]
        (o1, o2), (v1, v2) = e["offsets"], e["values"]
        return (f"Process {this['process']} {verb} key {e['key']} up to offset {o1} (value {v1}) in {_op(prev)}, "
                f"then its next {noun} in {_op(this)} began at offset {o2} (value {v2}), {_gap(e)}.")
    return explain


def _from_start(e: dict) -> str:
    assign, poll = e["ops"]
    return (f"{_op(assign)} started process {poll['process']} on key {e['key']} at offset {e['start']}, "
            f"but its first poll of the key, {_op(poll)}, began at offset {e['offsets'][0]} "
            f"(value {e['values'][0]}), {_gap(e)}.")


def _from_rebalance(e: dict) -> str:
    logged, poll = e["ops"]
    return (f"A consumer-group rebalance inside {_op(logged)} started process {poll['process']} on key "
            f"{e['key']} at offset {e['start']} (its rebalance_log), but its first poll of the key after it, "
            f"{_op(poll)}, began at offset {e['offsets'][0]} (value {e['values'][0]}), {_gap(e)}.")


def _within(verb: str):
    def explain(e: dict) -> str:
        op = e["ops"][0]
        (o1, o2), (v1, v2) = e["offsets"], e["values"]
        return (f"Within {_op(op)}, process {op['process']} {verb} offset {o1} (value {v1}) of key {e['key']} "
                f"and next offset {o2} (value {v2}), {_gap(e)}.")
    return explain


EXPLAIN = {
    "inconsistent-offsets": _inconsistent,
    "duplicate": _duplicate,
    "lost-write": _lost,
    "unseen": _unseen,
    "G1a": _aborted,
    "precommitted-read": _precommitted,
    "poll-skip": _across("polled", "poll"),
    "nonmonotonic-poll": _across("polled", "poll"),
    "nonmonotonic-send": _across("sent to", "send"),
    "assign-skip": _from_start,
    "assign-rewind": _from_start,
    "rebalance-skip": _from_rebalance,
    "rebalance-rewind": _from_rebalance,
    "int-poll-skip": _within("polled"),
    "int-nonmonotonic-poll": _within("polled"),
    "int-send-skip": _within("sent to"),
    "int-nonmonotonic-send": _within("sent to"),
}
