"""A history file as its lines and the JSON parser to read them with.

The file is read and decoded in one go (`read_lines`), or in blocks of whole
lines (`line_blocks`, for files too large to hold), since a text-mode loop
over lines costs more than parsing them. Either way the results are those of
iterating it in text mode: universal newlines, strict UTF-8 and, on a bad
byte, the very same UnicodeDecodeError (the readers report it as bad input
at its file and line: `first_undecodable`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

# 19 digits in a row may be an integer beyond 64 bits, which orjson turns
# into a float where json keeps it exact: a file with such a run is read by
# json alone. Digits map to "1", every other byte to "0", then one search.
_DIGIT_MAP = bytes(0x31 if 0x30 <= b <= 0x39 else 0x30 for b in range(256))
_LONG_RUN = b"1" * 19


def _orjson_loads(text: str):
    """orjson (faster than json), falling back to json for whatever orjson
    refuses: json accepts more (NaN, lone surrogates) and its error messages
    are the ones reported. Both give the same objects for everything else."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


@dataclass(frozen=True)
class Lines:
    """`texts`: the lines without their line ends. `fast` parses a line in
    the common case; a ValueError from it sends the line to `careful` (the
    parser whose exceptions and messages are reported), given the line as
    text-mode iteration yields it (`original`). `first`: the file's line
    number of texts[0] (a block's lines start further down the file)."""
    texts: list[str]
    fast: Callable[[str], Any]
    careful: Callable[[str], Any]
    last_has_newline: bool
    first: int = 1

    def original(self, number: int) -> str:
        """Line `number` of the file (1-based, one of these lines) with its
        "\\n", as the file iterator gives it: json's error columns count it."""
        at = number - self.first
        text = self.texts[at]
        return text if at == len(self.texts) - 1 and not self.last_has_newline else text + "\n"


def _decoded(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # the error text-mode reading gives names the position in its own
        # buffer: raise that one, not ours
        with open(path, encoding="utf-8", errors="strict") as f:
            for _ in f:
                pass
        raise


def first_undecodable(path: Path) -> tuple[int, str]:
    """(line number, what is wrong) of the first byte of `path` that is not
    UTF-8, lines counted as text-mode reading counts them (universal
    newlines). Only for a file that failed to decode: it reads it whole."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start].decode("utf-8")
        line = before.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
        column = len(before) - max(before.rfind("\n"), before.rfind("\r"))
        return line, f"not UTF-8: byte 0x{data[e.start]:02x} at character {column} ({e.reason})"
    raise ValueError(f"{path} decodes as UTF-8")


def read_lines(path: Path, data: bytes | None = None) -> Lines:
    """The lines of `path`, whose bytes are `data` when the caller has read them."""
    return _lines(path, path.read_bytes() if data is None else data, 1)


# a block of about this many bytes holds ~500,000 queue events
BLOCK_BYTES = 64 << 20


def byte_blocks(path: Path, block_bytes: int = BLOCK_BYTES, start: int = 0,
                end: int | None = None) -> Iterator[bytes]:
    """The file's bytes in blocks of whole lines, about `block_bytes` each
    (the last one may lack its "\\n"). A block ends after a "\\n", so no
    "\\r\\n" and no UTF-8 character is split. `start`, `end`: a byte
    range of the file, both at the start of a line (end None: the end)."""
    with open(path, "rb") as f:
        f.seek(start)
        carry, left = b"", end - start if end is not None else None
        while True:
            data = f.read(block_bytes if left is None else min(block_bytes, left))
            if left is not None:
                left -= len(data)
            if not data:
                if carry:
                    yield carry
                return
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield data[:cut]


def line_blocks(path: Path, block_bytes: int = BLOCK_BYTES) -> Iterator[Lines]:
    """The file's lines in blocks of whole lines (byte_blocks)."""
    first = 1
    for data in byte_blocks(path, block_bytes):
        block = _lines(path, data, first)
        first += len(block.texts)
        yield block


def _lines(path: Path, data: bytes, first: int) -> Lines:
    text = _decoded(path, data)
    if "\r" in text:        # universal newlines, as text mode reads them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    texts = text.split("\n")
    last_has_newline = texts[-1] == ""
    if last_has_newline:
        texts.pop()
    if _LONG_RUN in data.translate(_DIGIT_MAP):
        return Lines(texts, json.loads, json.loads, last_has_newline, first)
    return Lines(texts, orjson.loads, _orjson_loads, last_has_newline, first)
