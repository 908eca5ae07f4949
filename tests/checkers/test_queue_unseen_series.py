"""The unseen series (results.series.unseen, the report's "Unseen messages")
counts from the matching of sends to reads the `unseen` anomaly counts from
(checkers/queue/writes.first_reads): each key's last count is its number of
unseen sends. On both engines, the Spark one gathering on the driver and in
Spark, whose ranking of keys is its own SQL."""
from __future__ import annotations

import pytest

from checkers.queue.series import TOP_KEYS
from tests.checkers.histories import Builder
from tests.checkers.test_queue_engines import IN_SPARK, local_check, spark_check

CROWD = range(10, 10 + TOP_KEYS)    # keys with a higher peak than the never-read send's


def final_reads_history(never_read: bool) -> tuple[Builder, dict[str, int]]:
    """Key 3's two sends are read only by the final reads, the last of which
    ends the history (its completion in the series' last bucket, where a
    run's final reads fall); key 1's send is read in the main phase. With
    `never_read`, also a send to key 5 that no poll returns, and the CROWD's
    two sends each, read only by the final reads. Returns the builder and the
    indices of the events the series turns on."""
    h = Builder()
    at = {"ack 31": h.send(1, [(3, 0, 31)])[1], "ack 32": h.send(1, [(3, 1, 32)])[1]}
    h.send(2, [(1, 0, 11)]); h.poll(3, {1: [(0, 11)]})
    keys = [1, 3]
    if never_read:
        at["ack 51"] = h.send(4, [(5, 0, 51)])[1]
        for key in CROWD:
            h.send(5, [(key, 0, 10 * key), (key, 1, 10 * key + 1)])
        keys += [5, *CROWD]
    h.assign(9, keys)
    h.poll(9, {1: [(0, 11)]}, *({key: [(0, 10 * key), (1, 10 * key + 1)]} for key in CROWD if never_read))
    at["final read of key 3"] = h.poll(9, {3: [(0, 31), (1, 32)]})[1]
    return h, at


ENGINES = {"local": None, "spark, gathered on the driver": {}, "spark, gathered in Spark": IN_SPARK}


@pytest.fixture(scope="module", params=sorted(ENGINES))
def check(request, tmp_path_factory):
    """(history's builder, its event indices, results) for each history, on one engine."""
    options = ENGINES[request.param]
    spark = None if options is None else request.getfixturevalue("spark")
    folder = tmp_path_factory.mktemp("unseen-series")

    def checked(never_read: bool) -> tuple[Builder, dict[str, int], dict]:
        h, at = final_reads_history(never_read)
        path = h.write(folder / f"never-read-{never_read}.jsonl")
        return h, at, local_check(path) if spark is None else spark_check(spark, path, **options)
    return checked


def _bucket(results: dict, event: int) -> int:
    """The series' bucket of a history event (Builder's clock: (index + 1) * 1000 ns)."""
    return (event + 1) * 1000 // results["series"]["unseen"]["times"][0]


def test_sends_read_only_by_the_final_reads_end_the_series_at_0(check):
    _, at, results = check(False)
    series = results["series"]["unseen"]
    acks = _bucket(results, at["ack 31"]), _bucket(results, at["ack 32"])
    read = _bucket(results, at["final read of key 3"])
    assert read == len(series["times"]) - 1       # in the last bucket: the plot's last step
    assert series["keys"]["3"] == [0] * acks[0] + [1] * (acks[1] - acks[0]) + [2] * (read - acks[1]) + [0]
    assert "unseen" not in results["anomalies"] and results["valid"] is True


def test_a_send_never_read_ends_the_series_at_1_and_is_the_one_unseen(check):
    _, at, results = check(True)
    series = results["series"]["unseen"]
    ack = _bucket(results, at["ack 51"])
    assert series["keys"]["5"] == [0] * ack + [1] * (len(series["times"]) - ack)
    assert series["keys"]["3"][-1] == 0
    [unseen] = results["anomalies"]["unseen"]["examples"]
    assert results["anomalies"]["unseen"]["count"] == 1
    assert (unseen["key"], unseen["offsets"], unseen["values"]) == (5, [0], [51])
    assert [op["index"] for op in unseen["ops"]] == [at["ack 51"]]


def test_keys_still_unseen_at_the_end_are_plotted_before_higher_peaks(check):
    # 21 keys peak at 2 (3 and the CROWD), key 5 only at 1: it is in the
    # series all the same, first, as its unseen send is in the verdict
    _, _, results = check(True)
    keys = list(results["series"]["unseen"]["keys"])
    assert keys == ["5", "3", *(str(k) for k in CROWD)][:TOP_KEYS]
    assert {k: max(c) for k, c in results["series"]["unseen"]["keys"].items()} == {
        "5": 1, **{k: 2 for k in keys[1:]}}
