"""`logtrial import-edn`: Jepsen/Elle EDN histories -> history.jsonl
(checkers/history/edn_read.py, edn_convert.py), through the real CLI entry point."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from common import exit_codes
from harness.cli import main
from checkers.history.edn_convert import error_pair
from checkers.history.edn_read import EdnImportError, EMap, ESet, Keyword, Symbol, Tagged, Vector, read_forms


def run(*args: str):
    return CliRunner().invoke(main, ["import-edn", *args], catch_exceptions=False)


def convert(tmp_path: Path, edn: str, *args: str, name: str = "history.edn"):
    src = tmp_path / name
    src.write_text(edn, encoding="utf-8")
    result = run(str(src), *args)
    return src, result


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------- list-append

LIST_APPEND_KEYWORD_KEYS = """\
#jepsen.history.Op{:index 0, :time 1000, :type :invoke, :process 0, :f :txn, :value [[:append :x 1] [:r :y nil]]}
#jepsen.history.Op{:index 1, :time 1100, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
#jepsen.history.Op{:index 2, :time 1500, :type :info, :process :nemesis, :f :start-partition, :value :majority}
#jepsen.history.Op{:index 3, :time 2000, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y nil]]}
#jepsen.history.Op{:index 4, :time 2100, :type :ok, :process 1, :f :txn, :value [[:r :x [1]]]}
#jepsen.history.Op{:index 5, :time 2200, :type :info, :process :nemesis, :f :start-partition, :value [:isolated {"n1" #{"n2" "n3"}}]}
#jepsen.history.Op{:index 6, :time 3000, :type :invoke, :process 0, :f :txn, :value [[:append :z 2]]}
#jepsen.history.Op{:index 7, :time 3100, :type :fail, :process 0, :f :txn, :value [[:append :z 2]], :error [:abort "txn aborted"]}
#jepsen.history.Op{:index 8, :time 4000, :type :invoke, :process 1, :f :txn, :value [[:append :y 3] [:r :x nil]]}
#jepsen.history.Op{:index 9, :time 5000, :type :info, :process 1, :f :txn, :value [[:append :y 3] [:r :x nil]], :error :timeout, :exception {:via [{:type java.net.SocketTimeoutException}]}}
#jepsen.history.Op{:index 10, :time 6000, :type :invoke, :process 2, :f :txn, :value [[:append :x 4]]}
"""


def test_list_append_with_keyword_keys_nil_reads_nemesis_errors_and_an_unfinished_op(tmp_path):
    src, result = convert(tmp_path, LIST_APPEND_KEYWORD_KEYS)
    assert result.exit_code == 0, result.output
    out = tmp_path / "history.jsonl"
    assert lines_of(out) == [
        '{"index":0,"time":1000,"type":"invoke","process":0,"f":"txn","value":[["append",0,1],["r",1,null]]}',
        '{"index":1,"time":1100,"type":"invoke","process":1,"f":"txn","value":[["r",0,null]]}',
        '{"index":2,"time":1500,"type":"info","process":"nemesis","f":"start-partition","value":"majority"}',
        '{"index":3,"time":2000,"type":"ok","process":0,"f":"txn","value":[["append",0,1],["r",1,null]]}',
        '{"index":4,"time":2100,"type":"ok","process":1,"f":"txn","value":[["r",0,[1]]]}',
        '{"index":5,"time":2200,"type":"info","process":"nemesis","f":"start-partition",'
        '"value":["isolated",{"n1":["n2","n3"]}]}',
        '{"index":6,"time":3000,"type":"invoke","process":0,"f":"txn","value":[["append",2,2]]}',
        '{"index":7,"time":3100,"type":"fail","process":0,"f":"txn","value":[["append",2,2]],'
        '"error":["abort","txn aborted"]}',
        '{"index":8,"time":4000,"type":"invoke","process":1,"f":"txn","value":[["append",1,3],["r",0,null]]}',
        '{"index":9,"time":5000,"type":"info","process":1,"f":"txn","value":[["append",1,3],["r",0,null]],'
        '"error":["timeout",""]}',
        '{"index":10,"time":6000,"type":"invoke","process":2,"f":"txn","value":[["append",0,4]]}',
    ]
    keys = tmp_path / "history.jsonl.keys.json"
    assert json.loads(keys.read_text()) == {":x": 0, ":y": 1, ":z": 2}
    assert "keys were not ints" in result.stderr and str(keys) in result.stderr
    assert "workload: list-append (detected" in result.stderr
    assert f"logtrial check {out} --workload list-append" in result.stdout


def test_a_gzipped_history_imports_as_its_text_does_beside_it(tmp_path):
    """Jepsen's stores and ../shared/bench keep `history.edn.gz`: read through
    gzip by content, written as `history.jsonl` beside it."""
    _, plain = convert(tmp_path, LIST_APPEND_KEYWORD_KEYS)
    assert plain.exit_code == 0, plain.output
    expected = lines_of(tmp_path / "history.jsonl")
    (tmp_path / "history.jsonl").unlink()
    src = tmp_path / "history.edn.gz"
    src.write_bytes(gzip.compress(LIST_APPEND_KEYWORD_KEYS.encode()))
    result = run(str(src))
    assert result.exit_code == 0, result.output
    assert lines_of(tmp_path / "history.jsonl") == expected


ELLE_VECTOR = """\
; Elle's tests write one vector of plain maps, often across lines
[{:type :invoke, :f :txn, :value [[:append 5 1] [:r 6 nil]], :process 0}
 {:type :ok,     :f :txn, :value [[:append 5 1] [:r 6 []]],  :process 0}
 #_{:type :invoke, :f :txn, :value [[:r 5 nil]], :process 9}
 {:type :invoke, :f :txn, :value [[:r 5 nil]], :process 1, :time 7}
 {:type :ok, :f :txn,
  :value [[:r 5 [1]]], :process 1, :time 8}]
"""


def test_one_vector_of_plain_maps_across_lines_without_index_or_time(tmp_path):
    out = tmp_path / "elle.jsonl"
    _, result = convert(tmp_path, ELLE_VECTOR, "--out", str(out), "--workload", "list-append")
    assert result.exit_code == 0, result.output
    assert lines_of(out) == [
        '{"index":0,"time":0,"type":"invoke","process":0,"f":"txn","value":[["append",5,1],["r",6,null]]}',
        '{"index":1,"time":0,"type":"ok","process":0,"f":"txn","value":[["append",5,1],["r",6,[]]]}',
        '{"index":2,"time":7,"type":"invoke","process":1,"f":"txn","value":[["r",5,null]]}',
        '{"index":3,"time":8,"type":"ok","process":1,"f":"txn","value":[["r",5,[1]]]}',
    ]
    assert not (tmp_path / "elle.jsonl.keys.json").exists()
    assert "keys were not ints" not in result.stderr
    assert "workload: list-append (as given)" in result.stderr


# ---------------------------------------------------------------- queue

QUEUE = """\
{:index 0, :time 10, :type :invoke, :process 0, :f :assign, :value [3 4]}
{:index 1, :time 11, :type :ok, :process 0, :f :assign, :value [3 4]}
{:index 2, :time 20, :type :invoke, :process 1, :f :send, :value [[:send 3 17]]}
{:index 3, :time 21, :type :ok, :process 1, :f :send, :value [[:send 3 [41 17]]]}
{:index 4, :time 30, :type :invoke, :process 0, :f :poll, :value [[:poll]]}
{:index 5, :time 31, :type :ok, :process 0, :f :poll, :value [[:poll {3 [[40 16] [41 17]], 4 []}]], :poll-ms 1000}
{:index 6, :time 40, :type :invoke, :process 1, :f :txn, :value [[:send 4 18] [:poll]]}
{:index 7, :time 41, :type :fail, :process 1, :f :txn, :value [[:send 4 18] [:poll]], :error {:type :abort, :code 48}}
{:index 8, :time 50, :type :invoke, :process 1, :f :send, :value [[:send 4 19]]}
{:index 9, :time 59, :type :info, :process 1, :f :send, :value [[:send 4 [nil 19]]], :error "Timed out"}
{:index 10, :time 60, :type :info, :process :nemesis, :f :kill, :value {"n1" :killed}}
{:index 11, :time 70, :type :invoke, :process 0, :f :crash, :value nil}
{:index 12, :time 71, :type :info, :process 0, :f :crash, :value nil}
{:index 13, :time 80, :type :invoke, :process 2, :f :debug-topic-partitions, :value (3 4)}
{:index 14, :time 81, :type :ok, :process 2, :f :debug-topic-partitions, :value {3 {:leader 1}}}
{:index 15, :time 90, :type :invoke, :process 2, :f :subscribe, :value [3 4]}
{:index 16, :time 91, :type :fail, :process 2, :f :subscribe, :value [3 4], :error [:NOT_COORDINATOR]}
"""


def test_queue_sends_polls_txns_assign_crash_and_the_error_shapes(tmp_path):
    _, result = convert(tmp_path, QUEUE)
    assert result.exit_code == 0, result.output
    assert lines_of(tmp_path / "history.jsonl") == [
        '{"index":0,"time":10,"type":"invoke","process":0,"f":"assign","value":[3,4]}',
        '{"index":1,"time":11,"type":"ok","process":0,"f":"assign","value":[3,4]}',
        '{"index":2,"time":20,"type":"invoke","process":1,"f":"send","value":[["send",3,17]]}',
        '{"index":3,"time":21,"type":"ok","process":1,"f":"send","value":[["send",3,[41,17]]]}',
        '{"index":4,"time":30,"type":"invoke","process":0,"f":"poll","value":[["poll"]]}',
        '{"index":5,"time":31,"type":"ok","process":0,"f":"poll","value":[["poll",{"3":[[40,16],[41,17]],"4":[]}]]}',
        '{"index":6,"time":40,"type":"invoke","process":1,"f":"txn","value":[["send",4,18],["poll"]]}',
        '{"index":7,"time":41,"type":"fail","process":1,"f":"txn","value":[["send",4,18],["poll"]],'
        '"error":["error","{:type :abort, :code 48}"]}',
        '{"index":8,"time":50,"type":"invoke","process":1,"f":"send","value":[["send",4,19]]}',
        '{"index":9,"time":59,"type":"info","process":1,"f":"send","value":[["send",4,[null,19]]],'
        '"error":["error","Timed out"]}',
        '{"index":10,"time":60,"type":"info","process":"nemesis","f":"kill","value":{"n1":"killed"}}',
        '{"index":11,"time":70,"type":"invoke","process":0,"f":"crash","value":null}',
        '{"index":12,"time":71,"type":"info","process":0,"f":"crash","value":null}',
        '{"index":13,"time":80,"type":"invoke","process":2,"f":"debug-topic-partitions","value":[3,4]}',
        '{"index":14,"time":81,"type":"ok","process":2,"f":"debug-topic-partitions","value":{"3":{"leader":1}}}',
        '{"index":15,"time":90,"type":"invoke","process":2,"f":"subscribe","value":[3,4]}',
        '{"index":16,"time":91,"type":"fail","process":2,"f":"subscribe","value":[3,4],'
        '"error":["NOT_COORDINATOR",""]}',
    ]
    assert "workload: queue (detected" in result.stderr


def test_queue_keyword_keys_are_numbered_in_polls_and_assigns_too(tmp_path):
    edn = ('{:type :invoke, :process 0, :f :send, :value [[:send :a 1]]}\n'
           '{:type :ok, :process 0, :f :send, :value [[:send :a [0 1]]]}\n'
           '{:type :invoke, :process 1, :f :assign, :value [:b :a]}\n'
           '{:type :ok, :process 1, :f :assign, :value [:b :a]}\n'
           '{:type :invoke, :process 1, :f :poll, :value [[:poll]]}\n'
           '{:type :ok, :process 1, :f :poll, :value [[:poll {:a [[0 1]], "c" []}]]}\n')
    _, result = convert(tmp_path, edn, "--workload", "queue")
    assert result.exit_code == 0, result.output
    assert [json.loads(l)["value"] for l in lines_of(tmp_path / "history.jsonl")] == [
        [["send", 0, 1]], [["send", 0, [0, 1]]], [1, 0], [1, 0], [["poll"]], [["poll", {"0": [[0, 1]], "2": []}]]]
    assert json.loads((tmp_path / "history.jsonl.keys.json").read_text()) == {":a": 0, ":b": 1, '"c"': 2}


# ---------------------------------------------------------------- the EDN reader

def test_reader_handles_what_prn_writes():
    text = ['#jepsen.history.Op{:index 0, :value [1 -2 3N 1.5 2.5M 1/2 ##Inf nil true false], ',
            ':s "a\\"b\\nc\\u00e9", :c [\\a \\newline], :set #{1 [2 3] {:a 1}}, :l (x/y z), ',
            ':o #object[java.lang.Object 0x1f "java.lang.Object@1f"], :e #error {\n',
            ' :cause "multi\n', 'line"}, :n #:ns{:a 1}, :r #"a\\d"} ; trailing comment\n']
    (line, form), = read_forms(text)
    assert line == 1 and isinstance(form, Tagged) and form.tag == "jepsen.history.Op"
    op = form.value
    assert isinstance(op, EMap)
    assert op[Keyword("index")] == 0
    assert op[Keyword("s")] == 'a"b\ncé'
    assert op[Keyword("e")].tag == "error" and op[Keyword("e")].value[Keyword("cause")] == "multi\nline"
    assert op[Keyword("o")].tag == "object"
    assert op[Keyword("l")] == (Symbol("x/y"), Symbol("z"))
    assert isinstance(op[Keyword("set")], ESet) and op[Keyword("set")][1] == Vector((2, 3))
    assert op[Keyword("n")] == {Keyword("ns/a"): 1}
    assert op[Keyword("r")] == Tagged("regex", "a\\d")


def test_reader_gives_each_form_its_first_line():
    forms = list(read_forms(["{:a 1}\n", "\n", "{:b\n", " 2}\n", "{:c 3} {:d 4}\n"]))
    assert [line for line, _ in forms] == [1, 3, 5, 5]


def test_error_pairs():
    assert error_pair(Keyword("timeout")) == ["timeout", ""]
    assert error_pair(Vector((Keyword("abort"), "because"))) == ["abort", "because"]
    assert error_pair(Vector((Keyword("abort"), 3, Keyword("x")))) == ["abort", "3 :x"]
    assert error_pair("plain") == ["error", "plain"]
    assert error_pair(EMap({Keyword("type"): Keyword("x")})) == ["error", "{:type :x}"]


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("edn, line, what", [
    # an unclosed map on line 2
    ('{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
     '{:type :ok, :process 0, :f :txn, :value [[:append 1 1]]\n', 2, "'{' opened on line 2 is never closed"),
    # a reader macro EDN does not have, on line 3
    ('{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n\n'
     '{:type :ok, :process 0, :f :txn, :value @x}\n', 3, "unexpected character '@'"),
    ('{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]]\n', 1, "closed by ']'"),
    ('{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
     '{:type :done, :process 0, :f :txn, :value [[:append 1 1]]}\n', 2, ":type must be :invoke"),
    ('{:type :invoke, :process -1, :f :txn, :value [[:append 1 1]]}\n', 1, ":process -1"),
    ('{:type :invoke, :process :client, :f :txn, :value [[:append 1 1]]}\n', 1, ":process :client"),
    ('{:type :invoke, :process 0, :value [[:append 1 1]]}\n', 1, "no :f"),
    ('{:index 5, :type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
     '{:index 5, :type :ok, :process 0, :f :txn, :value [[:append 1 1]]}\n', 2, "indexes must increase"),
    ('{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
     '{:type :invoke, :process 1, :f :txn, :value [[:append :x 1]]}\n', 2, "mixed key kinds"),
    ('{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n'
     '{:type :invoke, :process 1, :f :txn, :value [[:send 1 2]]}\n', 2, "belongs to the queue workload"),
    ('{:type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n', 1, "unknown micro-op [:w 1 1]"),
    ('{:valid? true, :anomaly-types []}\n', 1, "not an operation: no :type"),
    ('[{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}]\n{:type :ok}\n', 2,
     "more text after the top-level vector"),
    ('{:type :invoke, :process 0, :f :txn, :value [[:append 1 "unclosed]]}\n', 1, "string is never closed"),
])
def test_bad_input_exits_3_naming_file_and_line_and_writes_nothing(tmp_path, edn, line, what):
    src, result = convert(tmp_path, edn)
    assert result.exit_code == exit_codes.BAD_INPUT, result.output
    assert f"{src}:{line}: " in result.stderr and what in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.edn"]


def test_a_failed_import_leaves_an_earlier_output_alone(tmp_path):
    out = tmp_path / "history.jsonl"
    out.write_text("earlier\n")
    _, result = convert(tmp_path, '{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n{:type\n')
    assert result.exit_code == exit_codes.BAD_INPUT
    assert out.read_text() == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.edn", "history.jsonl"]


def test_an_empty_file_is_bad_input(tmp_path):
    src, result = convert(tmp_path, "; nothing\n")
    assert result.exit_code == exit_codes.BAD_INPUT
    assert f"{src}: no operations" in result.stderr


def test_reader_errors_carry_the_line():
    with pytest.raises(EdnImportError) as e:
        list(read_forms(["{:a 1}\n", "{:b 2 :c}\n"]))
    assert e.value.line == 2 and "even number of forms" in e.value.what


# ---------------------------------------------------------------- end to end

G1C = """\
#jepsen.history.Op{:index 0, :time 1000, :type :invoke, :process 0, :f :txn, :value [[:append :x 1] [:r :y nil]]}
#jepsen.history.Op{:index 1, :time 1100, :type :invoke, :process 1, :f :txn, :value [[:append :y 1] [:r :x nil]]}
#jepsen.history.Op{:index 2, :time 2000, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y [1]]]}
#jepsen.history.Op{:index 3, :time 2100, :type :ok, :process 1, :f :txn, :value [[:append :y 1] [:r :x [1]]]}
#jepsen.history.Op{:index 4, :time 3000, :type :invoke, :process 2, :f :txn, :value [[:r :x nil] [:r :y nil]]}
#jepsen.history.Op{:index 5, :time 3100, :type :ok, :process 2, :f :txn, :value [[:r :x [1]] [:r :y [1]]]}
"""


def test_a_converted_g1c_history_is_found_invalid_by_logtrial_check(tmp_path):
    """Each txn read the other's append: a wr cycle, G1c."""
    logtrial = Path(sys.executable).parent / "logtrial"
    src = tmp_path / "history.edn"
    src.write_text(G1C)
    converted = subprocess.run([str(logtrial), "import-edn", str(src)], capture_output=True, text=True)
    assert converted.returncode == 0, converted.stderr
    checked = subprocess.run([str(logtrial), "check", str(tmp_path / "history.jsonl"), "--workload", "list-append"],
                             capture_output=True, text=True, timeout=600)
    assert checked.returncode == exit_codes.INVALID, checked.stdout + checked.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["valid"] is False
    assert "G1c" in results["anomaly_types"] and "G1c" in results["bad_anomaly_types"]
