"""Checking a Jepsen or Elle EDN history directly (`logtrial check history.edn`),
with the same results as `logtrial import-edn` followed by a check of the
JSON Lines it writes.

An EDN history is recognised by its content (`is_edn`): its first form is a
map of keywords (`{:index 0, ...}`), a tagged form (`#jepsen.history.Op{...}`),
a vector or list of those, or a comment; or by its name (`.edn`). A gzipped
file (`.edn.gz`, or any file that starts with gzip's magic bytes) is read
through gzip.

Reading is fast for the common shape, one operation per line as Jepsen's
`prn` writes it, with keywords, integers, nil, booleans, floats and vectors
only (what Jepsen's list-append and its history simulator write): a block of
such lines is turned into JSON text by a handful of whole-block substitutions
(checkers/history/edn_json.py). A list-append history all of that shape is
then read as JSON Lines in bulk (checkers/history/edn_bulk.py). Otherwise
the text is parsed by orjson a block at a time, and each operation's
flat [key value ...] list is converted the way checkers/history/edn_convert.py's
Converter converts a map (`_Fast`). A line outside that shape (a string, a
set, a nested map, a tag other than jepsen.history.Op, a symbol...) is read
by the full EDN reader (checkers/history/edn_read.py) and converted by the
Converter itself. Anything unusual (an operation the Converter would refuse,
a form across lines, malformed EDN) sends the whole file to the full reader
and the Converter, from the start: whatever is wrong is then reported
exactly as `import-edn` reports it, as a HistoryError naming file and line.

The events then go through the JSON Lines reader's validation and pairing
(checkers/history/read.py `read_parsed`), so both readers' results agree.
"""
from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from checkers import progress
from checkers.history.edn_convert import (KEY_LIST_FS, MOP_FS, QUEUE_ONLY_FS, TYPES, WORKLOAD_OF_MOP, Converter)
from checkers.history.edn_read import EdnImportError, Keyword, is_gzipped, open_bytes, read_forms
from checkers.history.errors import HistoryError, Problem
from checkers.history.edn_bulk import read_list_append
from checkers.history.edn_json import Keywords, as_json, byte_blocks, plain_block, plain_line, untagged
from checkers.history.read import ParsedHistory, read_parsed

EDN_SUFFIXES = (".edn", ".edn.gz")
BLOCK_BYTES = 32 << 20
_SNIFF_BYTES = 4096

# the start of a file that holds EDN rather than JSON: a map whose first key
# is a keyword, a tagged form, a comment, a list, or a vector whose first
# element is one of those
_EDN_START = re.compile(rb"\s*(?:\{[\s,]*:|#|;|\(|\[[\s,]*(?:\{[\s,]*:|#|\(|\[|\]))")


def is_edn(path: str | Path) -> bool:
    """Whether the file at `path` holds an EDN history (by name or content)."""
    path = Path(path)
    if not path.is_file():
        return False
    if path.name.endswith(EDN_SUFFIXES):
        return True
    try:
        with open_bytes(path, is_gzipped(path)) as f:
            start = f.read(_SNIFF_BYTES)
    except (OSError, EOFError):
        return False
    return _EDN_START.match(start) is not None


# ---------------------------------------------------------------- the fast path

class _NotFast(Exception):
    """The file needs the full reader, from its start."""


class _Fast:
    """Converter.convert for a map given as its flat [key value ...] list
    (keywords as their names: a string here can only have been a keyword),
    keeping the Converter's state. Whatever the Converter would refuse, or
    might convert otherwise, raises _NotFast."""

    def __init__(self, converter: Converter) -> None:
        self.c = converter

    def convert(self, line: int, flat) -> dict:
        if type(flat) is not list or len(flat) % 2:
            raise _NotFast
        try:
            op = dict(zip(flat[::2], flat[1::2]))
        except TypeError:
            raise _NotFast from None    # a vector as a key
        if 2 * len(op) != len(flat):
            raise _NotFast          # a key twice
        return self.convert_map(line, op)

    def convert_map(self, line: int, op) -> dict:
        """convert of the map as a dict (its keys the keywords' names)."""
        if type(op) is not dict:
            raise _NotFast
        c = self.c
        index, time, otype, p, f = (op.get("index", c.position), op.get("time", 0), op.get("type"),
                                    op.get("process"), op.get("f"))
        if not (type(index) is int and c.last_index < index and type(time) is int and otype in TYPES
                and type(f) is str and (p == "nemesis" or type(p) is int and p >= 0)):
            raise _NotFast
        c.position += 1
        c.last_index = index
        value = op.get("value")
        if p != "nemesis":
            value = self._client_value(line, f, value)
        event = {"index": index, "time": time, "type": otype, "process": p, "f": f, "value": value}
        error = op.get("error")
        if error is not None:
            if type(error) is not str:
                raise _NotFast
            event["error"] = [error, ""]
        return event

    def _client_value(self, line: int, f: str, value):
        c = self.c
        if c.workload is None and f in QUEUE_ONLY_FS:
            self._decide(line, "queue")
        if type(value) is list:
            if f == "txn" and c.workload == "list-append" and c.int_keys_line is not None:
                for m in value:
                    if type(m) is not list or len(m) != 3 or m[0] != "append" and m[0] != "r" \
                            or type(m[1]) is not int:
                        break
                else:
                    return value    # what _mop makes of each: the same list
            if f == "txn" or f == "send" or f == "poll":
                return [self._mop(line, f, m) for m in value]
            if f in KEY_LIST_FS.get(c.workload, ()):
                return [self._key(line, k) for k in value]
        return value

    def _decide(self, line: int, workload: str) -> None:
        try:
            self.c._decide(line, workload, "")
        except EdnImportError:
            raise _NotFast from None

    def _mop(self, line: int, f: str, m) -> list:
        if type(m) is not list or not m or type(m[0]) is not str:
            raise _NotFast
        name = m[0]
        workload = WORKLOAD_OF_MOP.get(name)
        if workload is None:
            raise _NotFast
        if workload != self.c.workload:
            self._decide(line, workload)
        if f not in MOP_FS[workload]:
            raise _NotFast
        if name == "poll":
            if len(m) == 1:
                return ["poll"]
            if len(m) == 2 and m[1] is None:
                return ["poll", None]
            raise _NotFast
        if len(m) != 3:
            raise _NotFast
        return [name, self._key(line, m[1]), m[2]]

    def _key(self, line: int, k) -> int:
        c = self.c
        if type(k) is int:
            if c.key_ids:
                raise _NotFast
            if c.int_keys_line is None:
                c.int_keys_line = line
            return k
        if type(k) is str:
            if c.int_keys_line is not None:
                raise _NotFast
            kw = Keyword(k)
            kid = c.key_ids.get(kw)
            if kid is None:
                kid = c.key_ids[kw] = len(c.key_ids)
            return kid
        raise _NotFast


def _fast_blocks(path: Path, gzipped: bool, block_bytes: int, workload: str) -> Iterator[list[tuple[int, dict]]]:
    fast, keywords = _Fast(Converter(workload=workload)), Keywords()
    first = 1
    for data in byte_blocks(path, gzipped, block_bytes):
        body = untagged(data[:-1] if data.endswith(b"\n") else data)
        count = body.count(b"\n") + 1
        yield _block_events(body, count, first, fast, keywords)
        first += count
        progress.parsed(len(data))


def _block_events(body: bytes, count: int, first: int, fast: _Fast,
                  keywords: Keywords) -> list[tuple[int, dict]]:
    """The events of the `count` lines of `body`, line `first` onwards."""
    convert = fast.convert
    if plain_block(body, count):
        try:    # maps as JSON objects, when prn wrote them
            maps = _flats(body, keywords, objects=True)
        except _NotFast:
            maps = None
        if maps is not None and len(maps) == count:
            convert_map = fast.convert_map
            return [(n, convert_map(n, op)) for n, op in enumerate(maps, start=first)]
        flats = _flats(body, keywords)
        if len(flats) != count:
            raise _NotFast
        return [(n, convert(n, flat)) for n, flat in enumerate(flats, start=first)]
    lines = body.split(b"\n")
    plain = [i for i, line in enumerate(lines) if plain_line(line)]
    flat_of = dict(zip(plain, _flats(b"\n".join(lines[i] for i in plain), keywords))) if plain else {}
    if len(flat_of) != len(plain):
        raise _NotFast
    out = []
    for i, line in enumerate(lines):   # in file order: the Converter's state goes line by line
        if i in flat_of:
            out.append((first + i, convert(first + i, flat_of[i])))
        elif line.strip(b" ,\t"):
            out.append((first + i, _full_line(fast.c, first + i, line)))
    return out


def _flats(data: bytes, keywords: Keywords, objects: bool = False) -> list:
    text = as_json(data, keywords, objects)
    if text is None:
        raise _NotFast
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        raise _NotFast from None


def _full_line(converter: Converter, number: int, line: bytes) -> dict:
    """A line of another shape: read by the full reader, converted by the
    Converter, when it holds exactly one form (else the whole file is read
    that way)."""
    try:
        forms = list(read_forms([line.decode("utf-8")]))
    except (EdnImportError, UnicodeDecodeError):
        raise _NotFast from None
    if len(forms) != 1:
        raise _NotFast
    try:
        return converter.convert(number, forms[0][1])
    except EdnImportError:
        raise _NotFast from None


# ---------------------------------------------------------------- the full reader

def _full_blocks(path: Path, gzipped: bool, workload: str) -> Iterator[list[tuple[int, dict]]]:
    converter = Converter(workload=workload)
    with open_bytes(path, gzipped) as raw, io.TextIOWrapper(raw, encoding="utf-8") as f:
        block: list[tuple[int, dict]] = []
        try:
            for line, form in read_forms(f):
                block.append((line, converter.convert(line, form)))
                if len(block) >= 1 << 16:
                    yield block
                    block = []
        except UnicodeDecodeError as e:
            raise EdnImportError(None, f"not UTF-8 text ({e})") from None
        yield block


def _numbered(blocks: Iterator[list[tuple[int, dict]]], seen: list[int]) -> Iterator[list[tuple[int, Any]]]:
    for block in blocks:
        seen[0] += len(block)
        yield block


def read_edn_history(path: str | Path, workload: str, block_bytes: int = BLOCK_BYTES,
                     fast: bool = True, workers: int | None = None) -> ParsedHistory:
    """The validated, paired history in the EDN file at `path`, as
    read_history reads the JSON Lines `import-edn` would write from it.
    Raises HistoryError naming the file and line of what is wrong: the EDN
    reader's and converter's problems (as import-edn states them), then the
    validator's (as a check of the imported file states them, with the EDN
    file's line numbers). `fast=False`: the full reader only (for tests);
    `workers`: edn_bulk's processes (default one per core)."""
    path = Path(path)
    if not path.is_file():
        raise HistoryError([Problem(str(path), None, "no such file")])
    gzipped, size = is_gzipped(path), path.stat().st_size
    try:
        if fast and workload == "list-append":
            bulk = read_list_append(path, gzipped, block_bytes, size, workers)
            if bulk is not None:
                return bulk
        if fast:
            try:
                return _read(path, _fast_blocks(path, gzipped, block_bytes, workload), workload, size)
            except _NotFast:
                pass
        return _read(path, _full_blocks(path, gzipped, workload), workload, size)
    except EdnImportError as e:
        raise HistoryError([Problem(str(path), e.line, e.what)]) from None


def _read(path: Path, blocks: Iterator[list[tuple[int, dict]]], workload: str, size: int) -> ParsedHistory:
    seen = [0]
    parsed = read_parsed(str(path), _numbered(blocks, seen), workload, size)
    if seen[0] == 0:
        raise EdnImportError(None, "no operations in the file")
    return parsed
