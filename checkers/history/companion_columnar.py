"""The Parquet companion of a queue history in the common shape, written a
block at a time with columns instead of one Python object per event.

companion_write's careful path parses each event into a dict and validates
and pairs it in Python (about 5 us an event, on two cores). Here msgspec
decodes a block of lines into typed events in C (the contract's field rules
are its types), pairing and ordering checks are numpy over the block sorted
by process, and the micro-op values of the frequent operations (ok sends,
ok polls) are decoded in one typed call per block. What remains in Python
runs per micro-op record, or for the few other operations (txns, failed and
indefinite ones) through the very rules and record builder the careful path
uses (mop_rules, history.queue_records.record_rows).

It only accepts: whatever this path does not handle, or finds wrong, raises
NotColumnar, and companion_write falls back to the careful path, which
writes the companion or reports the problems by line. So it may refuse a
history the careful path accepts (a blank line, CRLF line ends, a poll
micro-op with extra elements, a 64-bit overflow), but it must never accept
one that path refuses, and what it writes is what that path writes: the
same rows, in another order (Spark reads them in no order), and for a large
file in two part files, one per core (tests/checkers/test_companion_columnar.py).
"""
from __future__ import annotations

import os
import pickle
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, NamedTuple, Union

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa

from checkers.history.collector import kept_heap, without_cyclic_gc
from checkers.history.companion_parts import OPS_SCHEMA, RECORDS_SCHEMA, Child, OpCounts, Parts, ProvenSends, json_text
from checkers.history.lines import byte_blocks
from checkers.history.op_row import error_parts, producer_flags
from checkers.history.formats import format_for
from checkers.history.queue_records import (COLUMNS, FS, IDEMPOTENT, NULL, OK, POLL, SEND, SINGLE_KEY_WRITER,
                                            record_rows, records_table, truthy)


class NotColumnar(Exception):
    """The history is not one this path writes; the careful path must."""


_NATURAL = Annotated[int, msgspec.Meta(ge=0)]


class Event(msgspec.Struct):
    """One line, as the contract defines it (unknown fields are ignored, as
    the careful path ignores them); values are kept as their JSON text."""
    index: _NATURAL
    time: int
    type: Literal["invoke", "ok", "fail", "info"]
    process: Union[_NATURAL, Literal["nemesis"]]
    f: str
    value: msgspec.Raw = None      # absent: None; null: Raw(b"null")
    error: msgspec.Raw = None
    producer: msgspec.Raw = None
    starts: msgspec.Raw = None
    rebalance_log: msgspec.Raw = None


_EVENTS = msgspec.json.Decoder(Event)
_ANY = msgspec.json.Decoder()
# the values of the frequent operations, exactly the shapes mop_rules accepts for them
_SEND_INVOKES = msgspec.json.Decoder(list[list[tuple[Literal["send"], int, int]]])
_SEND_OKS = msgspec.json.Decoder(list[list[tuple[Literal["send"], int, tuple[Union[int, None], int]]]])
_POLL_INVOKES = msgspec.json.Decoder(list[list[tuple[Literal["poll"]]]])
_POLL_OKS = msgspec.json.Decoder(list[list[tuple[Literal["poll"], dict[int, list[tuple[int, int]]]]]])

# event types; SEEN: a process's last completion, carried from an earlier block
INVOKE, DONE_OK, DONE_FAIL, DONE_INFO, SEEN = 0, 1, 2, 3, 4
_TYPE_CODES = {"invoke": INVOKE, "ok": DONE_OK, "fail": DONE_FAIL, "info": DONE_INFO}
_TYPE_NAMES = np.array(["invoke", "ok", "fail", "info"], dtype=object)
F_SEND, F_POLL = FS.index("send"), FS.index("poll")
_OPEN, _CLOSE, _NEWLINE = ord("{"), ord("}"), ord("\n")
# JSON text that a parse and compact dump would not give back byte for byte:
# whitespace, escapes, floats, -0. Bytes map to classes (x: such a byte,
# d: digit, z: zero, e: e or E, m: minus), then the patterns are searched.
_CLASSES = b"".join(b"x" if chr(b) in " \t\\." else b"z" if b == 0x30 else b"d" if 0x31 <= b <= 0x39
                 else b"e" if chr(b) in "eE" else b"m" if b == 0x2D else b"_" for b in range(256))
_NOT_COMPACT = (b"x", b"de", b"ze", b"mz")
_EMPTY_POLL = b'[["poll",{}]]'
_NOT_AS_IS = (ord('"'), ord("n"))    # a string (its text is its content) and null


@dataclass
class Batch:
    """Events as columns. `line`: the event's ordinal in the file (order only)."""
    line: np.ndarray
    index: np.ndarray
    time: np.ndarray
    process: np.ndarray
    type: np.ndarray          # INVOKE .. SEEN
    f: np.ndarray             # str objects
    fcode: np.ndarray         # f as a number: FS.index(f), or one of its own for another f
    value: np.ndarray         # Raw or None
    error: np.ndarray
    producer: np.ndarray
    starts: np.ndarray
    rebalance_log: np.ndarray

    def take(self, rows: np.ndarray) -> Batch:
        return Batch(*(getattr(self, name)[rows] for name in self.__dataclass_fields__))

    @staticmethod
    def concat_all(batches: list[Batch]) -> Batch | None:
        if not batches:
            return None
        return Batch(*(np.concatenate([getattr(b, n) for b in batches]) for n in Batch.__dataclass_fields__))

    def portable(self) -> Batch:
        """The batch with its JSON texts as bytes (msgspec.Raw does not
        pickle), for another process: see `arrived`."""
        texts = {n: _objects([None if r is None else bytes(r) for r in getattr(self, n)])
                 for n in ("value", "error", "producer", "starts", "rebalance_log")}
        return Batch(**{n: texts.get(n, getattr(self, n)) for n in Batch.__dataclass_fields__})

    def arrived(self) -> Batch:
        """A batch from another process, its f codes made this process's (an
        f beyond FS gets its code where it is first seen)."""
        self.fcode = _fs(self.f.tolist())[1]
        return self


def _int64(values) -> np.ndarray:
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        raise NotColumnar("an integer beyond 64 bits") from None


def _objects(values: list) -> np.ndarray:
    return np.fromiter(values, dtype=object, count=len(values))


def decode_block(data: bytes, first: int) -> Batch:
    """The client events of a block of whole lines; `first`: the ordinal of
    its first line. Refuses anything but one JSON object per line."""
    if not data.endswith(b"\n"):
        data += b"\n"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotColumnar("not UTF-8") from None
    if b"\r" in data:
        raise NotColumnar("CR line ends")
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == _NEWLINE)
    # each line opens and closes an object: with as many objects as lines,
    # that is one object per line (an object spanning lines would leave one
    # ending otherwise; two on one line, a line without any)
    if raw[0] != _OPEN or (raw[ends - 1] != _CLOSE).any() or (raw[ends[:-1] + 1] != _OPEN).any():
        raise NotColumnar("a line that is not exactly one JSON object")
    try:
        events = _EVENTS.decode_lines(data)
    except msgspec.MsgspecError as e:
        raise NotColumnar(str(e)) from None
    if len(events) != len(ends):
        raise NotColumnar("a line that is not exactly one JSON object")
    line = np.arange(first, first + len(events), dtype=np.int64)
    process = [e.process for e in events]
    if str in set(map(type, process)):      # the nemesis's events: the checkers ignore them
        clients = [i for i, p in enumerate(process) if p.__class__ is int]
        events, process, line = [events[i] for i in clients], [process[i] for i in clients], line[clients]
    return Batch(line, _int64([e.index for e in events]), _int64([e.time for e in events]), _int64(process),
                 np.fromiter(map(_TYPE_CODES.__getitem__, [e.type for e in events]), dtype=np.int8,
                             count=len(events)),
                 *_fs([e.f for e in events]), _objects([e.value for e in events]),
                 _objects([e.error for e in events]), _objects([e.producer for e in events]),
                 _objects([e.starts for e in events]), _objects([e.rebalance_log for e in events]))


def _fs(fs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The f column and its codes (_F_CODES grows with fs beyond FS)."""
    try:
        codes = np.fromiter(map(_F_CODES.__getitem__, fs), dtype=np.int64, count=len(fs))
    except KeyError:
        codes = np.fromiter((_F_CODES.setdefault(f, len(_F_CODES)) for f in fs), dtype=np.int64, count=len(fs))
    return _objects(fs), codes


_F_CODES = {f: i for i, f in enumerate(FS)}


class Pairs(NamedTuple):
    """Completed operations: the invoke and completion batches, row for row,
    in invoke order."""
    invoke: Batch
    done: Batch


class Pairing:
    """Pairs invokes with completions block by block, with the careful path's
    rules (history.read._Pairing), refusing any breach: per process, indexes
    increase, a completion follows a pending invoke of the same f, an invoke
    follows none. Between blocks it keeps each process's pending invoke, or
    its last completion (as a SEEN row) for the index rule.

    `open_start`: the events are the second part of a file, so a process's
    first event may complete an invoke of the first part. Each process's
    first event is kept in `heads` (a completion as it is, an invoke as a
    SEEN row: enough to pair and check it against the first part's end)."""

    def __init__(self, open_start: bool = False) -> None:
        self.carry: Batch | None = None
        self.open_start = open_start
        self.heads: list[Batch] = []

    def add(self, block: Batch) -> Pairs:
        batch = block if self.carry is None else Batch.concat_all([self.carry, block])
        if not len(batch.line):         # no client events yet
            return Pairs(batch, batch)
        # the checks run over the rows sorted by process (`order`), on the
        # plain columns only: the others are taken once, for the pairs
        order = np.lexsort((batch.line, batch.process))
        process, t, f = batch.process[order], batch.type[order], batch.fcode[order]
        same = process[1:] == process[:-1]          # row k+1 continues row k's process
        index = batch.index[order]
        if (same & (index[1:] <= index[:-1])).any():
            raise NotColumnar("an index that does not increase")
        starts = np.r_[True, ~same]
        if self.open_start:
            self._keep_heads(batch, order[starts], self.carry)
        done = np.flatnonzero((t >= DONE_OK) & (t <= DONE_INFO) & ~(starts & self.open_start))
        if len(done) and (starts[done].any() or (t[done - 1] != INVOKE).any() or (f[done] != f[done - 1]).any()):
            raise NotColumnar("a completion without a pending invoke of its f")
        invokes = np.flatnonzero(t[:-1] == INVOKE)
        follows = t[invokes + 1]
        if (same[invokes] & ((follows < DONE_OK) | (follows > DONE_INFO))).any():
            raise NotColumnar("an invoke while one is pending")
        carry = batch.take(order[np.r_[~same, True]])
        carry.type = np.where(carry.type == INVOKE, INVOKE, SEEN).astype(np.int8)
        self.carry = carry
        invoked, completed = order[done - 1], order[done]
        by_invoke = np.argsort(batch.line[invoked], kind="stable")
        return Pairs(batch.take(invoked[by_invoke]), batch.take(completed[by_invoke]))

    def _keep_heads(self, batch: Batch, firsts: np.ndarray, carry: Batch | None) -> None:
        """The first event of each process not seen in an earlier block
        (`firsts`: the first row of each process in `batch`)."""
        if carry is not None:
            firsts = firsts[~np.isin(batch.process[firsts], carry.process)]
        heads = batch.take(firsts)
        heads.type = np.where(heads.type == INVOKE, SEEN, heads.type).astype(np.int8)
        self.heads.append(heads)

    def pending(self) -> Batch | None:
        """The invokes never completed, in file order."""
        if self.carry is None:
            return None
        pending = self.carry.take(np.flatnonzero(self.carry.type == INVOKE))
        return pending.take(np.argsort(pending.line, kind="stable"))


# ---------------------------------------------------------------- operations

def _decode_all(decoder: msgspec.json.Decoder, raws: np.ndarray) -> list:
    """The values `raws` (JSON texts) decoded in one call; any of them absent
    or of another shape refuses the history."""
    try:
        return decoder.decode(b"[" + b",".join(raws.tolist()) + b"]")
    except (TypeError, msgspec.MsgspecError):
        raise NotColumnar("a micro-op value of another shape") from None


def _decode_each(raws: np.ndarray | list) -> list:
    """Each JSON text decoded (None stays None), as orjson would."""
    try:
        texts = raws if isinstance(raws, list) else raws.tolist()
        if not all(texts):
            texts = [b"null" if r is None else r for r in texts]
        return _ANY.decode(b"[" + b",".join(texts) + b"]")
    except msgspec.MsgspecError:
        raise NotColumnar("JSON msgspec refuses") from None


@dataclass
class Block:
    """What a block's completed operations give: rows of ops/, micro-op
    records, and the values their invokes send (for the uniqueness rule)."""
    ops: pa.Table
    records: pd.DataFrame
    sent: np.ndarray


class _Records:
    """Record rows from several groups of operations, a group after another
    (the careful path has them in invoke order: Spark reads them in no order)."""

    def __init__(self) -> None:
        self.parts: list[pd.DataFrame] = []

    def add(self, frame: pd.DataFrame) -> None:
        if len(frame):
            self.parts.append(frame)

    def frame(self) -> pd.DataFrame:
        if not self.parts:
            return records_table([])
        return self.parts[0] if len(self.parts) == 1 else pd.concat(self.parts, ignore_index=True)


def _columns(frame: dict[str, np.ndarray | int], n: int) -> pd.DataFrame:
    return pd.DataFrame({c: np.broadcast_to(np.asarray(frame[c], dtype=np.int64), n) for c in COLUMNS})


def _producer_flags(raws: np.ndarray) -> tuple[list, list]:
    """(idempotent, transactional) of each invoke, as history.op_row.producer_flags."""
    if not any(raws.tolist()):
        return [None] * len(raws), [None] * len(raws)
    pairs = [producer_flags(p) for p in _decode_each(raws)]
    return [a for a, _ in pairs], [b for _, b in pairs]


class Operations:
    """One block's completed operations (or, at the end, the pending ones:
    `done` None), checked and made into rows."""

    def __init__(self, invoke: Batch, done: Batch | None) -> None:
        self.invoke, self.done, self.n = invoke, done, len(invoke.line)
        self.type = done.type if done is not None else np.full(self.n, DONE_INFO, dtype=np.int8)
        self.idempotent, self.transactional = _producer_flags(invoke.producer)
        self.records, self.sent = _Records(), []

    def block(self) -> Block:
        ok = self.type == DONE_OK
        send_ok, poll_ok = ok & (self.invoke.fcode == F_SEND), ok & (self.invoke.fcode == F_POLL)
        self._ok_sends(np.flatnonzero(send_ok))
        self._ok_polls(np.flatnonzero(poll_ok))
        self._others(np.flatnonzero(~(send_ok | poll_ok)))
        sent = np.concatenate(self.sent) if self.sent else np.array([], dtype=np.int64)
        return Block(self._ops_table(), self.records.frame(), sent)

    def _of_operations(self, at: np.ndarray) -> dict[str, np.ndarray]:
        """The record columns that micro-op rows take from their operations
        (`at`: each row's operation)."""
        inv, done = self.invoke, self.done
        return {"op": inv.index[at], "process": inv.process[at], "itime": inv.time[at],
                "ctime": done.time[at], "cindex": done.index[at]}

    def _ok_sends(self, rows: np.ndarray) -> None:
        if not len(rows):
            return
        invoked = _decode_all(_SEND_INVOKES, self.invoke.value[rows])
        completed = _decode_all(_SEND_OKS, self.done.value[rows])
        lengths = [len(m) for m in invoked]
        keys, values = [m[1] for ms in invoked for m in ms], [m[2] for ms in invoked for m in ms]
        if lengths != [len(m) for m in completed] or keys != [m[1] for ms in completed for m in ms] \
                or values != [m[2][1] for ms in completed for m in ms]:
            raise NotColumnar("an ok send that does not match its invoke")
        offsets = [NULL if m[2][0] is None else m[2][0] for ms in completed for m in ms]
        keys, values, offsets = _int64(keys), _int64(values), _int64(offsets)
        self.sent.append(values)
        counts = np.asarray(lengths, dtype=np.int64)
        at = np.repeat(rows, counts)
        nth = np.arange(len(at), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        flags = np.where(self._single_key(keys, lengths), SINGLE_KEY_WRITER, 0) \
            | np.where([truthy(self.idempotent[r]) for r in rows], IDEMPOTENT, 0)
        self.records.add(_columns({
            **self._of_operations(at), "key": keys, "offset": offsets, "value": values, "kind": SEND, "otype": OK,
            "fcode": F_SEND, "pos": nth << 31, "flags": np.repeat(flags, lengths)}, len(keys)))

    @staticmethod
    def _single_key(keys: np.ndarray, lengths: list[int]) -> np.ndarray:
        """Per operation: all its sends go to one key (False with none)."""
        counts = np.asarray(lengths)
        single = np.zeros(len(counts), dtype=bool)
        some = counts > 0
        if some.any():
            starts = (np.cumsum(counts) - counts)[some]
            single[some] = np.minimum.reduceat(keys, starts) == np.maximum.reduceat(keys, starts)
        return single

    def _ok_polls(self, rows: np.ndarray) -> None:
        if not len(rows):
            return
        invoked = _decode_all(_POLL_INVOKES, self.invoke.value[rows])
        completed = _decode_all(_POLL_OKS, self.done.value[rows])
        if [len(m) for m in invoked] != [len(m) for m in completed]:
            raise NotColumnar("an ok poll that does not match its invoke")
        # most polls return nothing: a valid value this long is [["poll",{}]]
        busy = np.flatnonzero(np.fromiter(map(len, self.done.value[rows].tolist()), dtype=np.int64,
                                          count=len(rows)) != len(_EMPTY_POLL)).tolist()
        read = [(r, (i << 31) + j, k, o, v) for r, ms in zip(rows[busy].tolist(), map(completed.__getitem__, busy))
                for i, m in enumerate(ms) for k, pairs in m[1].items() for j, (o, v) in enumerate(pairs)]
        if not read:
            return
        at, pos, key, offset, value = (_int64(c) for c in zip(*read))
        self.records.add(_columns({
            **self._of_operations(at), "key": key, "offset": offset, "value": value, "kind": POLL, "otype": OK,
            "fcode": F_POLL, "pos": pos, "flags": 0}, len(at)))

    def _others(self, rows: np.ndarray) -> None:
        """Txns, failed and indefinite operations, pending ones, other fs:
        few, so the careful path's own rules and record builder, per operation."""
        if not len(rows):
            return
        queue = format_for("queue")
        check_invoke, check_completion = queue.check_invoke, queue.check_completion
        invoked = _decode_each(self.invoke.value[rows])
        completed = _decode_each(self.done.value[rows]) if self.done is not None else [None] * len(rows)
        inv, done, made, sent = self.invoke, self.done, [], []
        for r, value, result in zip(rows.tolist(), invoked, completed):
            f, kind = inv.f[r], _TYPE_NAMES[self.type[r]]
            event = {"f": f, "value": value}
            if check_invoke(event, 0, {}) or check_completion(event, {"type": kind, "value": result}):
                raise NotColumnar("an operation the micro-op rules refuse")
            if f in ("send", "txn"):
                sent += [m[2] for m in value if m[0] == "send"]
            made += record_rows([(f, kind, int(inv.index[r]), int(inv.process[r]), int(inv.time[r]),
                                  NULL if done is None else int(done.time[r]),
                                  NULL if done is None else int(done.index[r]),
                                  value, result, self.idempotent[r], None, None)], resets=False)
        self.sent.append(_int64(sent))
        self.records.add(records_table(made))

    def _ops_table(self) -> pa.Table:
        inv, done, n = self.invoke, self.done, self.n
        errors = None if done is None or not any(done.error.tolist()) else \
            [(None, None) if e is None else error_parts(e) for e in _decode_each(done.error)]
        columns = {
            "process": inv.process, "f": inv.f, "invoke_index": inv.index, "invoke_time": inv.time,
            "complete_index": None if done is None else done.index,
            "complete_time": None if done is None else done.time,
            "type": _TYPE_NAMES[self.type], "invoke_value": value_texts(inv.value),
            "complete_value": None if done is None else value_texts(done.value),
            "error_name": errors and [a for a, _ in errors], "error_message": errors and [b for _, b in errors],
            "idempotent": _booleans(self.idempotent), "transactional": _booleans(self.transactional),
            "starts": None if done is None else value_texts(done.starts),
            "rebalance_log": None if done is None else value_texts(done.rebalance_log)}
        return pa.Table.from_arrays([_arrow(columns[field.name], field.type, n) for field in OPS_SCHEMA],
                                    schema=OPS_SCHEMA)


def _booleans(values: list) -> list | None:
    """Producer flags as ops/ keeps them: booleans, anything else null."""
    return None if values.count(None) == len(values) else [v if type(v) is bool else None for v in values]


def _arrow(values, kind: pa.DataType, n: int) -> pa.Array:
    if values is None:
        return pa.nulls(n, type=kind)
    if isinstance(values, pa.Array):
        return values
    return pa.array(values, type=kind)


def value_texts(raws: np.ndarray) -> pa.Array:
    """Each value as history.companion_write.ops_table keeps it (a string's own
    text, anything else compact JSON, null None): the JSON text as written,
    bar the few values whose text is not that (parsed and dumped again)."""
    texts = raws.tolist()
    data, offsets = _joined(texts)
    redo = set(np.searchsorted(offsets, _not_compact_at(data), "right") - 1)
    valid = np.diff(offsets) > 0           # None: no text
    heads = np.frombuffer(data, dtype=np.uint8)[offsets[:-1][valid]] if data else []
    redo.update(np.flatnonzero(valid)[np.isin(heads, _NOT_AS_IS)].tolist())
    if redo:
        redone = {i: json_text(_decode_each([texts[i]])[0]) for i in redo}
        if any(text is not None for text in redone.values()):
            for i, text in redone.items():
                texts[i] = None if text is None else text.encode()
            data, offsets = _joined(texts)
            valid = np.diff(offsets) > 0
        else:       # nulls only (the usual case): their slots stay, marked null
            valid[list(redone)] = False
    return pa.StringArray.from_buffers(len(texts), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data),
                                       pa.py_buffer(np.packbits(valid, bitorder="little")),
                                       null_count=int(len(texts) - valid.sum()))


def _not_compact_at(data: bytes) -> list[int]:
    """Where `data` holds JSON text that is not compact (_NOT_COMPACT)."""
    classes, found = data.translate(_CLASSES), []
    for pattern in _NOT_COMPACT:
        at = classes.find(pattern)
        while at >= 0:
            found.append(at)
            at = classes.find(pattern, at + 1)
    return found


def _joined(texts: list) -> tuple[bytes, np.ndarray]:
    """The texts end to end (None as nothing) and where each starts and ends."""
    n = len(texts)
    if not all(texts):
        lengths = np.fromiter((0 if t is None else len(t) for t in texts), dtype=np.int64, count=n)
        texts = [t for t in texts if t is not None]
    else:
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return b"".join(texts), offsets


# ---------------------------------------------------------------- writing

# Above this size the file is written in two parts, one per core: this
# process the first half, a child the second (each one a part-0000N file).
SPLIT_MIN_BYTES = 128 << 20
# The first part's share of the bytes: the child starts later (its imports)
# and hands its results over at the end; at 2*10^7 events (2.4 GB) this
# share has both finish together (docs/benchmarks.md).
FIRST_SHARE = 0.55
REFUSED = 3       # the child's exit code when it raises NotColumnar


class _Writer:
    """One part file of ops/ and of queue-mops/, the operations counted, the
    values sent (unique across the file: checked once all are known) and the
    info sends held back until every poll is known (PROVEN)."""

    def __init__(self, out: Path, part: int) -> None:
        name = f"part-{part:05d}.parquet"
        self.ops = Parts(out / "ops", OPS_SCHEMA, name)
        self.records = Parts(out / "queue-mops", RECORDS_SCHEMA, name)
        self.counts, self.proven, self.sent = OpCounts(), ProvenSends(), []
        self.checked: list[np.ndarray] = []

    def write(self, invoke: Batch, done: Batch | None) -> None:
        block = Operations(invoke, done).block()
        if block.ops.num_rows:
            self.ops.write(block.ops)
            self.counts.add(block.ops)
        self.records.write(self.proven.hold_back(block.records))
        self.sent.append(block.sent)

    def sent_sorted(self) -> np.ndarray:
        """The values sent since the last call, sorted, once checked against
        each other and those of earlier calls (NotColumnar: one sent twice)."""
        values = np.concatenate(self.sent) if self.sent else np.array([], dtype=np.int64)
        values.sort()
        self.sent = []
        self._check_new(values)
        return values

    def _check_new(self, values: np.ndarray) -> None:
        """`values`, sorted, are new: none twice, none among the checked."""
        if (values[1:] == values[:-1]).any():
            raise NotColumnar("a value sent twice")
        for checked in self.checked:
            at = np.minimum(np.searchsorted(checked, values), max(len(checked) - 1, 0))
            if len(checked) and (checked[at] == values).any():
                raise NotColumnar("a value sent twice")
        self.checked.append(values)

    def merge(self, other: Half) -> None:
        """Take in what the other part's writer left to the end."""
        self.counts.merge(other.counts)
        self.proven.merge(other.proven)
        self.sent_sorted()
        self._check_new(other.sent)

    def finish(self) -> None:
        self.sent_sorted()
        self.records.write(self.proven.held_back())

    def close(self) -> None:
        self.ops.close()
        self.records.close()


@dataclass
class Half:
    """What the writer of a file's second part hands to the first's."""
    heads: Batch | None
    pending: Batch | None
    counts: OpCounts
    proven: ProvenSends
    sent: np.ndarray       # sorted, each value once


def write_columnar(history: Path, out: Path, block_bytes: int) -> OpCounts:
    """Write ops/ and queue-mops/ of the queue `history` into `out` (which
    has neither yet) and count the operations, as companion_write's careful
    path would; NotColumnar if this path does not write this history."""
    middle = _middle(history) if history.stat().st_size >= SPLIT_MIN_BYTES else None
    writer, pairing = _Writer(out, 0), Pairing()
    try:
        # kept_heap: each block's arrays reuse the last block's memory (3-4 s of 30 at 10^7)
        with _SecondHalf(history, out, middle, block_bytes) as second, without_cyclic_gc(), kept_heap():
            for block in _blocks(history, block_bytes, 0, middle):
                writer.write(*pairing.add(block))
            pending = [pairing.pending()]
            if second.child is not None:
                half = second.result()
                if half.heads is not None:
                    writer.write(*pairing.add(half.heads))
                pending = [pairing.pending(), half.pending]
                writer.merge(half)
            for batch in pending:
                if batch is not None and len(batch.line):
                    writer.write(batch, None)
            writer.finish()
    finally:
        writer.close()
    return writer.counts


def _middle(history: Path) -> int:
    """Where the second part starts: the first line from FIRST_SHARE of the
    file on."""
    with open(history, "rb") as f:
        f.seek(int(history.stat().st_size * FIRST_SHARE))
        f.readline()
        return f.tell()


def write_second_half(history: Path, out: Path, start: int, block_bytes: int, parent: int | None = None) -> Half:
    """The file's lines from byte `start` on, written as part 1; what the
    first part's writer needs to finish comes back. `parent`: the pid of
    that writer's process; should it die, this one stops at its next block."""
    writer, pairing = _Writer(out, 1), Pairing(open_start=True)
    try:
        with without_cyclic_gc(), kept_heap():
            for block in _blocks(history, block_bytes, start, None):
                if parent is not None and os.getppid() != parent:
                    raise SystemExit(f"{history}: the process writing the first part ({parent}) is gone")
                writer.write(*pairing.add(block))
    finally:
        writer.close()
    heads, pending = Batch.concat_all(pairing.heads), pairing.pending()
    return Half(None if heads is None else heads.portable(), None if pending is None else pending.portable(),
                writer.counts, writer.proven, writer.sent_sorted())


class _SecondHalf:
    """The child process writing the second half (none below SPLIT_MIN_BYTES).
    It hands its Half over in a pickle file."""

    def __init__(self, history: Path, out: Path, start: int | None, block_bytes: int) -> None:
        self.child = None
        if start is None:
            return
        with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as f:
            self.result_file = f.name
        self.child = Child(__name__, [str(history), str(out), str(start), str(block_bytes), self.result_file],
                           "writing the second half of the companion")

    def __enter__(self) -> _SecondHalf:
        return self

    def result(self) -> Half:
        code = self.child.wait()
        if code == REFUSED:
            raise NotColumnar("the second half")
        if code != 0:
            raise self.child.failure()
        with open(self.result_file, "rb") as f:
            half = pickle.load(f)
        for batch in (half.heads, half.pending):
            if batch is not None:
                batch.arrived()
        return half

    def __exit__(self, *exc) -> None:
        if self.child is None:
            return
        self.child.stop()
        self.child.close()
        os.unlink(self.result_file)


def _blocks(history: Path, block_bytes: int, start: int, end: int | None) -> Iterator[Batch]:
    """The decoded blocks of bytes [start, end); line ordinals count from
    `start` + 1 (only their order matters, and a line takes a byte at least)."""
    first = start + 1
    for data in byte_blocks(history, block_bytes, start, end):
        yield decode_block(data, first)
        first += data.count(b"\n") + (not data.endswith(b"\n"))


def _child_main(history: str, out: str, start: str, block_bytes: str, result_file: str, parent: str) -> None:
    try:
        half = write_second_half(Path(history), Path(out), int(start), int(block_bytes), int(parent))
    except NotColumnar:
        sys.exit(REFUSED)
    with open(result_file, "wb") as f:
        pickle.dump(half, f, protocol=pickle.HIGHEST_PROTOCOL)


if __name__ == "__main__":      # write_columnar's second process
    # by the module's own name, so the Half it pickles unpickles elsewhere
    from checkers.history.companion_columnar import _child_main as main
    main(*sys.argv[1:])
