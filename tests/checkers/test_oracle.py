"""logtrial against the verdicts of Jepsen's and Elle's own checkers on the
oracle histories (tests/fixtures/oracle/, a copy of ../shared/oracle/ with its
README, which gives their verdicts). Every count must be theirs
(docs/checkers.md, "Compared with Jepsen's checker", traces each).

All four run in-process; the two real runs also on Spark, which must agree
(the 10^4-event simulator histories take a minute or more on Spark on this
machine: their engine equality is covered by the list-append property tests)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main as cli

ORACLE = Path(__file__).resolve().parents[1] / "fixtures" / "oracle"

QUEUE_UNSAFE = {
    "inconsistent-offsets": 19,   # Jepsen 19
    "lost-write": 19,             # Jepsen 19
    "int-nonmonotonic-poll": 2,   # Jepsen 2
    "unseen": 23,                 # Jepsen 23
    "nonmonotonic-poll": 2,       # Jepsen 2
    "poll-skip": 7,               # Jepsen 7
}

# (file, workload, consistency model) -> (valid, {type: count}), Elle's verdicts
CASES = {
    ("queue-unsafe-kill-partition", "queue", None): (False, QUEUE_UNSAFE),
    ("list-append-kill-partition", "list-append", "strict-serializable"): (True, {}),
    ("list-append-kill-partition", "list-append", "serializable"): (True, {}),
    ("list-append-serializable-1e4", "list-append", "strict-serializable"): (True, {}),
    ("list-append-snapshot-isolation-1e4", "list-append", "serializable"): (False, {"G2-item": 99}),
    ("list-append-snapshot-isolation-1e4", "list-append", "strict-serializable"):
        (False, {"G2-item": 99, "G2-item-realtime": 17}),
}
ON_SPARK_TOO = ("queue-unsafe-kill-partition", "list-append-kill-partition")


def check(name: str, workload: str, model: str | None, engine: str, out: Path) -> dict:
    args = ["check", str(ORACLE / f"{name}.jsonl"), "--workload", workload, "--engine", engine, "--out", str(out)]
    if model:
        args += ["--consistency-model", model]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output
    return json.loads((out / "results.json").read_text())


def counts(results: dict) -> dict[str, int]:
    return {kind: found["count"] for kind, found in results["anomalies"].items()}


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: "-".join(filter(None, c)))
def test_counts_are_the_oracles(case, tmp_path):
    valid, expected = CASES[case]
    results = check(*case, "local", tmp_path)
    assert (results["valid"], counts(results)) == (valid, expected)


def _examples(results: dict, kind: str) -> list[dict]:
    return results["anomalies"][kind]["examples"]


def test_queue_locations_are_the_oracles(tmp_path):
    """The places docs/checkers.md names, as Jepsen's analysis found them."""
    results = check("queue-unsafe-kill-partition", "queue", None, "local", tmp_path)
    inner = _examples(results, "int-nonmonotonic-poll")
    assert sorted((e["key"], e["ops"][0]["index"], tuple(e["offsets"])) for e in inner) == \
        [(3, 572, (22, 0)), (3, 588, (23, 0))]
    between = _examples(results, "nonmonotonic-poll")
    assert sorted((e["key"], tuple(op["index"] for op in e["ops"]), tuple(e["offsets"])) for e in between) == \
        [(0, (572, 862), (26, 22)), (2, (572, 600), (26, 0))]
    # docs/checkers.md's table: each skip spans assigns that kept the key
    skips = _examples(results, "poll-skip")
    assert sorted((e["key"], e["ops"][0]["process"], tuple(op["index"] for op in e["ops"]), tuple(e["offsets"]),
                   e["delta"]) for e in skips) == [
        (0, 3, (344, 606), (15, 21), 6), (0, 3, (606, 1028), (29, 46), 17), (1, 2, (510, 1170), (30, 33), 3),
        (2, 2, (268, 494), (12, 16), 4), (2, 2, (494, 1170), (22, 27), 5), (3, 1, (560, 990), (23, 35), 12),
        (3, 2, (506, 823), (20, 24), 4)]
    assert {e["key"] for e in _examples(results, "lost-write")} <= {1, 2, 3}


@pytest.mark.spark
@pytest.mark.parametrize("case", [c for c in sorted(CASES) if c[0] in ON_SPARK_TOO],
                         ids=lambda c: "-".join(filter(None, c)))
def test_spark_gives_the_same_results(case, spark, tmp_path):
    local = check(*case, "local", tmp_path / "local")
    on_spark = check(*case, "spark", tmp_path / "spark")
    assert on_spark["checker"]["engine"] == "spark"
    assert (on_spark["valid"], on_spark["anomalies"]) == (local["valid"], local["anomalies"])
