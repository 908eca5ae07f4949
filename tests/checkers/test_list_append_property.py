"""Property test: random list-append histories from a simulated faulty
database, checked by the Spark checker and by the plain-Python reference
(tests/checkers/la_reference.py); anomaly types and counts must agree on
every history. Spark is slow, so each example batches several histories into
one check (each in its own block of keys, processes and time)."""

import itertools
import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from benchmarks.gen_list_append import simulate
from checkers.history_io import load_history, pair_operations
from checkers.list_append import check_list_append
from tests.checkers import la_reference as ref
from tests.checkers.la_histories import history

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPACE = 100     # keys and processes of history h live in [h*SPACE, (h+1)*SPACE)

one_history = st.tuples(st.integers(0, 2**32), st.integers(2, 12), st.integers(1, 3),
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


def origin(example: dict) -> int:
    """The history an example comes from, by the processes it names."""
    if "cycle" in example:
        ops = [step["op"] for step in example["cycle"]]
    else:
        ops = example.get("ops") or [example["op"]]
    (h,) = {op["process"] // SPACE for op in ops}
    return h


@settings(max_examples=2, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(one_history, min_size=6, max_size=10))
def test_spark_checker_agrees_with_reference(spark, tmp_path, params):
    per_history, events = build(params, itertools.count(1))
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    results = check_list_append(spark, pair_operations(load_history(spark, str(path))),
                                examples=100_000)
    got = [Counter() for _ in params]
    for anomaly, found in results["anomalies"].items():
        assert len(found["examples"]) == found["count"]
        for example in found["examples"]:
            got[origin(example)][anomaly] += 1
    for h, events_h in enumerate(per_history):
        expected = ref.check(history(events_h))
        assert got[h] == expected, f"history {h} (params {params[h]}): {events_h}"
