"""Property test: random list-append histories from a simulated faulty
database, checked by the checker (checkers/list_append/checker.check_list_append,
in-process) and by the plain-Python reference (tests/checkers/la_reference.py);
anomaly types and counts must agree on every history. Many histories run
in-process; one batch of several (each in its own block of keys, processes
and time) also goes through checkers.api.check_history on Spark, whose
results must equal the in-process engine's and add up to the reference's."""

import itertools
import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from benchmarks.gen_list_append import simulate
from checkers.api import check_history
from checkers.history.read import read_history
from checkers.list_append.checker import check_list_append, txns, txns_from_rows
from tests.checkers import la_reference as ref
from tests.checkers.la_histories import history
from tests.fixtures.depth import examples

SPACE = 100     # keys and processes of history h live in [h*SPACE, (h+1)*SPACE)

one_history = st.tuples(st.integers(0, 2**32), st.integers(2, 30), st.integers(1, 3),
                        st.integers(1, 4), st.sampled_from([0.0, 0.2, 0.5]))


def build(params, values):
    """(events per history, all events chained) for a batch."""
    per_history = []
    for h, (seed, n, keys, procs, faults) in enumerate(params):
        rng = random.Random(seed)
        per_history.append(list(simulate(
            rng, n, [h * SPACE + k for k in range(keys)], [h * SPACE + p for p in range(procs)],
            values, faults, outcomes=(0.8, 0.1, 0.1))))
    return per_history, history(*per_history)


def write(path, events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def counts(results) -> Counter:
    return Counter({t: found["count"] for t, found in results["anomalies"].items()})


@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(one_history)
def test_checker_agrees_with_reference(tmp_path, params):
    (events,), _ = build([params], itertools.count(1))
    events = history(events)
    path = write(tmp_path / "history.jsonl", events)
    parsed = read_history(path, "list-append")
    # the in-process engine makes its txns from the rows, with no frame: the same txns
    assert txns_from_rows(parsed.rows_by_index()) == txns(parsed.ops)
    results = check_list_append(parsed.ops, examples=100_000)
    for found in results["anomalies"].values():
        assert len(found["examples"]) == found["count"]
    assert counts(results) == ref.check(events), f"params {params}: {events}"
    # strict-serializable forbids every list-append type; no ok op or no edge: unknown
    vouched = results["stats"]["ops"].get("ok") and results["stats"]["graph_edges"]
    assert results["valid"] == (False if results["anomalies"] else True if vouched else "unknown")


def test_rows_out_of_index_order_are_checked_from_the_frame(tmp_path):
    """Indexes rise per process but not down the file: the rows are not in
    index order, so the in-process engine takes the sorted frame's txns."""
    lines = [(5, 0, "invoke", [["append", 1, 1]]), (2, 1, "invoke", [["r", 1, None]]),
             (6, 0, "ok", [["append", 1, 1]]), (3, 1, "ok", [["r", 1, [1]]])]
    path = write(tmp_path / "history.jsonl", [{"index": i, "time": i, "process": p, "type": t, "f": "txn",
                                               "value": v} for i, p, t, v in lines])
    parsed = read_history(path, "list-append")
    assert parsed.rows_by_index() is None
    results = check_history(path, "list-append", out_dir=tmp_path, engine="local")
    expected = check_list_append(parsed.ops)
    assert {k: v for k, v in results.items() if k not in ("workload", "checker")} == expected
    # the read of 1 completed (index 3) before its append was invoked (index 5)
    assert results["anomaly_types"] == ["G1c-realtime"]
    assert [step["op"]["index"] for step in results["anomalies"]["G1c-realtime"]["examples"][0]["cycle"]] == [3, 6]


def origin(example: dict) -> int:
    """The history an example comes from, by the processes it names."""
    if "cycle" in example:
        ops = [step["op"] for step in example["cycle"]]
    else:
        ops = example.get("ops") or [example["op"]]
    (h,) = {op["process"] // SPACE for op in ops}
    return h


# 40 histories of 10-40 transactions, 1-3 keys, 1-4 processes, each fault rate
BATCH = [(seed, 10 + 3 * seed % 31, 1 + seed % 3, 1 + seed // 3 % 4, [0.0, 0.2, 0.5][seed // 12 % 3])
         for seed in range(40)]


@pytest.mark.spark
@pytest.mark.slow
def test_spark_engine_agrees_with_local_and_reference(spark, tmp_path):
    per_history, events = build(BATCH, itertools.count(1))
    path = write(tmp_path / "history.jsonl", events)
    on_spark = check_history(path, workload="list-append", out_dir=tmp_path / "spark", engine="spark")
    local = check_history(path, workload="list-append", out_dir=tmp_path / "local", engine="local")
    assert on_spark["checker"]["engine"] == "spark" and local["checker"]["engine"] == "local"
    on_spark.pop("checker"), local.pop("checker")
    assert on_spark == local
    expected = [ref.check(history(events_h)) for events_h in per_history]
    assert counts(on_spark) == sum(expected, Counter())
    assert on_spark["anomalies"], "the batch should hold some anomalies"
    # every example lands where the reference found its type
    full = check_list_append(read_history(path, "list-append").ops, examples=100_000)
    got = [Counter() for _ in per_history]
    for anomaly, found in full["anomalies"].items():
        for example in found["examples"]:
            got[origin(example)][anomaly] += 1
    assert got == expected
