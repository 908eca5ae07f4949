"""Reading EDN, as Clojure's `prn` writes it, streaming: a form is parsed as its
lines arrive (checkers/history/edn_convert.py turns Jepsen and Elle histories
into logtrial's).

The EDN reader covers what Clojure's `prn` writes: maps, vectors, lists,
sets, keywords, symbols, strings, characters, ints (`1N`), floats (`1.5M`),
ratios, nil, true/false, `##Inf`/`##NaN`, `#_` discards, namespaced maps
(`#:ns{...}`) and tagged forms (`#jepsen.history.Op{...}`, `#object[...]`,
`#error {...}`, `#inst "..."`), a form spanning several lines included.

Bad input raises EdnImportError naming the line and what is wrong.
"""
from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import IO, Iterable, Iterator

GZIP_MAGIC = b"\x1f\x8b"


def is_gzipped(path: Path) -> bool:
    """By content, not name: Jepsen's stores keep `history.edn`, benchmarks `.edn.gz`."""
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def open_bytes(path: Path, gzipped: bool) -> IO[bytes]:
    return gzip.open(path, "rb") if gzipped else open(path, "rb")



class EdnImportError(ValueError):
    """What is wrong, and on which (1-based) line of the EDN file."""

    def __init__(self, line: int | None, what: str, file: str | None = None):
        self.line, self.what, self.file = line, what, file
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ":".join(str(p) for p in (self.file, self.line) if p is not None)
        return f"{where}: {self.what}" if where else self.what

    def in_file(self, file: str) -> "EdnImportError":
        return EdnImportError(self.line, self.what, file)


# ---------------------------------------------------------------- the EDN data model

class Keyword:
    """`:name` or `:ns/name`; interned, so `is`/== and hash are by identity."""
    __slots__ = ("name",)
    _interned: dict[str, "Keyword"] = {}

    def __new__(cls, name: str) -> "Keyword":
        kw = cls._interned.get(name)
        if kw is None:
            kw = object.__new__(cls)
            kw.name = name
            cls._interned[name] = kw
        return kw

    def __repr__(self) -> str:
        return ":" + self.name


class Symbol:
    """A bare symbol (`foo`, `clojure.core$fn`); interned like Keyword."""
    __slots__ = ("name",)
    _interned: dict[str, "Symbol"] = {}

    def __new__(cls, name: str) -> "Symbol":
        sym = cls._interned.get(name)
        if sym is None:
            sym = object.__new__(cls)
            sym.name = name
            cls._interned[name] = sym
        return sym

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Char:
    value: str


@dataclass(frozen=True)
class Tagged:
    tag: str           # without the '#'
    value: object


class Vector(tuple):
    """[...]"""


class EList(tuple):
    """(...)"""


class ESet(tuple):
    """#{...}, in the order written."""


class EMap(dict):
    """{...}; hashable, so a map may be a key or a set element."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))


def kw(name: str) -> Keyword:
    return Keyword(name)


# ---------------------------------------------------------------- the EDN reader

_DELIM = r'\s,\[\](){}"\\;'
_TOKEN = re.compile(rf"""
  [\s,]*
  (?:
    (?P<kw>:[^{_DELIM}]+)
  | (?P<int>[+-]?[0-9]+)(?![^{_DELIM}])
  | (?P<open>[\[({{]|\#\{{)
  | (?P<close>[\])}}])
  | (?P<sym>(?![+-][0-9])[^{_DELIM}\#:0-9'`~@^][^{_DELIM}]*)
  | (?P<str>"[^"\\]*(?:\\.[^"\\]*)*")
  | (?P<eol>\Z)
  | (?P<comment>;[^\n]*)
  | (?P<unterminated>")
  | (?P<regex>\#"[^"\\]*(?:\\.[^"\\]*)*")
  | (?P<disc>\#_)
  | (?P<special>\#\#[^{_DELIM}]*)
  | (?P<nsmap>\#::?[^{_DELIM}]*(?=\{{))
  | (?P<tag>\#[A-Za-z][^{_DELIM}]*)
  | (?P<char>\\(?:newline|space|tab|return|backspace|formfeed|u[0-9a-fA-F]{{4}}|o[0-7]{{1,3}}|.))
  | (?P<num>[+-]?[0-9][^{_DELIM}]*)
  | (?P<bad>.)
  )
""", re.X | re.S)

_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)N?")
_FLOAT = re.compile(r"[+-]?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?M?")
_RATIO = re.compile(r"[+-]?[0-9]+/[0-9]+")
_RADIX = re.compile(r"([+-]?)(?:0[xX]([0-9a-fA-F]+)|([0-9]{1,2})[rR]([0-9a-zA-Z]+)|0([0-7]+))N?")
_CHARS = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r", "backspace": "\b", "formfeed": "\f"}
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/"}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|[0-7]{1,3}|.)", re.S)
_SPECIAL = {"##Inf": math.inf, "##-Inf": -math.inf, "##NaN": math.nan}
_CLOSER = {"[": "]", "(": ")", "{": "}", "#{": "}"}
_NAMED = {"nil": None, "true": True, "false": False}


def _unescape(match: re.Match) -> str:
    e = match.group(1)
    if e in _ESCAPES:
        return _ESCAPES[e]
    if e[0] == "u" and len(e) == 5:
        return chr(int(e[1:], 16))
    if e.isdigit():
        return chr(int(e, 8))
    raise ValueError(f"bad escape \\{e} in a string")


def _string(text: str) -> str:
    body = text[1:-1]
    return _ESCAPE.sub(_unescape, body) if "\\" in body else body


def _number(text: str):
    if _INT.fullmatch(text):
        return int(text.rstrip("N"))
    if _FLOAT.fullmatch(text):
        return Decimal(text[:-1]) if text.endswith("M") else float(text)
    if _RATIO.fullmatch(text):
        return Fraction(text)
    m = _RADIX.fullmatch(text)
    if m:
        sign, hexa, base, digits, octal = m.groups()
        n = int(hexa, 16) if hexa else int(digits, int(base)) if base else int(octal, 8)
        return -n if sign == "-" else n
    raise ValueError(f"bad number {text!r}")


def _char(text: str) -> Char:
    name = text[1:]
    if name in _CHARS:
        return Char(_CHARS[name])
    if len(name) == 5 and name[0] == "u":
        return Char(chr(int(name[1:], 16)))
    if len(name) > 1 and name[0] == "o":
        return Char(chr(int(name[1:], 8)))
    return Char(name)


class _Frame:
    __slots__ = ("opener", "items", "line", "prefixes", "elem_line")

    def __init__(self, opener: str, line: int):
        self.opener, self.items, self.line = opener, [], line
        self.prefixes: list[tuple[str, str, int]] = []   # ("tag"|"disc"|"nsmap", text, line)
        self.elem_line: int | None = None


def _build(frame: _Frame):
    items = frame.items
    if frame.opener == "[":
        return Vector(items)
    if frame.opener == "(":
        return EList(items)
    if frame.opener == "#{":
        return ESet(items)
    if len(items) % 2:
        raise EdnImportError(frame.line, f"a map needs an even number of forms, this one (from line "
                                         f"{frame.line}) has {len(items)}")
    try:
        return EMap(zip(items[::2], items[1::2]))
    except TypeError as e:
        raise EdnImportError(frame.line, f"a map key cannot be used as one ({e})") from e


def _qualify(ns: str, value, line: int):
    """#:ns{:a 1} -> {:ns/a 1}."""
    if not isinstance(value, EMap):
        raise EdnImportError(line, f"#:{ns} must be followed by a map")
    return EMap((Keyword(f"{ns}/{k.name}") if isinstance(k, Keyword) and "/" not in k.name else k, v)
                for k, v in value.items())


def read_forms(lines: Iterable[str]) -> Iterator[tuple[int, object]]:
    """Yield (line, form) for each operation form in EDN text given as lines:
    each top-level form, or, when the text is one top-level vector or list,
    each of its elements. `line` (1-based) is where the form starts. Raises
    EdnImportError on malformed EDN."""
    root = _Frame("", 0)
    stack: list[_Frame] = [root]
    wrapped: _Frame | None = None               # the top-level vector/list of ops, if the text is one
    wrapper_closed = False
    seen_any = False                            # any token seen at the top level yet
    line_iter = iter(lines)
    line_no = 0
    buf = ""
    pos = 0
    buf_line = 0                                # line number of buf[0] (buf is one line, or a string's lines)
    keywords: dict[str, Keyword] = {}
    match = _TOKEN.match
    frame = root

    def emit_or_store(value, line: int):
        """A value ended in `frame` with prefixes pending or at an op's level:
        apply the prefixes; return (start line, op) to emit, or None."""
        while frame.prefixes:
            kind, text, pline = frame.prefixes.pop()
            if kind == "disc":
                if not frame.prefixes:
                    frame.elem_line = None
                return None
            value = Tagged(text, value) if kind == "tag" else _qualify(text, value, pline)
        start = frame.elem_line if frame.elem_line is not None else line
        frame.elem_line = None
        if frame is root:
            if wrapper_closed:
                raise EdnImportError(start, "more text after the top-level vector of operations")
            return start, value
        if frame is wrapped:
            return start, value
        frame.items.append(value)
        return None

    while True:
        m = match(buf, pos)
        kind = m.lastgroup
        if kind == "eol":
            nxt = next(line_iter, None)
            if nxt is None:
                break
            line_no += 1
            buf, pos, buf_line = nxt, 0, line_no
            continue
        pos = m.end()
        text = m[kind]
        if kind == "kw":
            value = keywords.get(text)
            if value is None:
                value = keywords[text] = Keyword(text[2:] if text.startswith("::") else text[1:])
        elif kind == "int":
            value = int(text)
        elif kind == "open":
            line = line_no if buf_line == line_no else buf_line + buf.count("\n", 0, m.start(kind))
            if frame.elem_line is None:
                frame.elem_line = line
            if frame is root and wrapper_closed:
                raise EdnImportError(line, "more text after the top-level vector of operations")
            new = _Frame(text, line)
            if not seen_any and text in ("[", "(") and frame is root and not frame.prefixes:
                wrapped = new
            seen_any = True
            stack.append(new)
            frame = new
            continue
        elif kind == "close":
            line = line_no if buf_line == line_no else buf_line + buf.count("\n", 0, m.start(kind))
            if frame is root:
                raise EdnImportError(line, f"unmatched '{text}'")
            if _CLOSER[frame.opener] != text:
                raise EdnImportError(line, f"'{frame.opener}' opened on line {frame.line} is closed by '{text}'")
            if frame.prefixes:
                raise EdnImportError(line, f"'#{frame.prefixes[-1][1]}' is not followed by a form")
            stack.pop()
            closed, frame = frame, stack[-1]
            if closed is wrapped:
                wrapper_closed = True
                frame.elem_line = None
                continue
            value = _build(closed)
        elif kind == "sym":
            value = _NAMED[text] if text in _NAMED else Symbol(text)
        elif kind == "comment":
            continue
        else:
            line = line_no if buf_line == line_no else buf_line + buf.count("\n", 0, m.start(kind))
            if kind == "unterminated":
                nxt = next(line_iter, None)
                if nxt is None:
                    raise EdnImportError(line, "a string is never closed (missing '\"')")
                line_no += 1
                buf, pos, buf_line = buf[pos - 1:] + nxt, 0, line
                continue
            try:
                if kind == "str":
                    value = _string(text)
                elif kind == "num":
                    value = _number(text)
                elif kind == "char":
                    value = _char(text)
                elif kind == "regex":
                    value = Tagged("regex", text[2:-1])
                elif kind == "special":
                    if text not in _SPECIAL:
                        raise ValueError(f"unknown symbolic value {text}")
                    value = _SPECIAL[text]
                elif kind in ("tag", "disc", "nsmap"):
                    if frame.elem_line is None:
                        frame.elem_line = line
                    seen_any = True
                    frame.prefixes.append((kind, text.lstrip("#:") if kind == "nsmap" else text[1:], line))
                    continue
                else:
                    raise ValueError(f"unexpected character {text!r}")
            except ValueError as e:
                raise EdnImportError(line, str(e)) from None
        # a value ended in `frame`
        if frame.prefixes or frame is root or frame is wrapped:
            seen_any = True
            line = line_no if buf_line == line_no else buf_line + buf.count("\n", 0, m.start(kind))
            if frame.elem_line is None:
                frame.elem_line = line
            done = emit_or_store(value, line)
            if done is not None:
                yield done
        else:
            frame.items.append(value)
    if len(stack) > 1:
        frame = stack[-1]
        raise EdnImportError(frame.line, f"'{frame.opener}' opened on line {frame.line} is never closed")
    if stack[0].prefixes:
        _, text, line = stack[0].prefixes[-1]
        raise EdnImportError(line, f"'#{text}' is not followed by a form")


def edn_str(x) -> str:
    """EDN text of a value read by read_forms (as Clojure's pr would write it)."""
    if x is None:
        return "nil"
    if x is True:
        return "true"
    if x is False:
        return "false"
    if isinstance(x, Keyword):
        return ":" + x.name
    if isinstance(x, Symbol):
        return x.name
    if isinstance(x, str):
        return json.dumps(x, ensure_ascii=False)
    if isinstance(x, float):
        return "##NaN" if x != x else "##Inf" if x == math.inf else "##-Inf" if x == -math.inf else repr(x)
    if isinstance(x, Decimal):
        return f"{x}M"
    if isinstance(x, (int, Fraction)):
        return str(x)
    if isinstance(x, Char):
        named = {v: k for k, v in _CHARS.items()}
        return "\\" + named.get(x.value, x.value)
    if isinstance(x, Tagged):
        if x.tag == "regex":
            return f'#"{x.value}"'
        return f"#{x.tag} {edn_str(x.value)}" if not isinstance(x.value, (Vector, EList, ESet, EMap)) \
            else f"#{x.tag}{edn_str(x.value)}"
    if isinstance(x, EMap):
        return "{" + ", ".join(f"{edn_str(k)} {edn_str(v)}" for k, v in x.items()) + "}"
    if isinstance(x, ESet):
        return "#{" + " ".join(edn_str(v) for v in x) + "}"
    if isinstance(x, EList):
        return "(" + " ".join(edn_str(v) for v in x) + ")"
    if isinstance(x, (Vector, tuple, list)):
        return "[" + " ".join(edn_str(v) for v in x) + "]"
    return str(x)


