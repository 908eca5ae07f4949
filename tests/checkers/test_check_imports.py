"""A small in-process check loads only what it uses: never pyspark or scipy
(checkers/graph/scc.py imports scipy only for a graph of thousands of edges),
and no pandas for list-append, whose in-process checker needs no DataFrame.
Each check runs in a fresh interpreter, and what it imported is read from
sys.modules afterwards."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

LIST_APPEND = [
    {"index": 0, "time": 0, "type": "invoke", "process": 0, "f": "txn", "value": [["append", 1, 1], ["r", 2, None]]},
    {"index": 1, "time": 1, "type": "invoke", "process": 1, "f": "txn", "value": [["append", 2, 1], ["r", 1, None]]},
    {"index": 2, "time": 2, "type": "ok", "process": 0, "f": "txn", "value": [["append", 1, 1], ["r", 2, [1]]]},
    {"index": 3, "time": 3, "type": "ok", "process": 1, "f": "txn", "value": [["append", 2, 1], ["r", 1, [1]]]},
]
QUEUE = [
    {"index": 0, "time": 0, "type": "invoke", "process": 0, "f": "send", "value": [["send", 1, 5]]},
    {"index": 1, "time": 1, "type": "ok", "process": 0, "f": "send", "value": [["send", 1, [0, 5]]]},
    {"index": 2, "time": 2, "type": "invoke", "process": 1, "f": "poll", "value": [["poll"]]},
    {"index": 3, "time": 3, "type": "ok", "process": 1, "f": "poll", "value": [["poll", {"1": [[0, 5]]}]]},
]
EDN = ("{:index 0, :time 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 1] [:r 2 nil]]}\n"
       "{:index 1, :time 1, :type :invoke, :process 1, :f :txn, :value [[:append 2 1] [:r 1 nil]]}\n"
       "{:index 2, :time 2, :type :ok, :process 0, :f :txn, :value [[:append 1 1] [:r 2 [1]]]}\n"
       "{:index 3, :time 3, :type :ok, :process 1, :f :txn, :value [[:append 2 1] [:r 1 [1]]]}\n")
HEAVY = ("pyspark", "py4j", "scipy", "pandas", "numpy", "pyarrow", "matplotlib", "networkx")

CHECK = """
import json, sys
from checkers.api import check_history
results = check_history(sys.argv[1], sys.argv[2], out_dir=sys.argv[3])
print(json.dumps({"valid": results["valid"], "engine": results["checker"]["engine"],
                  "loaded": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _checked(tmp_path, name: str, text: str, workload: str) -> dict:
    history = tmp_path / name
    history.write_text(text)
    done = subprocess.run([sys.executable, "-c", CHECK, str(history), workload, str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def _lines(events: list[dict]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


@pytest.mark.parametrize("name, text", [("history.jsonl", _lines(LIST_APPEND)), ("history.edn", EDN)])
def test_a_small_list_append_check_loads_none_of_the_heavy_libraries(tmp_path, name, text):
    found = _checked(tmp_path, name, text, "list-append")
    assert found["valid"] is False and found["engine"] == "local"      # G1c: each read the other's append
    assert not set(HEAVY) & set(found["loaded"]), set(HEAVY) & set(found["loaded"])


def test_a_small_queue_check_loads_neither_pyspark_nor_scipy(tmp_path):
    found = _checked(tmp_path, "history.jsonl", _lines(QUEUE), "queue")
    assert found["valid"] is True and found["engine"] == "local"
    assert not {"pyspark", "py4j", "scipy"} & set(found["loaded"])
