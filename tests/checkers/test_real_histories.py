"""Histories of real Kafka runs (tests/fixtures/real/) with what logtrial found
in them, kept as regression cases: an anomaly found once in real Kafka must be
found again, at the same operations, by every later version of the checker.

queue-txn-kill-pause-partition-seed22.jsonl: Kafka 4.1.1 KRaft, 3 local nodes,
`logtrial test --local 3 --txn --safe --abort-p 0.1 --nemesis kill,pause,partition
--time-limit 120 --seed 22` (docs/findings.md). The run lost its final reads to
an SSH timeout at teardown (the machine's load average was 50-99), so unseen
sends cannot be told from lost ones and the verdict is unknown."""
from __future__ import annotations

from pathlib import Path

from checkers.history_read import read_history
from checkers.queue_local import check_queue_local

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_g1c_in_real_kafka_transactions_is_found_where_it_was():
    results = check_queue_local(read_history(REAL / "queue-txn-kill-pause-partition-seed22.jsonl", "queue").ops)
    assert {k: v["count"] for k, v in results["anomalies"].items() if k != "unseen"} == {"G0": 6, "G1c": 1}
    (cycle,) = results["anomalies"]["G1c"]["examples"]
    assert [step["op"]["index"] for step in cycle["cycle"]] == [479, 511, 521, 457, 461, 469]
    assert [step["edge"] for step in cycle["cycle"]] == ["wr", "ww", "ww", "ww", "ww", "ww"]
    # a G1c with write-write edges is reported but, like G0, not held against
    # Kafka (docs/checkers.md); the verdict waits on the missing final reads
    assert results["bad_anomaly_types"] == ["unseen"]
