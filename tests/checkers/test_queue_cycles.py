"""Queue G0 / G1c / G1c-realtime: one history with a cycle of each kind
(concurrent operations, so real-time order links only the planted pair)."""
from __future__ import annotations

import pytest

from checkers.history.spark_read import load_history, pair_operations
from checkers.queue.spark import check_queue_spark
from tests.checkers.histories import Builder

TXN = "txn"


def cycles_history() -> tuple[Builder, dict]:
    h, at = Builder(), {}
    concurrent = {
        # G0: T1, T2 write keys 50 and 51 in opposite orders
        1: ([["send", 50, 501], ["send", 51, 511]], [["send", 50, [0, 501]], ["send", 51, [1, 511]]]),
        2: ([["send", 50, 502], ["send", 51, 512]], [["send", 50, [1, 502]], ["send", 51, [0, 512]]]),
        # G1c of wr edges only: T3 and T4 each poll the other's send
        3: ([["send", 60, 601], ["poll"]], [["send", 60, [0, 601]], ["poll", {"61": [[0, 611]]}]]),
        4: ([["send", 61, 611], ["poll"]], [["send", 61, [0, 611]], ["poll", {"60": [[0, 601]]}]]),
        # G1c through a ww edge (allowed): T5's 701 precedes T6's 702 on key 70; T5 polls T6's 711
        5: ([["send", 70, 701], ["poll"]], [["send", 70, [0, 701]], ["poll", {"71": [[0, 711]]}]]),
        6: ([["send", 70, 702], ["send", 71, 711]], [["send", 70, [1, 702]], ["send", 71, [0, 711]]]),
    }
    for p, (inv, _) in concurrent.items():
        h.invoke(p, TXN, inv)
    # G1c-realtime: T7 polled T8's send of 801 and completed before T8 began
    at["rt_reader"] = h.poll(7, {80: [(0, 801)]})[1]
    at["rt_writer"] = h.send(8, [(80, 0, 801)])[1]
    for p, (_, done) in concurrent.items():
        at[p] = h.complete(p, TXN, "ok", done)
    h.poll(9, {50: [(0, 501), (1, 502)], 51: [(0, 512), (1, 511)], 70: [(0, 701), (1, 702)]})
    return h, at


@pytest.fixture(scope="module")
def found(spark, tmp_path_factory):
    h, at = cycles_history()
    path = h.write(tmp_path_factory.mktemp("cycles") / "history.jsonl")
    return check_queue_spark(spark, pair_operations(load_history(spark, path)), realtime=True), at


def _cycle_ops(example) -> set[int]:
    return {op["index"] for op in example["ops"]}


def test_g0_is_found_and_allowed(found):
    results, at = found
    g0 = results["anomalies"]["G0"]
    assert g0["count"] == 1 and _cycle_ops(g0["examples"][0]) == {at[1], at[2]}
    assert g0["examples"][0]["key"] == [50, 51]
    assert "G0" not in results["bad_anomaly_types"]


def test_g1c_wr_only_is_bad_and_listed_first(found):
    results, at = found
    g1c = results["anomalies"]["G1c"]
    assert g1c["count"] == 2
    pure, with_ww = g1c["examples"]
    assert _cycle_ops(pure) == {at[3], at[4]} and not pure["uses_ww"]
    assert _cycle_ops(with_ww) == {at[5], at[6]} and with_ww["uses_ww"]
    assert "T2 polled T1's send of" in pure["explanation"] and pure["explanation"].endswith("a contradiction.")
    assert results["stats"]["cycles"]["wr_only"]["G1c"] == 1
    assert "G1c" in results["bad_anomaly_types"]


def test_g1c_realtime(found):
    results, at = found
    rt = results["anomalies"]["G1c-realtime"]
    assert rt["count"] == 1 and _cycle_ops(rt["examples"][0]) == {at["rt_reader"], at["rt_writer"]}
    assert "completed" in rt["examples"][0]["explanation"]
    assert set(results["anomalies"]) == {"G0", "G1c", "G1c-realtime"}
