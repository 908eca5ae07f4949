"""A list-append history's JSON Lines in the common shape, read without a
dict per event.

The careful reader (checkers/history/read.py) parses each line into a dict,
validates it field by field and pairs it in Python, about 10 us an event.
Here msgspec decodes the whole file into typed events in C (the contract's
field rules are its types, the values left as JSON text), the events are
paired in one small loop, every value is decoded in one call, and the
micro-op rules of checkers/history/mop_rules.py are checked over all
micro-ops at once, as set and list comparisons in C.

It only accepts: whatever it does not handle, or finds wrong, gives None,
and the careful reader reads the file instead, and reports its problems by
file and line. So it may refuse a history the careful reader accepts (a
blank line, CR line ends, spaces after an object), but it must never accept
one that reader refuses, and its rows are that reader's rows
(tests/checkers/test_list_append_lines.py).
"""
from __future__ import annotations

from itertools import chain
from operator import itemgetter, lt
from typing import Annotated, Literal, Union

import msgspec

from checkers.history.op_row import error_parts, producer_flags

_NATURAL = Annotated[int, msgspec.Meta(ge=0)]


class _Event(msgspec.Struct, gc=False):
    """One line as the contract defines it (other fields are ignored, as the
    careful reader ignores them); the others as their JSON text, None when
    absent."""
    index: _NATURAL
    time: int
    type: Literal["invoke", "ok", "fail", "info"]
    process: Union[_NATURAL, Literal["nemesis"]]
    f: str
    value: msgspec.Raw = None
    error: msgspec.Raw = None
    producer: msgspec.Raw = None
    starts: msgspec.Raw = None
    rebalance_log: msgspec.Raw = None


_EVENTS = msgspec.json.Decoder(_Event)
_NULL = msgspec.Raw(b"null")
_LIST, _THREE, _INT, _MOP_FS, _TXN = {list}, {3}, {int}, {"append", "r"}, {"txn"}
# what an append may write: a number or a string (mop_rules.list_append_invoke)
_ELEMENTS = {int, float, str, bool}
_READ_RESULTS = {type(None), list}


def common_rows(data: bytes, as_imported: bool = False) -> tuple[list[tuple], int] | None:
    """(the rows of read.ParsedHistory, in invoke order; the number of
    nemesis events) of a list-append history's bytes, or None when the
    careful reader must read it. `as_imported`: the bytes are an EDN
    history's, turned into JSON text (checkers/history/edn_fast.py), so
    import-edn's own rules must hold too (`_imported_ok`)."""
    events = _events(data)
    if events is None or as_imported and not _imported_ok(events):
        return None
    paired = _paired(events)
    if paired is None:
        return None
    ops, nemesis = paired
    invoked, completed = _values([op[0] for op in ops]), _values([op[2] for op in ops if op[2] is not None])
    if not (_invokes_ok(ops, invoked) and _completions_ok(ops, invoked, completed)):
        return None
    return _rows(ops, invoked, completed), nemesis


def _events(data: bytes) -> list[_Event] | None:
    """The file's events if each line is exactly one JSON object that
    decodes as an _Event, else None."""
    if not data or b"\r" in data:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    ended = data.endswith(b"\n")
    lines = data.count(b"\n") + (not ended)
    # each line opens and closes an object (so none is blank), and as many
    # objects as lines decode: one object per line, the line numbers exact
    if data[:1] != b"{" or data.count(b"\n{") != lines - 1 or \
            data.count(b"}\n") + (not ended and data.endswith(b"}")) != lines:
        return None
    try:
        events = _EVENTS.decode_lines(data)
    except msgspec.MsgspecError:
        return None
    return events if len(events) == lines else None


def _imported_ok(events: list[_Event]) -> bool:
    """What import-edn's Converter requires beyond the validator, or might
    convert otherwise (checkers/history/edn_convert.py): indexes that
    increase over the whole file, and every client operation a txn (the
    Converter decides the workload from any other). The fields it rewrites
    or drops the caller has ruled out (edn_bulk._CONVERTED_FIELDS)."""
    indexes = [e.index for e in events]
    if not all(map(lt, indexes, indexes[1:])):
        return False
    return {e.f for e in events if e.process.__class__ is int} <= _TXN


def _paired(events: list[_Event]) -> tuple[list[list], int] | None:
    """([invoke, its line, completion or None, its line or None] per
    operation in invoke order, nemesis events), or None if the careful
    reader's pairing rules find anything wrong."""
    pending: dict[int, list] = {}
    last_index: dict[int, int] = {}
    ops: list[list] = []
    nemesis = 0
    for line, e in enumerate(events, 1):
        p = e.process
        if p.__class__ is str:       # "nemesis": the checkers ignore its events
            nemesis += 1
            continue
        last = last_index.get(p)
        if last is not None and e.index <= last:
            return None
        last_index[p] = e.index
        if e.type == "invoke":
            if p in pending:
                return None
            op = pending[p] = [e, line, None, None]
            ops.append(op)
            continue
        op = pending.pop(p, None)
        if op is None or op[0].f != e.f:
            return None
        op[2], op[3] = e, line
    return ops, nemesis


def _values(events: list[_Event]) -> list:
    """Each event's value, parsed (absent: None), in one decoder call."""
    raws = [_NULL if e.value is None else e.value for e in events]
    return msgspec.json.decode(b"[" + b",".join(raws) + b"]")


def _mops(values: list) -> list | None:
    """All micro-ops of `values` in a row if each value is a list of
    lists of three, else None."""
    if values and set(map(type, values)) != _LIST:
        return None
    mops = list(chain.from_iterable(values))
    if mops and (set(map(type, mops)) != _LIST or set(map(len, mops)) != _THREE):
        return None
    return mops


def _invokes_ok(ops: list[list], invoked: list) -> bool:
    """mop_rules.list_append_invoke finds nothing in any txn invoke: each
    micro-op is an append of a number or string or a read, to an int key,
    and no key has an element appended twice. Also (stricter than the
    careful reader, which only minds those that complete ok) each read
    holds null or a list, so that a read that completes as invoked is fine."""
    mops = _mops([v for op, v in zip(ops, invoked) if op[0].f == "txn"])
    if mops is None:
        return False
    try:
        if mops and (not set(map(itemgetter(0), mops)) <= _MOP_FS or
                     set(map(type, map(itemgetter(1), mops))) != _INT):
            return False
    except TypeError:           # an unhashable f
        return False
    appends = [m for m in mops if m[0] == "append"]
    if appends and not set(map(type, map(itemgetter(2), appends))) <= _ELEMENTS:
        return False
    if not {type(m[2]) for m in mops if m[0] == "r"} <= _READ_RESULTS:
        return False
    return len(set(map(itemgetter(1, 2), appends))) == len(appends)


def _completions_ok(ops: list[list], invoked: list, completed: list) -> bool:
    """mop_rules.list_append_completion finds nothing in any ok txn: one
    micro-op per invoked one, of the same f and key, an append of the same
    element, a read of a list or null. Given _invokes_ok, a micro-op equal
    to its invoke's is fine; only those that differ are looked at."""
    ended = [(op, sent) for op, sent in zip(ops, invoked) if op[2] is not None]
    ok = [(sent, got) for (op, sent), got in zip(ended, completed) if op[2].type == "ok" and op[0].f == "txn"]
    sent, got = [s for s, _ in ok], [g for _, g in ok]
    if (got and set(map(type, got)) != _LIST) or list(map(len, sent)) != list(map(len, got)):
        return False
    differ = [(s, g) for s, g in zip(chain.from_iterable(sent), chain.from_iterable(got)) if s != g]
    return all(g.__class__ is list and len(g) == 3 and s[0] == "r" and g[0] == "r" and g[1] == s[1]
               and (g[2] is None or g[2].__class__ is list) for s, g in differ)


def _rows(ops: list[list], invoked: list, completed: list) -> list[tuple]:
    """read._row of each operation, from the decoded values."""
    rows = []
    done_values = iter(completed)
    for (invoke, invoke_line, done, line), invoke_value in zip(ops, invoked):
        flags = (None, None) if invoke.producer is None else producer_flags(_decoded(invoke.producer))
        if done is None:
            rows.append((invoke.process, invoke.f, invoke.index, invoke.time, None, None, "info", invoke_value,
                         None, None, None, *flags, None, None, invoke_line, None))
            continue
        error = None if done.error is None else error_parts(_decoded(done.error))
        rows.append((invoke.process, invoke.f, invoke.index, invoke.time, done.index, done.time, done.type,
                     invoke_value, next(done_values), *(error or (None, None)), *flags,
                     _decoded(done.starts), _decoded(done.rebalance_log), invoke_line, line))
    return rows


def _decoded(raw: msgspec.Raw | None):
    return None if raw is None else msgspec.json.decode(raw)
