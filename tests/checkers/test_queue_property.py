"""Property: on random small histories (a simulated Kafka with random faults:
lost, duplicated, reordered, aborted, phantom records), the queue checker,
on Spark and in-process (checkers/queue/local.py), and the single-process
reference (queue_reference.py) find exactly the same anomalies. Several
histories go into one file (disjoint keys and processes) so one Spark run
checks them all; the in-process checker, which needs no JVM, gets many more
examples. (tests/checkers/test_queue_engines.py compares the two engines'
whole results.)"""
from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.history.read import read_history
from checkers.queue.local import check_queue_local
from tests.checkers import queue_reference
from tests.fixtures.depth import examples

FAULTS = ("none", "none", "none", "lose", "dup", "skip", "back", "phantom", "offset")
KINDS = ("send", "send", "poll", "poll", "txn", "assign")


def actions_of(kinds: tuple[str, ...]):
    """Actions (kind, process, key, outcome, fault, poll count) of these kinds."""
    return st.tuples(st.sampled_from(kinds),
                     st.integers(0, 2),            # process
                     st.integers(0, 1),            # key
                     st.sampled_from(["ok", "ok", "ok", "fail", "info"]),
                     st.sampled_from(FAULTS),
                     st.integers(0, 3))            # poll start / count


action = actions_of(KINDS)


def simulate(actions, base_key: int, base_process: int, values) -> list[dict]:
    """Turn actions into invoke/completion events against an in-memory log."""
    logs: dict[int, list[int]] = {}
    cursor: dict[tuple, int] = {}
    events = []

    def emit(process, f, inv, type_, done):
        events.append({"type": "invoke", "process": process, "f": f, "value": inv})
        events.append({"type": type_, "process": process, "f": f, "value": done})

    def do_send(key, type_, fault):
        value = next(values)
        log = logs.setdefault(key, [])
        if type_ == "fail":
            if fault == "phantom":
                log.append(value)        # an aborted write leaks into the log
            return ["send", key, value], None
        if fault != "lose":
            log.append(value)
        if fault == "dup":
            log.append(value)
        offset = len(log) - 1 if fault != "lose" else len(log)
        if fault == "offset":
            offset = max(0, offset - 1)
        return ["send", key, value], ["send", key, [offset, value]]

    def do_poll(process, key, fault, n):
        log = logs.get(key, [])
        start = cursor.get((process, key), 0)
        if fault == "skip":
            start += 1
        elif fault == "back":
            start = max(0, start - 1)
        pairs = [[o, log[o]] for o in range(start, min(len(log), start + n + 1))]
        if pairs:
            cursor[(process, key)] = pairs[-1][0] + 1
        return ["poll", {str(key): pairs} if pairs else {}]

    def rebalance_log(process, key, type_):
        """A rebalance inside a poll (test_queue_engines' actions only: the
        reference knows no rebalances): the key revoked (a failed action),
        given without a known start (info), or given at the consumer's
        position, where the poll then begins unless its fault moves it."""
        if type_ == "fail":
            return [["revoked", [key]]]
        start = {} if type_ == "info" else {str(key): cursor.get((process, key), 0)}
        return [["assigned", [key], start]]

    for f, p, k, type_, fault, n in actions:
        process, key = base_process + p, base_key + k
        if f == "subscribe":
            emit(process, "subscribe", [key], "ok", [key])
        elif f == "rebalance":
            logged = rebalance_log(process, key, type_)
            emit(process, "poll", [["poll"]], "ok", [do_poll(process, key, fault, n)])
            events[-1]["rebalance_log"] = logged
        elif f == "abort":     # an aborted txn with two polls that returned nothing
            emit(process, "txn", [["poll"], ["poll"]], "fail", [["poll"], ["poll"]])
        elif f == "assign":
            emit(process, "assign", [key], "ok", [key])
            cursor.pop((process, key), None)
        elif f == "send":
            inv, done = do_send(key, type_, fault)
            emit(process, "send", [inv], type_, None if done is None else [done])
        elif f == "poll":
            emit(process, "poll", [["poll"]], "ok", [do_poll(process, key, fault, n)])
        else:
            inv, done = do_send(key, "ok", fault)
            emit(process, "txn", [inv, ["poll"]], "ok", [done, do_poll(process, key, fault, n)])
    # final reads of every key by a fresh process
    for key in logs:
        emit(base_process + 9, "poll", [["poll"]], "ok",
             [["poll", {str(key): [[o, v] for o, v in enumerate(logs[key])]}]])
    return events


def spark_found(results: dict) -> Counter:
    found = Counter()
    for kind, entry in results["anomalies"].items():
        assert entry["count"] == len(entry["examples"])
        for e in entry["examples"]:
            found[(kind, e["key"], tuple(e["offsets"]), tuple(e["values"]))] += 1
    return found


def write_events(histories, folder) -> tuple[list[dict], object]:
    """The simulated histories in one history.jsonl (disjoint keys and processes)."""
    values = iter(range(1000, 10**6))
    events = []
    for i, actions in enumerate(histories):
        events += simulate(actions, base_key=10 * i, base_process=10 * i, values=values)
    for i, e in enumerate(events):
        e.update(index=i, time=1000 * (i + 1))
    path = folder / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return events, path


def local_results(path) -> dict:
    return check_queue_local(read_history(path, "queue").ops, limit=10**6, cycles=False)


@settings(max_examples=examples(4), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(action, min_size=5, max_size=25), min_size=10, max_size=10))
def test_spark_checker_agrees_with_reference(spark, tmp_path_factory, histories):
    from checkers.history.spark_read import load_history, pair_operations
    from checkers.queue.spark import check_queue_spark
    events, path = write_events(histories, tmp_path_factory.mktemp("prop"))
    results = check_queue_spark(spark, pair_operations(load_history(spark, path)), limit=10**6, cycles=False)
    expected = queue_reference.check(events)
    assert spark_found(results) == expected
    assert spark_found(local_results(path)) == expected


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(action, min_size=5, max_size=25), min_size=1, max_size=4))
def test_local_checker_agrees_with_reference(tmp_path_factory, histories):
    events, path = write_events(histories, tmp_path_factory.mktemp("prop-local"))
    assert spark_found(local_results(path)) == queue_reference.check(events)
