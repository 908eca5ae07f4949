"""EDN lines of the fast shape as JSON text: one operation map per line, as
Jepsen's `prn` writes it, with keywords, integers, nil, booleans, floats and
vectors only (what Jepsen's list-append and its history simulator write).
A block of such lines becomes JSON by a handful of whole-block
substitutions (keywords to strings, nil to null, maps to objects or flat
arrays, commas and spaces to one comma), with no per-line Python: the
readers in checkers/history/edn_fast.py and edn_bulk.py parse the text.

Whatever might not be turned into the JSON of the same values is refused
(None, or False from the shape checks), never turned into other JSON: the
callers then read it with the full EDN reader.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from checkers.history.edn_read import open_bytes

# The fast shape: bytes of these kinds only (so no string, character, set,
# tag, comment or list), each line one map alone on it (after its
# #jepsen.history.Op tag), nothing nested in the map but vectors, and no
# symbol JSON would misread (null), no ::keyword, no integer beyond 64 bits,
# no exponent (1e400 is EDN's infinity, not JSON's).
_ALLOWED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:.-[]{} ,\n"
_TAG = b"#jepsen.history.Op{"
_NUMBERS = bytes(0x31 if 0x30 <= b <= 0x39 else 0x65 if b in b"eE" else 0x30 for b in range(256))
_KEYWORD = re.compile(rb":[^ ,\[\]{}\n]+[ ,\]}\n]")
# a map key's ":" until the keywords are quoted (no such byte is in the fast shape)
_COLON = b"\x01"
_BRACES = bytes.maketrans(b"{} ", b"[],")
_SPACES = bytes.maketrans(b" ", b",")
_MAP_KEY = re.compile(rb"(?:\{|, ):[^ ,\[\]{}\n]+ ")


def untagged(data: bytes) -> bytes:
    if _TAG in data:
        data = data.replace(b"\n" + _TAG, b"\n{")
        if data.startswith(_TAG):
            data = b"{" + data[len(_TAG):]
    return data


def plain_line(line: bytes) -> bool:
    """Whether one line (its tag taken off) has the fast shape."""
    return (line.startswith(b"{") and line.endswith(b"}") and line.count(b"{") == 1 and line.count(b"}") == 1
            and not line.translate(None, _ALLOWED) and _no_odd_token(line))


def _no_odd_token(data: bytes) -> bool:
    numbers = data.translate(_NUMBERS)
    return b"null" not in data and b"::" not in data and b"1e" not in numbers and b"1" * 19 not in numbers


def plain_block(data: bytes, lines: int) -> bool:
    """Whether every one of the `lines` lines of `data` (its last without
    its "\n") has the fast shape, in a few passes over the whole block."""
    return (data.startswith(b"{") and data.endswith(b"}") and data.count(b"{") == lines == data.count(b"}")
            and data.count(b"\n{") == lines - 1 == data.count(b"}\n") and not data.translate(None, _ALLOWED)
            and _no_odd_token(data))


class Keywords:
    """Keywords as JSON strings, by plain replacement of each keyword and the
    delimiter after it (`:index ` -> `"index" `), the ones met so far first;
    only when a ':' is left are the block's others looked for.

    `keys`: a map's keys as prn writes them, after its "{" or after ", "
    (`, :time ` -> `,"time":`), so that the map reads as a JSON object: a
    ", " inside a vector would make the text no JSON, never other JSON."""

    def __init__(self) -> None:
        self.known: dict[bytes, bytes] = {}
        self.keys: dict[bytes, bytes] = {}

    def as_keys(self, data: bytes) -> bytes:
        for kw, quoted in self.keys.items():
            data = data.replace(kw, quoted)
        if b"{:" in data or b", :" in data:
            for kw in sorted(set(_MAP_KEY.findall(data)), key=len, reverse=True):
                before, name = (b"{", kw[2:-1]) if kw.startswith(b"{") else (b",", kw[3:-1])
                self.keys[kw] = before + b'"' + name + b'"' + _COLON
                data = data.replace(kw, self.keys[kw])
        return data

    def quote(self, data: bytes) -> bytes:
        for kw, quoted in self.known.items():
            data = data.replace(kw, quoted)
        if b":" in data:
            for kw in sorted(set(_KEYWORD.findall(data)), key=len, reverse=True):
                self.known[kw] = b'"' + kw[1:-1] + b'"' + kw[-1:]
                data = data.replace(kw, self.known[kw])
        return data


def as_json(data: bytes, keywords: Keywords, objects: bool = False) -> bytes | None:
    """Fast-shape lines as one JSON array of flat arrays (each map as
    [key, value, ...], keywords as their names), or with `objects` of JSON
    objects (as prn writes maps: ", " between entries); None if that is
    not JSON."""
    lines = json_lines(data, keywords, objects)
    return None if lines is None else b"[" + lines.replace(b"\n", b",") + b"]"


def json_lines(data: bytes, keywords: Keywords, objects: bool = False) -> bytes | None:
    """as_json's elements, one line each as the lines of `data` are; None
    if a keyword is left where no token starts."""
    if b"nil" in data:      # where a token starts (in a keyword it follows a letter or ":"); a nil left is not JSON
        data = data.replace(b" nil", b" null").replace(b"[nil", b"[null").replace(b",nil", b",null")
    if objects:
        data = keywords.as_keys(data)
    data = keywords.quote(data)
    if b":" in data:
        return None         # a keyword not where a token starts
    data = data.replace(b", ", b",").translate(_SPACES if objects else _BRACES)
    while b",," in data:
        data = data.replace(b",,", b",")
    data = data.replace(b"[,", b"[").replace(b",]", b"]").replace(b"\n,", b"\n").replace(b",\n", b"\n")
    data = data.strip(b",")
    return data.replace(_COLON, b":") if objects else data


def byte_blocks(path: Path, gzipped: bool, block_bytes: int) -> Iterator[bytes]:
    """The file's bytes in blocks of whole lines ("\r\n" and "\r" as "\n")."""
    with open_bytes(path, gzipped) as f:
        carry = b""
        while True:
            data = f.read(block_bytes)
            if not data:
                if carry:
                    yield _newlines(carry)
                return
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield _newlines(data[:cut])


def _newlines(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in data else data
