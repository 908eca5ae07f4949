"""Jepsen/Elle EDN histories -> logtrial's history.jsonl (docs/history-format.md,
"Importing Jepsen and Elle histories").

Jepsen's store writes history.edn with `prn`, one operation per line: a
`#jepsen.history.Op{:index 0, :time 12, :type :invoke, ...}` record (older
Jepsen and Elle's tests: a plain map). Elle histories are often one vector of
maps instead. Both are read here, streaming: a form is parsed as its lines
arrive, and each operation is converted and written before the next is read.

The EDN itself is read by checkers/history/edn_read.py.

Conversion (pure functions; `import_edn` alone touches files):

- `:type` :invoke/:ok/:fail/:info -> "invoke"/...; `:process` int >= 0, or
  :nemesis -> "nemesis"; `:f` keyword -> its name.
- `:index` kept (an op without one gets its position among the file's
  operations); indexes must increase. `:time` kept (ns), 0 when missing.
- `:value`: micro-ops `[:append k v]` / `[:r k v]` (list-append), `[:send k
  v]` / `[:send k [offset v]]` / `[:poll]` / `[:poll {k [[o v] ...]}]`
  (queue), and the key lists of :assign/:subscribe, with keywords as names and
  vectors as lists. Other values (nemesis ops, ...) are converted generically.
- keys: ints stay; keyword or string keys get ints 0, 1, ... in first-seen
  order (`ImportResult.key_ids` keeps the mapping). Mixing the two is refused.
- `:error`: a keyword -> [name, ""], `[:kw msg]` -> [name, msg], anything else
  -> ["error", text] (a string as is, other values as EDN text).
- other fields (`:exception`, `:node`, `:rebalance-log`, ...) are dropped.

Bad input raises EdnImportError naming the line and what is wrong.
"""
from __future__ import annotations

import io
import json
import math
import os
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Iterable, Iterator

from checkers.history.edn_read import (Char, EdnImportError, EList, EMap, ESet, Keyword, Symbol, Tagged, Vector,
                                       edn_str, is_gzipped, open_bytes, read_forms)

WORKLOADS = ("queue", "list-append")
TYPES = ("invoke", "ok", "fail", "info")
KEYS_SUFFIX = ".keys.json"


# ---------------------------------------------------------------- EDN -> JSON

def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def to_json(x):
    """A JSON-able value for any EDN value: keywords and symbols as their
    names, vectors/lists/sets as lists, maps as objects (keys as names or EDN
    text), tagged forms as their EDN text (#inst/#uuid: the string)."""
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, (Keyword, Symbol)):
        return x.name
    if isinstance(x, (Vector, EList, ESet)):
        return [to_json(v) for v in x]
    if isinstance(x, EMap):
        return {_json_key(k): to_json(v) for k, v in x.items()}
    if isinstance(x, float):
        return x if math.isfinite(x) else edn_str(x)
    if isinstance(x, (Decimal, Fraction)):
        return float(x) if (not isinstance(x, Decimal) or x.is_finite()) else str(x)
    if isinstance(x, Char):
        return x.value
    if isinstance(x, Tagged) and x.tag in ("inst", "uuid") and isinstance(x.value, str):
        return x.value
    return edn_str(x)


def _json_key(k) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, (Keyword, Symbol)):
        return k.name
    if _is_int(k):
        return str(k)
    return edn_str(k)


def _show(x, limit: int = 80) -> str:
    text = edn_str(x)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def error_pair(error) -> list[str]:
    """Jepsen's :error as [name, message]: :kw -> [kw, ""], [:kw msg ...]
    -> [kw, msg], a string -> ["error", string], anything else -> ["error",
    its EDN text]."""
    if isinstance(error, (Keyword, Symbol)):
        return [error.name, ""]
    if isinstance(error, (Vector, EList)) and error and isinstance(error[0], (Keyword, Symbol, str)):
        name = error[0] if isinstance(error[0], str) else error[0].name
        rest = error[1:]
        if not rest:
            return [name, ""]
        if len(rest) == 1 and isinstance(rest[0], str):
            return [name, rest[0]]
        return [name, " ".join(edn_str(v) for v in rest)]
    if isinstance(error, str):
        return ["error", error]
    return ["error", edn_str(error)]


K_TYPE, K_PROCESS, K_F, K_VALUE, K_INDEX, K_TIME, K_ERROR = (
    Keyword(n) for n in ("type", "process", "f", "value", "index", "time", "error"))
NEMESIS = Keyword("nemesis")
MICRO_OPS = {"queue": ("send", "poll"), "list-append": ("append", "r")}
WORKLOAD_OF_MOP = {"send": "queue", "poll": "queue", "append": "list-append", "r": "list-append"}
MOP_FS = {"queue": ("send", "poll", "txn"), "list-append": ("txn",)}
KEY_LIST_FS = {"queue": ("assign", "subscribe"), "list-append": ()}
QUEUE_ONLY_FS = ("send", "poll", "assign", "subscribe", "crash")


@dataclass
class Converter:
    """Turns op forms (from read_forms) into history events, one at a time.
    `workload` None: decided by the first micro-op (or queue-only f) seen."""
    workload: str | None = None
    key_ids: dict = field(default_factory=dict)      # original key -> int, when keys are not ints
    int_keys_line: int | None = None                  # first line with an int key
    position: int = 0
    last_index: int = -1

    def convert(self, line: int, form) -> dict:
        op = form.value if isinstance(form, Tagged) else form
        if not isinstance(op, EMap):
            raise EdnImportError(line, f"an operation must be a map, not {_show(form)}")
        position, self.position = self.position, self.position + 1
        event = {"index": self._index(line, op.get(K_INDEX, position)),
                 "time": self._time(line, op.get(K_TIME, 0)),
                 "type": self._type(line, op),
                 "process": self._process(line, op)}
        f = self._f(line, op)
        event["f"] = f
        value = op.get(K_VALUE)
        if event["process"] != "nemesis":
            value = self._client_value(line, f, value)
        else:
            value = to_json(value)
        event["value"] = value
        if op.get(K_ERROR) is not None:
            event["error"] = error_pair(op[K_ERROR])
        return event

    def _index(self, line: int, index) -> int:
        if not _is_int(index) or index < 0:
            raise EdnImportError(line, f":index must be an int >= 0, not {_show(index)}")
        if index <= self.last_index:
            raise EdnImportError(line, f":index {index} is not greater than the previous operation's "
                                       f"{self.last_index}: indexes must increase in file order")
        self.last_index = index
        return index

    @staticmethod
    def _time(line: int, time) -> int:
        if not _is_int(time):
            raise EdnImportError(line, f":time must be an int (nanoseconds), not {_show(time)}")
        return time

    @staticmethod
    def _type(line: int, op: EMap) -> str:
        t = op.get(K_TYPE)
        if t is None:
            raise EdnImportError(line, f"not an operation: no :type in {_show(op)}")
        if not isinstance(t, Keyword) or t.name not in TYPES:
            raise EdnImportError(line, f":type must be :invoke, :ok, :fail or :info, not {_show(t)}")
        return t.name

    @staticmethod
    def _process(line: int, op: EMap):
        p = op.get(K_PROCESS)
        if p is NEMESIS:
            return "nemesis"
        if not _is_int(p) or p < 0:
            what = "no :process" if K_PROCESS not in op else f":process {_show(p)}"
            raise EdnImportError(line, f"{what}: a process must be an int >= 0 or :nemesis")
        return p

    @staticmethod
    def _f(line: int, op: EMap) -> str:
        f = op.get(K_F)
        if isinstance(f, (Keyword, Symbol)):
            return f.name
        if isinstance(f, str) and f:
            return f
        what = "no :f" if K_F not in op else f":f {_show(f)}"
        raise EdnImportError(line, f"{what}: an operation's :f must be a keyword")

    # -- values of client operations

    def _decide(self, line: int, workload: str, why: str) -> None:
        if self.workload is None:
            self.workload = workload
        elif self.workload != workload:
            raise EdnImportError(line, f"{why} belongs to the {workload} workload, not {self.workload}")

    def _client_value(self, line: int, f: str, value):
        if self.workload is None and f in QUEUE_ONLY_FS:
            self._decide(line, "queue", f":f :{f}")
        if f in ("txn", "send", "poll") and isinstance(value, (Vector, EList)):
            return [self._mop(line, f, m) for m in value]
        if f in KEY_LIST_FS.get(self.workload, ()) and isinstance(value, (Vector, EList, ESet)):
            return [self._key(line, k) for k in value]
        return to_json(value)

    def _mop(self, line: int, f: str, m) -> list:
        if not isinstance(m, (Vector, EList)) or not m or not isinstance(m[0], Keyword):
            raise EdnImportError(line, f"a micro-op must be a vector like [:append k v] or [:send k v], "
                                       f"not {_show(m)}")
        name = m[0].name
        workload = WORKLOAD_OF_MOP.get(name)
        if workload is None:
            known = " or ".join(f":{n}" for w in WORKLOADS for n in MICRO_OPS[w])
            raise EdnImportError(line, f"unknown micro-op {_show(m)} (expected {known})")
        if workload != self.workload:
            self._decide(line, workload, f"micro-op {_show(m)}")
        if f not in MOP_FS[workload]:
            raise EdnImportError(line, f"a :{f} operation may not hold the micro-op {_show(m)}")
        if name == "poll":
            if len(m) == 1:
                return ["poll"]
            if len(m) != 2:
                raise EdnImportError(line, f"a poll micro-op must be [:poll] or [:poll {{k [[offset v] ...]}}], "
                                           f"not {_show(m)}")
            return ["poll", self._poll_result(line, m[1])]
        if len(m) != 3:
            shape = "[:send k v]" if name == "send" else f"[:{name} k v]"
            raise EdnImportError(line, f"a {name} micro-op must be {shape}, not {_show(m)}")
        return [name, self._key(line, m[1]), to_json(m[2])]

    def _poll_result(self, line: int, result):
        if result is None:
            return None
        if not isinstance(result, EMap):
            raise EdnImportError(line, f"a poll's result must be a map of key to [[offset value] ...], "
                                       f"not {_show(result)}")
        return {str(self._key(line, k)): to_json(v) for k, v in result.items()}

    def _key(self, line: int, k) -> int:
        if _is_int(k):
            if self.key_ids:
                raise EdnImportError(line, f"key {k} is an int, but earlier keys were not "
                                           f"(e.g. {_show(next(iter(self.key_ids)))}): mixed key kinds")
            if self.int_keys_line is None:
                self.int_keys_line = line
            return k
        if isinstance(k, (Keyword, str, Symbol)):
            if self.int_keys_line is not None:
                raise EdnImportError(line, f"key {_show(k)} is not an int, but keys were ints "
                                           f"(from line {self.int_keys_line}): mixed key kinds")
            kid = self.key_ids.get(k)
            if kid is None:
                kid = self.key_ids[k] = len(self.key_ids)
            return kid
        raise EdnImportError(line, f"key {_show(k)} must be an int, a keyword or a string")


def convert_forms(forms: Iterable[tuple[int, object]], converter: Converter) -> Iterator[dict]:
    for line, form in forms:
        yield converter.convert(line, form)


def event_json(event: dict) -> str:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def keys_json(key_ids: dict) -> str:
    """The key mapping as JSON: EDN text of each original key -> its int."""
    return json.dumps({edn_str(k): i for k, i in key_ids.items()}, indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- files

@dataclass
class ImportResult:
    out: Path
    events: int
    workload: str
    detected: bool                  # workload decided from the history, not given
    key_ids: dict                   # original key -> int ({} when keys were ints)
    keys_path: Path | None          # where key_ids was written


def keys_path_for(out: Path) -> Path:
    return out.with_name(out.name + KEYS_SUFFIX)


def import_edn(src: Path, out: Path, workload: str | None = None) -> ImportResult:
    """Convert the EDN history `src` to JSON Lines at `out` (and, when keys
    were not ints, their mapping at `<out>.keys.json`). Writes to temporary
    files renamed at the end: on EdnImportError (naming `src` and the line)
    nothing is written."""
    if workload is not None and workload not in WORKLOADS:
        raise ValueError(f"workload must be one of {WORKLOADS}, not {workload!r}")
    converter = Converter(workload=workload)
    keys_path = keys_path_for(out)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp_keys = keys_path.with_name(f".{keys_path.name}.{os.getpid()}.tmp")
    count = 0
    try:
        with io.TextIOWrapper(open_bytes(src, is_gzipped(src)), encoding="utf-8") as f_in, \
                open(tmp, "w", encoding="utf-8") as f_out:
            try:
                for event in convert_forms(read_forms(f_in), converter):
                    f_out.write(event_json(event))
                    f_out.write("\n")
                    count += 1
            except UnicodeDecodeError as e:
                raise EdnImportError(None, f"not UTF-8 text ({e})") from None
        if count == 0:
            raise EdnImportError(None, "no operations in the file")
        if converter.key_ids:
            tmp_keys.write_text(keys_json(converter.key_ids), encoding="utf-8")
            os.replace(tmp_keys, keys_path)
        elif keys_path.exists():
            keys_path.unlink()      # a stale mapping from an earlier import would mislead
        os.replace(tmp, out)
    except EdnImportError as e:
        raise e.in_file(str(src)) from None
    finally:
        for t in (tmp, tmp_keys):
            if t.exists():
                t.unlink()
    return ImportResult(out, count, converter.workload or "queue", workload is None,
                        dict(converter.key_ids), keys_path if converter.key_ids else None)

