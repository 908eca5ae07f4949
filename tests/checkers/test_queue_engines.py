"""The queue checker's two engines agree: in-process (checkers/queue/local.py,
from checkers/history/read.read_history) and Spark (checkers/queue/assemble.check_queue_spark, from
history_io), on the planted, clean and cycle histories of the other queue
tests, producer-error and non-ok-completion histories, and a batch of random
simulated-Kafka histories (test_queue_property.py checks many more of those
in-process against the reference). The whole results dict must be equal
(there are no timing stats in it), and so must the micro-op records."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.history.read import read_history
from checkers.queue.producer_errors import OUT_OF_ORDER, ProducerChecks
from checkers.history.queue_records import records_frame
from checkers.queue.local import check_queue_local
from tests.checkers.test_queue_anomalies import clean_history, planted_history
from tests.checkers.test_queue_cycles import cycles_history
from tests.checkers.test_queue_rebalance import rebalance_history
from tests.checkers.test_queue_property import KINDS, actions_of, simulate
from tests.fixtures.depth import examples, profile

S = 1_000_000_000


def _send(process, key, value, t0, t1, type_="ok", error=None, offset=None, idempotent=True) -> list[dict]:
    """A one-send operation from t0 to t1 s (test_producer_errors' cases)."""
    invoke = {"type": "invoke", "process": process, "f": "send", "value": [["send", key, value]], "time": t0 * S}
    if idempotent is not None:
        invoke["producer"] = {"idempotent": idempotent, "transactional": False}
    done = {"type": type_, "process": process, "f": "send", "time": t1 * S,
            "value": [["send", key, [offset, value] if type_ == "ok" else value]]}
    if error:
        done["error"] = [error, f"Broker: {error}"]
    return [invoke, done]


def _poll(process, t0, t1, polled: dict) -> list[dict]:
    return [{"type": "invoke", "process": process, "f": "poll", "value": [["poll"]], "time": t0 * S},
            {"type": "ok", "process": process, "f": "poll", "value": [["poll", polled]], "time": t1 * S}]


def producer_events() -> list[dict]:
    """Lost writes near and far from OUT_OF_ORDER_SEQUENCE_NUMBER errors,
    duplicates on idempotent-only and mixed keys, other errors."""
    oos = OUT_OF_ORDER
    return (_send(0, 1, 10, 10, 11, offset=0) + _send(1, 1, 11, 12, 13, "info", oos)
            + _send(2, 2, 20, 14, 15, "info", oos) + _send(3, 1, 12, 30, 31, "info", oos)
            + _send(4, 2, 21, 32, 33, offset=0) + _send(5, 1, 13, 34, 35, offset=1)
            + _poll(6, 40, 41, {"1": [[1, 13]], "2": [[0, 21]]})
            + _send(10, 7, 70, 50, 51, offset=3) + _send(11, 7, 71, 55, 56, "fail", oos)
            + _send(12, 7, 72, 57, 58, offset=4) + _poll(13, 59, 60, {"7": [[4, 72]]})
            + _send(20, 5, 50, 70, 71, offset=0) + _send(21, 5, 51, 71, 72, offset=1)
            + _send(22, 6, 60, 72, 73, offset=0) + _send(23, 6, 61, 73, 74, offset=1, idempotent=False)
            + _send(24, 8, 80, 74, 75, offset=0, idempotent=None)
            + _poll(25, 76, 77, {"5": [[0, 50], [1, 51], [2, 51]], "6": [[0, 60], [1, 61], [2, 60]],
                                 "8": [[0, 80], [1, 80]]})
            + _send(30, 3, 30, 80, 81, "info", "NOT_LEADER_FOR_PARTITION")
            + _send(31, 3, 31, 82, 83, "info", "UNKNOWN_PRODUCER_ID")
            + _send(32, 3, 32, 84, 85, "fail", "INVALID_PRODUCER_EPOCH")
            + [{"type": "invoke", "process": 33, "f": "poll", "value": [["poll"]], "time": 86 * S},
               {"type": "fail", "process": 33, "f": "poll", "value": None, "time": 87 * S,
                "error": ["UNKNOWN_PRODUCER_ID", "not counted"]}]
            # an OOS txn that never completed, sending to two keys
            + [{"type": "invoke", "process": 34, "f": "txn", "value": [["send", 9, 90], ["send", 7, 91], ["poll"]],
                "time": 88 * S}])

def outcomes_events() -> list[dict]:
    """Completions of failed and indefinite operations that carry values:
    their polls and (info) offsets are records too."""
    def op(p, f, invoked, type_, done, error=None):
        e = {"type": type_, "process": p, "f": f, "value": done}
        if error:
            e["error"] = error
        return [{"type": "invoke", "process": p, "f": f, "value": invoked}, e]
    return (op(0, "send", [["send", 30, 300]], "ok", [["send", 30, [0, 300]]])
            + op(1, "txn", [["send", 30, 301], ["poll"]], "fail",
                 [["send", 30, [1, 301]], ["poll", {"30": [[0, 300], [1, 301]]}]], ["ABORTED", "a"])
            + op(2, "txn", [["send", 31, 310], ["send", 32, 320], ["poll"]], "info",
                 [["send", 31, [0, 310]], ["send", 32, [0, 320]], ["poll", {"30": [[0, 300]]}]], ["TIMEOUT", "t"])
            + op(3, "poll", [["poll"]], "info", [["poll", {"30": [[2, 302]], "31": [[0, 310]]}]])
            + op(4, "send", [["send", 32, 321]], "info", [["send", 32, [1, 321]]])
            + op(5, "poll", [["poll"]], "ok", [["poll", {"31": [[0, 310]], "32": [[1, 321]]}]])
            + op(5, "poll", [["poll"]], "fail", [["poll", {"32": [[0, 320]]}]], ["X", "x"])
            + op(6, "send", [["send", 30, 302]], "ok", [["send", 30, [2, 302]]]))


def bare_poll_events() -> list[dict]:
    """Failed and indefinite txns whose completions repeat the invoke's bare
    ["poll"], as the harness writes them: Spark's ANSI mode once raised
    INVALID_ARRAY_INDEX reading the poll's (absent) results."""
    def op(p, f, value, type_, error=None):
        done = {"type": type_, "process": p, "f": f, "value": value, **({"error": error} if error else {})}
        return [{"type": "invoke", "process": p, "f": f, "value": value}, done]
    return ([{"type": "invoke", "process": 0, "f": "send", "value": [["send", 40, 400]]},
             {"type": "ok", "process": 0, "f": "send", "value": [["send", 40, [0, 400]]]}]
            + op(1, "txn", [["send", 40, 401], ["poll"]], "fail", ["ABORTED", "a"])
            + op(2, "txn", [["poll"], ["send", 41, 410]], "info", ["TIMEOUT", "t"])
            + [{"type": "invoke", "process": 3, "f": "txn", "value": [["send", 41, 411], ["poll"]]}]
            + [{"type": "invoke", "process": 4, "f": "poll", "value": [["poll"]]},
               {"type": "ok", "process": 4, "f": "poll", "value": [["poll", {"40": [[0, 400]], "41": [[0, 410]]}]]}])


# (history, check options): every option each history's own test uses, and more
HISTORIES = {
    "planted": (lambda: planted_history().events, [{"cycles": False}, {"producer": ProducerChecks()}]),
    "planted-few-examples": (lambda: planted_history().events, [{"limit": 1, "realtime": True}]),
    "clean": (lambda: clean_history().events, [{}, {"realtime": True, "producer": ProducerChecks()}]),
    "cycles": (lambda: cycles_history()[0].events, [{"realtime": True}, {}]),
    "producer": (producer_events,
                 [{"producer": ProducerChecks()}, {"producer": ProducerChecks(window_s=2.0, max_examples=1)}]),
    "outcomes": (outcomes_events, [{"producer": ProducerChecks()}, {"realtime": True, "limit": 1}]),
    "bare-polls": (bare_poll_events, [{"producer": ProducerChecks()}, {"realtime": True}]),
    "rebalance": (lambda: rebalance_history().events, [{}, {"realtime": True, "limit": 1}]),
    "empty": (lambda: [], [{"producer": ProducerChecks()}]),
    "assign-only": (lambda: [{"type": "invoke", "process": 0, "f": "assign", "value": [1]},
                             {"type": "ok", "process": 0, "f": "assign", "value": [1]}], [{}]),
}


def _write(events: list[dict], path: Path) -> Path:
    """history.jsonl with index (and time, where missing) filled in."""
    with open(path, "w") as out:
        for i, e in enumerate(events):
            out.write(json.dumps({"index": i, "time": (i + 1) * 1000, **e}) + "\n")
    return path


IN_SPARK = {"driver_gather_max_ops": 0}   # gather in Spark (SparkPass) however small the history


def spark_check(spark, path: Path, **options) -> dict:
    """The Spark engine; a small history's rows are gathered on the driver
    (queue.spark.driver_pass) unless options has IN_SPARK."""
    from checkers.history.spark_read import load_history, pair_operations
    from checkers.queue.spark import check_queue_spark
    return check_queue_spark(spark, pair_operations(load_history(spark, path)), **options)


def local_check(path: Path, **options) -> dict:
    return check_queue_local(read_history(path, "queue").ops, **options)


def first_difference(a, b, where: str = "results") -> str | None:
    """Where two results dicts differ first (for a readable failure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{where}: keys {sorted(set(a) ^ set(b))} in one only"
        return next((d for k in a if (d := first_difference(a[k], b[k], f"{where}.{k}"))), None)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := first_difference(x, y, f"{where}[{i}]"))),
                    None)
    return None if a == b and type(a) is type(b) else f"{where}: {a!r} != {b!r}"


def assert_same(local: dict, spark: dict) -> None:
    assert first_difference(local, spark) is None, first_difference(local, spark)
    json.dumps(local)     # plain Python values only, as results.json needs


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("engines")
    return {name: _write(make(), folder / f"{name}.jsonl") for name, (make, _) in HISTORIES.items()}


NO_ROWS = ("empty", "assign-only")   # edge cases of gathering: also gathered in Spark on their own


def alone() -> list[str]:
    """The histories checked each on its own by Spark: all of them under the
    nightly profile; under `commit` only those with no rows, as the rest are
    checked together in one history below. A small history's Spark check is
    almost all fixed cost (about a hundred jobs, 2-3 s on a quiet machine), so
    one check of all of them costs about what one of them alone does."""
    return sorted(HISTORIES) if profile() == "nightly" else list(NO_ROWS)


@pytest.mark.spark
@pytest.mark.parametrize("name", alone())
def test_engines_give_the_same_results(spark, written, name):
    """A small history's rows gathered on the driver, and in Spark too for the
    histories with no rows."""
    for options in HISTORIES[name][1]:
        local = local_check(written[name], **options)
        assert_same(local, spark_check(spark, written[name], **options))
        if name in NO_ROWS:
            assert_same(local, spark_check(spark, written[name], **options, **IN_SPARK))


def _shifted_values(value, shift: int):
    """A send/txn/poll value with every sent or polled value moved by `shift`."""
    def moved(v):
        return v + shift if type(v) is int else v

    def mop(m):
        if not isinstance(m, list) or not m:
            return m
        if m[0] == "send" and len(m) > 2:
            return [*m[:2], [m[2][0], moved(m[2][1])] if isinstance(m[2], list) and len(m[2]) > 1 else moved(m[2])]
        if m[0] == "poll" and len(m) > 1 and isinstance(m[1], dict):
            return ["poll", {k: [[p[0], moved(p[1])] if isinstance(p, list) and len(p) > 1 else p for p in pairs]
                             for k, pairs in m[1].items()}]
        return m
    return [mop(m) for m in value] if isinstance(value, list) else value


def combined_events() -> list[dict]:
    """Every history of HISTORIES in one: their processes and values apart, one
    after the other in time (each keeping its own spacing), their keys shared
    (so they meet, and there is more to rank and gather)."""
    events: list[dict] = []
    start = 0
    for n, name in enumerate(sorted(HISTORIES)):
        for j, e in enumerate(HISTORIES[name][0]()):
            process = e["process"] + 1000 * (n + 1) if isinstance(e["process"], int) else e["process"]
            value = _shifted_values(e.get("value"), 10**6 * (n + 1)) if e.get("f") in ("send", "poll", "txn") \
                else e.get("value")
            events.append({**e, "process": process, "value": value, "time": start + e.get("time", (j + 1) * 1000)})
        start = (events[-1]["time"] if events else start) + S
    return events


# every option the histories' own checks use, on all of them at once
COMBINED_OPTIONS = {
    "defaults": {},
    "producer": {"producer": ProducerChecks()},
    "realtime-few-examples": {"realtime": True, "limit": 1, "producer": ProducerChecks(window_s=2.0, max_examples=1)},
    "no-cycles": {"cycles": False},
}


@pytest.fixture(scope="module")
def combined(tmp_path_factory) -> Path:
    return _write(combined_events(), tmp_path_factory.mktemp("combined") / "combined.jsonl")


@pytest.mark.spark
@pytest.mark.parametrize("options", sorted(COMBINED_OPTIONS))
def test_engines_give_the_same_results_on_the_histories_together(spark, combined, options):
    """The histories above in one: Spark's rows gathered on the driver (as
    for a small history), then with every gathering step in Spark (SparkPass,
    as for a big one)."""
    opts = COMBINED_OPTIONS[options]
    local = local_check(combined, **opts)
    assert local["anomaly_types"], "the combined history must hold anomalies to gather"
    assert_same(local, spark_check(spark, combined, **opts))
    assert_same(local, spark_check(spark, combined, **opts, **IN_SPARK))


def _spark_records(spark, path: Path) -> pd.DataFrame:
    from pyspark.sql import functions as F

    from checkers.history.spark_read import load_history, pair_operations
    from checkers.queue.assemble import QUEUE_OPS
    from checkers.queue.bucket import bucketed, records
    ops = pair_operations(load_history(spark, path)).filter(F.col("f").isin(*QUEUE_OPS))
    rebalances = ops.filter(F.col("f").isin("poll", "txn"))
    return bucketed(records(ops), ops, 1, rebalances=rebalances).drop("bucket").toPandas()


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype("int64").sort_values(list(frame.columns), ignore_index=True)


def _assert_same_records(spark, path: Path) -> None:
    local = records_frame(read_history(path, "queue").ops)
    pd.testing.assert_frame_equal(_canonical(local), _canonical(_spark_records(spark, path)))


@pytest.mark.spark
def test_records_are_spark_records(spark, combined, written):
    """The histories together, and (nightly) each with rows on its own."""
    for path in [combined] + [written[name] for name in alone() if name not in NO_ROWS]:
        _assert_same_records(spark, path)


def test_records_flags(written):
    """Spot checks of the encoding: single-key writers, idempotent sends, pos."""
    from checkers.history.queue_records import IDEMPOTENT, POLL, PROVEN, SEND, SINGLE_KEY_WRITER
    rec = records_frame(read_history(written["producer"], "queue").ops)
    sends = rec[rec["kind"] == SEND]
    single = (sends["flags"] & SINGLE_KEY_WRITER) != 0
    assert (single == (sends["fcode"] == 0)).all()                    # the one-send `send` ops, not the txn
    assert set(sends.loc[(sends["flags"] & IDEMPOTENT) != 0, "key"]) == {1, 2, 5, 6, 7, 3}
    rec = records_frame(read_history(written["cycles"], "queue").ops)
    txn_sends = rec[(rec["kind"] == SEND) & (rec["fcode"] == 2)]
    assert not ((txn_sends["flags"] & SINGLE_KEY_WRITER) != 0).any()  # a txn is never a link
    polls = rec[(rec["kind"] == POLL) & (rec["key"] == 51)]
    assert sorted(polls["pos"]) == [0, 1]                             # mop 0, poll positions 0 and 1
    rec = records_frame(read_history(written["planted"], "queue").ops)
    proven = rec.loc[(rec["flags"] & PROVEN) != 0, ["key", "value"]].sort_values("value")
    # the info txn's send of 161 was polled: its send of 171 (key 17) is proven too; the
    # info sends of 12 and 151 (never completed: info too) were polled
    assert [tuple(r) for r in proven.to_numpy()] == [(1, 12), (15, 151), (16, 161), (17, 171)]
    aborted = rec[(rec["kind"] == POLL) & (rec["otype"] != 0)]
    assert aborted.empty                                              # (no poll of a non-ok op there)


# ---------------------------------------------------------------- random histories

def random_events(histories, producer_seed: int = 0) -> list[dict]:
    """test_queue_property's simulated histories in one file, with producer
    flags and errors sprinkled on sends (by value), so the producer checks
    have something to find."""
    values = iter(range(1000, 10**6))
    events = []
    for i, actions in enumerate(histories):
        events += simulate(actions, base_key=10 * i, base_process=10 * i, values=values)
    for i, e in enumerate(events):
        e.update(index=i, time=1000 * (i + 1))
        sent = [m[2] for m in e["value"] if m[0] == "send"] if e["type"] == "invoke" and e["f"] in ("send", "txn") else []
        if sent:
            e["producer"] = {"idempotent": (sent[0] + producer_seed) % 4 != 0, "transactional": False}
    pending = {}
    for e in events:
        if e["type"] == "invoke":
            pending[e["process"]] = e
        elif e["type"] in ("fail", "info") and e["f"] in ("send", "txn"):
            sent = [m[2] for m in pending[e["process"]]["value"] if m[0] == "send"][:1]
            if sent and (sent[0] + producer_seed) % 3:
                e["error"] = [OUT_OF_ORDER if sent[0] % 2 else "NOT_LEADER_OR_FOLLOWER", "x"]
    return events


# test_queue_property's actions, and subscriptions, rebalances logged with
# their starts (faults make them skip or rewind) and aborted txns in between
engine_action = actions_of(KINDS + ("subscribe", "rebalance", "rebalance", "abort"))
histories = st.lists(st.lists(engine_action, min_size=5, max_size=25), min_size=2, max_size=8)


@pytest.mark.spark
@settings(max_examples=examples(3), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(histories, min_size=4, max_size=4), st.integers(0, 11))
def test_engines_agree_on_random_histories(spark, tmp_path_factory, batch, seed):
    """Each example: four files of two to eight random histories, each checked
    by both engines with cycles, producer checks and few examples per type
    (so the ranking of examples is compared too); Spark gathers one file's
    rows in Spark (drawn with the seed), the others' on the driver."""
    folder = tmp_path_factory.mktemp("prop-engines")
    for i, hs in enumerate(batch):
        path = _write(random_events(hs, seed), folder / f"history-{i}.jsonl")
        options = {"limit": 1 + i, "realtime": i % 2 == 1, "producer": ProducerChecks(window_s=2e-6)}
        gather = IN_SPARK if i == seed % len(batch) else {}
        assert_same(local_check(path, **options), spark_check(spark, path, **options, **gather))


def test_bare_polls_of_failed_txns_read_nothing(written):
    """The aborted txn's send is never read and the info txn's polled send
    410 counts as proven: nothing is lost, nothing is an aborted read."""
    results = local_check(written["bare-polls"])
    assert results["valid"] is True and results["anomaly_types"] == [], results["anomaly_types"]
    assert results["stats"]["sends"] == 4      # 400, 401, 410, 411
