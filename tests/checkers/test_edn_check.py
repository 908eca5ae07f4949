"""`logtrial check history.edn`: an EDN history read directly
(checkers/history/edn_fast.py) reads as the JSON Lines `import-edn` writes
from it, checks the same, and reports what is wrong the way import-edn and
the validator do, with the EDN file's name and line."""
from __future__ import annotations

import gzip
import json
import random
import re
import sys
from pathlib import Path

import pytest

from checkers.api import check_history
from checkers.history.edn_convert import import_edn
from checkers.history import edn_bulk, edn_fast
from checkers.history.edn_fast import is_edn, read_edn_history
from checkers.history.edn_read import EdnImportError
from checkers.history.errors import HistoryError
from checkers.history.read import read_history
from checkers.options import CheckOptions
from tests.checkers.test_edn_import import G1C, LIST_APPEND_KEYWORD_KEYS, QUEUE

INT_KEYS = """\
{:index 0, :time -1, :type :invoke, :process 6, :f :txn, :value [[:append 9 1] [:r 4 nil] [:append 9 2] [:r 9 nil]]}
{:index 1, :time -1, :type :invoke, :process 9, :f :txn, :value [[:r 9 nil] [:append 9 3] [:r 8 nil] [:append 8 1]]}
{:index 2, :time -1, :type :ok, :process 6, :f :txn, :value [[:append 9 1] [:r 4 nil] [:append 9 2] [:r 9 [1 2]]]}
{:index 3, :time -1, :type :fail, :process 9, :f :txn, :value [[:r 9 nil] [:append 9 3] [:r 8 nil] [:append 8 1]]}
{:index 4, :time -1, :type :invoke, :process 9, :f :txn, :value [[:r 9 nil] [:r 8 nil]]}
{:index 5, :time -1, :type :ok, :process 9, :f :txn, :value [[:r 9 [1 2]] [:r 8 []]]}
"""

# the same operations in other shapes EDN allows: no commas, more spaces, a
# blank line, "\r\n", tags, a comment, keys written as keywords, an error
# given as a keyword and as a vector with a string, a nemesis op with a map
ODD_SHAPES = (
    '#jepsen.history.Op{:index 0 :time 5 :type :invoke :process 0 :f :txn :value [[:append :x 1] [:r :y nil]]}\r\n'
    '\n'
    '  {:index 1, :time 6, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}  \n'
    '; a comment\n'
    '{:index 2, :time 7, :type :info, :process :nemesis, :f :start, :value {"n1" #{"n2"}}}\n'
    '{:index 3, :time 8, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y []]], :node "n1"}\n'
    '{:index 4, :time 9, :type :fail, :process 1, :f :txn, :value [[:r :x nil]], :error :conflict}\n'
    '{:index 5, :time 10, :type :invoke, :process 1, :f :txn, :value [[:append :y 2]]}\n'
    '{:index 6, :time 11, :type :info, :process 1, :f :txn, :value [[:append :y 2]], :error [:timeout "slow"]}\n'
    '{:index 7, :time 12, :type :invoke, :process 2, :f :txn, :value [[:append :x 3.5] [:append :z -2]]}\n'
    '{:index 8, :time 13, :type :ok, :process 2, :f :txn, :value [[:append :x 3.5] [:append :z -2]]}\n'
    '{:index 9, :time 14, :type :info, :process :nemesis, :f :stop, :value [1e400 nil nil true 007]}\n'
)
VECTOR_OF_MAPS = "[{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n" \
                 " {:type :ok, :process 0, :f :txn, :value [[:append 1 1]]}]\n"

SAMPLES = {"keyword keys": LIST_APPEND_KEYWORD_KEYS, "g1c": G1C, "queue": QUEUE, "int keys": INT_KEYS,
           "odd shapes": ODD_SHAPES, "one vector": VECTOR_OF_MAPS}
WORKLOAD = {"queue": "queue"}


def _imported(tmp_path: Path, edn: Path, workload: str) -> Path:
    out = tmp_path / "imported" / "history.jsonl"
    out.parent.mkdir(exist_ok=True)
    import_edn(edn, out, workload)
    return out


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("fast", [True, False])
def test_an_edn_history_reads_as_its_import_does(tmp_path, name, fast):
    workload = WORKLOAD.get(name, "list-append")
    edn = tmp_path / "history.edn"
    edn.write_text(SAMPLES[name], encoding="utf-8", newline="")
    expected = read_history(_imported(tmp_path, edn, workload), workload)
    got = read_edn_history(edn, workload, fast=fast)
    # the same operations; the line numbers are the EDN file's (blank lines and comments count there)
    assert [row[:-2] for row in got.rows] == [row[:-2] for row in expected.rows]
    if name != "odd shapes":
        assert got.rows == expected.rows
    assert got.nemesis_events == expected.nemesis_events


def _history(rng: random.Random, ops: int) -> str:
    """A random list-append history in prn's shape, some lines in others."""
    lines, values, pending = [], {}, {}
    index = 0
    for _ in range(ops):
        p = rng.randrange(4)
        if p in pending:
            mops = pending.pop(p)
            kind = rng.choice(["ok", "ok", "fail", "info"])
            done = [[f, k, (sorted(rng.sample(range(1, 20), rng.randrange(3))) if f == ":r" else v)]
                    for f, k, v in mops] if kind == "ok" else mops
            line = f"{{:index {index}, :time {index * 10}, :type :{kind}, :process {p}, :f :txn, :value " \
                   f"{_vec(done)}}}"
            if kind != "ok" and rng.random() < 0.5:
                line = line[:-1] + rng.choice([", :error :timeout}", ', :error [:aborted "no"]}'])
        else:
            mops = []
            for _ in range(rng.randrange(1, 4)):
                k = rng.randrange(3)
                if rng.random() < 0.5:
                    values[k] = values.get(k, 0) + 1
                    mops.append([":append", k, values[k]])
                else:
                    mops.append([":r", k, None])
            pending[p] = mops
            line = f"{{:index {index}, :time {index * 10}, :type :invoke, :process {p}, :f :txn, :value " \
                   f"{_vec(mops)}}}"
        if rng.random() < 0.2:
            line = "#jepsen.history.Op" + line
        if rng.random() < 0.1:
            line = line.replace(", ", " ")
        lines.append(line)
        index += 1
    return "\n".join(lines) + "\n"


def _vec(mops) -> str:
    def one(x):
        return "nil" if x is None else f"[{' '.join(map(str, x))}]" if isinstance(x, list) else str(x)
    return "[" + " ".join(f"[{f} {k} {one(v)}]" for f, k, v in mops) + "]"


@pytest.mark.parametrize("seed", range(8))
def test_random_histories_read_and_check_as_their_imports_do(tmp_path, seed):
    edn = tmp_path / "h.edn"
    edn.write_text(_history(random.Random(seed), 300))
    imported = _imported(tmp_path, edn, "list-append")
    # small blocks: lines of both shapes in one block, and many blocks
    assert read_edn_history(edn, "list-append", block_bytes=2048).rows == \
        read_history(imported, "list-append").rows
    options = CheckOptions(consistency_model="serializable")
    a = check_history(edn, "list-append", out_dir=tmp_path / "a", options=options)
    b = check_history(imported, "list-append", out_dir=tmp_path / "b", options=options)
    assert a.pop("checker")["history"] == str(edn)
    b.pop("checker")
    assert a == b


def test_recognised_by_content_gzipped_or_not(tmp_path):
    edn, gz, jsonl = tmp_path / "history.txt", tmp_path / "history", tmp_path / "history.jsonl"
    edn.write_text(INT_KEYS)
    gz.write_bytes(gzip.compress(INT_KEYS.encode()))
    jsonl.write_text('{"index": 0, "time": 0, "type": "invoke", "process": 0, "f": "txn", "value": []}\n')
    assert is_edn(edn) and is_edn(gz) and not is_edn(jsonl)
    assert read_edn_history(gz, "list-append").rows == read_edn_history(edn, "list-append").rows
    results = check_history(gz, "list-append", out_dir=tmp_path / "out")
    assert results["checker"]["engine"] == "local"


@pytest.mark.parametrize("edn", [
    '{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
    '{:type :ok, :process 0, :f :txn, :value [[:append 1 1]]\n',
    '{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
    '{:type :done, :process 0, :f :txn, :value [[:append 1 1]]}\n',
    '{:index 5, :type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
    '{:index 5, :type :ok, :process 0, :f :txn, :value [[:append 1 1]]}\n',
    '{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
    '{:type :invoke, :process 1, :f :txn, :value [[:append :x 1]]}\n',
    '{:type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n',
    "; nothing\n",
    # what the bulk read (checkers/history/edn_bulk.py) would let through: indexes that
    # increase per process but not over the file, and a client operation other than a txn
    # (the Converter refuses a :send of list-append's micro-ops, the check's workload its own)
    '{:index 5, :time 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
    '{:index 3, :time 0, :type :invoke, :process 1, :f :txn, :value [[:append 1 2]]}\n',
    '{:index 0, :time 0, :type :invoke, :process 0, :f :send, :value [[:append 1 1]]}\n',
])
def test_bad_edn_is_reported_as_import_edn_reports_it(tmp_path, edn):
    src = tmp_path / "history.edn"
    src.write_text(edn)
    with pytest.raises(EdnImportError) as imported:
        import_edn(src, tmp_path / "out.jsonl", "list-append")
    with pytest.raises(HistoryError) as checked:
        read_edn_history(src, "list-append")
    where = f"{src}:{imported.value.line}" if imported.value.line else f"{src}"
    assert str(checked.value) == f"bad history:\n  {where}: {imported.value.what}"


def test_problems_the_validator_finds_name_the_edn_file_and_its_lines(tmp_path):
    src = tmp_path / "history.edn"
    src.write_text('{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
                   '{:index 1, :type :invoke, :process 0, :f :txn, :value [[:append 1 2]]}\n'
                   '{:index 2, :type :ok, :process 1, :f :txn, :value [[:append 1 3]]}\n')
    imported = _imported(tmp_path, src, "list-append")
    with pytest.raises(HistoryError) as want:
        read_history(imported, "list-append")
    with pytest.raises(HistoryError) as got:
        read_edn_history(src, "list-append")
    assert str(got.value) == str(want.value).replace(str(imported), str(src))
    assert f"{src}:2: " in str(got.value)


def test_check_of_an_edn_history_writes_the_results_of_its_import(tmp_path):
    edn = tmp_path / "run" / "history.edn"
    edn.parent.mkdir()
    edn.write_text(G1C)
    imported = _imported(tmp_path, edn, "list-append")
    got = check_history(edn, "list-append")
    want = check_history(imported, "list-append")
    assert json.loads((edn.parent / "results.json").read_text())["anomaly_types"] == want["anomaly_types"]
    assert "G1c" in got["anomaly_types"]
    got.pop("checker"), want.pop("checker")
    assert got == want


def _prn_history(rng: random.Random, ops: int) -> str:
    """A random list-append history all in prn's shape, with no error: the
    shape checkers/history/edn_bulk.py reads in bulk."""
    text = _history(rng, ops)
    lines = [line.replace("#jepsen.history.Op", "") for line in text.splitlines()]
    lines = [re.sub(r",? :error .*}$", "}", line) for line in lines]
    return "\n".join(re.sub(r",? :(time|type|process|f|value) ", r", :\1 ", line) for line in lines) + "\n"


@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize("block_bytes", [4096, 1 << 20])     # many blocks, and one cut in pieces
def test_the_bulk_read_gives_the_import_rows_on_any_number_of_workers(tmp_path, monkeypatch, workers,
                                                                      block_bytes):
    edn = tmp_path / "h.edn"
    edn.write_text(_prn_history(random.Random(workers), 400))
    want = read_history(_imported(tmp_path, edn, "list-append"), "list-append").rows
    # the readers of other shapes would hide a bulk path that gave up
    monkeypatch.setattr(edn_fast, "_fast_blocks", _never)
    monkeypatch.setattr(edn_fast, "_full_blocks", _never)
    # workers for a small file: keywords learnt from its first 1 KiB, the rest shared out
    monkeypatch.setattr(edn_bulk, "_LEARN_BYTES", 1024)
    monkeypatch.setattr(edn_bulk, "_PARALLEL_BYTES", 0)
    started = []
    remote = edn_bulk._remote
    monkeypatch.setattr(edn_bulk, "_remote", lambda *a: (started.append(1), remote(*a)))
    assert read_edn_history(edn, "list-append", block_bytes=block_bytes, workers=workers).rows == want
    assert len(started) == workers


def _never(*_):
    raise AssertionError("read otherwise than in bulk")


def test_an_error_field_is_converted_as_import_edn_converts_it(tmp_path):
    src = tmp_path / "history.edn"
    src.write_text('{:index 0, :time 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
                   '{:index 1, :time 5, :type :fail, :process 0, :f :txn, :value [[:append 1 1]], :error :conflict}\n')
    got = read_edn_history(src, "list-append").rows
    assert got == read_history(_imported(tmp_path, src, "list-append"), "list-append").rows
    assert "conflict" in got[0]


def test_blocks_a_failed_worker_took_are_converted_here(tmp_path, monkeypatch):
    edn = tmp_path / "h.edn"
    edn.write_text(_prn_history(random.Random(7), 400))
    want = read_history(_imported(tmp_path, edn, "list-append"), "list-append").rows
    monkeypatch.setattr(edn_fast, "_fast_blocks", _never)
    monkeypatch.setattr(edn_bulk, "_LEARN_BYTES", 1024)
    monkeypatch.setattr(edn_bulk, "_PARALLEL_BYTES", 0)
    # a worker that ends before it reads anything, and one that cannot be started
    for argv in ([sys.executable, "-c", "pass"], [str(tmp_path / "no-such-python")]):
        monkeypatch.setattr(edn_bulk, "_worker_argv", lambda argv=argv: argv)
        assert read_edn_history(edn, "list-append", block_bytes=4096, workers=2).rows == want
