"""The Parquet companion: written in-process from a history, holding what
Spark reads from the JSON (the same operations, the same micro-op records),
picked up by the check only while complete and up to date, and giving the
same results as the JSON; bad input leaves no companion behind; a large
history checked on Spark gets one before the JVM starts."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

import pandas as pd

from checkers.api import check_history
from checkers.history.companion_write import write_companion
from checkers.history.spark_read import HistoryError
from checkers.history.companion import OP_COUNTS, SOURCE, companion_for, companion_path
from checkers.history.queue_records import PROVEN
from harness.cli import main as cli
from tests.checkers.test_queue_anomalies import PLANTED, planted_history
from tests.checkers.test_queue_engines import HISTORIES, _write, combined_events


@pytest.fixture(scope="module")
def checked_both_ways(spark, tmp_path_factory):
    """The planted history checked from JSON, then from its companion."""
    json_dir, parquet_dir = tmp_path_factory.mktemp("json"), tmp_path_factory.mktemp("parquet")
    from_json = check_history(planted_history().write(json_dir / "history.jsonl"), out_dir=json_dir / "out")
    history = planted_history().write(parquet_dir / "history.jsonl")
    companion = write_companion(history)
    from_parquet = check_history(history, out_dir=parquet_dir / "out", engine="spark")
    return from_json, from_parquet, history, companion


def test_companion_is_used_and_agrees_with_json(checked_both_ways):
    from_json, from_parquet, history, companion = checked_both_ways
    assert companion == companion_path(history) == history.with_suffix(".parquet")
    assert from_json["checker"]["parquet_companion"] is False
    assert from_parquet["checker"]["parquet_companion"] is True
    # (key 12's interleaved sends are also a G0 cycle, which check_history searches)
    assert set(from_parquet["anomalies"]) == set(PLANTED) | {"G0"}
    for key in ("valid", "anomalies", "bad_anomaly_types", "series", "stats"):
        assert from_parquet[key] == from_json[key], key
    assert from_parquet["stats"]["sends"] == from_json["stats"]["sends"] > 0


def test_stale_or_incomplete_companion_is_ignored(checked_both_ways, tmp_path):
    _, _, history, companion = checked_both_ways
    copy = tmp_path / "history.jsonl"
    shutil.copy(history, copy)
    shutil.copytree(companion, companion_path(copy))
    fingerprint = json.loads((companion / SOURCE).read_text())
    (companion_path(copy) / SOURCE).write_text(json.dumps({**fingerprint, "mtime_ns": copy.stat().st_mtime_ns}))
    assert companion_for(copy) == companion_path(copy)
    with open(copy, "a") as f:            # the history grew after conversion
        f.write("\n")
    assert companion_for(copy) is None
    (companion_path(copy) / SOURCE).unlink()   # an interrupted conversion
    assert companion_for(copy) is None


def test_bad_history_names_the_line_and_leaves_no_companion(tmp_path):
    history = planted_history().write(tmp_path / "history.jsonl")
    lines = history.read_text().splitlines(keepends=True)
    lines[4] = '{"index": 4, "time": 5000, "type": "ok", "process": 2, "f": "poll", "value": [\n'
    history.write_text("".join(lines))
    with pytest.raises(HistoryError) as e:
        write_companion(history)
    assert f"{history}:5" in str(e.value) and "malformed JSON" in str(e.value)
    assert not companion_path(history).exists()


def test_to_parquet_command(tmp_path):
    """No JVM: the conversion runs in-process, the bad file in a process of
    its own."""
    run = tmp_path / "run"
    run.mkdir()
    history = planted_history().write(run / "history.jsonl")
    done = CliRunner().invoke(cli, ["to-parquet", str(run)])
    assert done.exit_code == 0, done.output
    assert companion_for(history) == run / "history.parquet"
    (run / "bad.jsonl").write_text('{"index": 0, "time": 1, "type": "invoke"}\n')
    bad = subprocess.run([sys.executable, "-m", "harness.cli", "to-parquet", str(run / "bad.jsonl")],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 3 and "bad.jsonl:1" in bad.stderr and "missing field 'process'" in bad.stderr


@pytest.mark.spark
def test_check_command_takes_a_companion_folder(spark, tmp_path):
    """`logtrial check run/history.parquet` reads the companion (on Spark) and
    finds what the JSON holds; it once answered "has no history.jsonl"."""
    run = tmp_path / "run"
    run.mkdir()
    history = planted_history().write(run / "history.jsonl")
    assert CliRunner().invoke(cli, ["to-parquet", str(run)]).exit_code == 0
    from_json = CliRunner().invoke(cli, ["check", str(history), "--engine", "local", "--out", str(tmp_path / "j")])
    from_parquet = CliRunner().invoke(cli, ["check", str(run / "history.parquet"), "--out", str(tmp_path / "p")])
    assert from_parquet.exit_code == from_json.exit_code == 1, from_parquet.output
    parquet = json.loads((tmp_path / "p" / "results.json").read_text())
    local = json.loads((tmp_path / "j" / "results.json").read_text())
    # a queue companion is checked in-process, in worker processes (checkers/queue/pool.py)
    assert parquet["checker"]["engine"] == "local" and parquet["checker"]["parquet_companion"]
    assert {k: v["count"] for k, v in parquet["anomalies"].items()} == \
        {k: v["count"] for k, v in local["anomalies"].items()}


def _frame(table) -> pd.DataFrame:
    return table.toArrow().to_pandas() if hasattr(table, "toArrow") else table


def _canonical(frame: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    return frame.sort_values(key, ignore_index=True)


# the planted history (its proven sends are counted below), and every history of the
# engine tests in one (producer errors, non-ok outcomes, bare polls, cycles,
# rebalances): one Spark read for them all, as each read is mostly Spark's fixed cost
COMPANION_HISTORIES = {"planted": HISTORIES["planted"][0], "together": combined_events}


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(COMPANION_HISTORIES))
def test_companion_holds_what_spark_reads_from_the_json(spark, tmp_path, name):
    """Blocks of 300 bytes: operations span blocks, and a poll that proves an
    info send may come blocks before or after it."""
    from checkers.history.spark_read import load_history, pair_operations
    from checkers.queue.bucket import records
    from checkers.queue.assemble import stats_from_counts
    from checkers.queue.spark import op_stats
    history = _write(COMPANION_HISTORIES[name](), tmp_path / "history.jsonl")
    companion = write_companion(history, block_bytes=300)
    ops = _frame(spark.read.parquet(str(companion / "ops")))
    expected_ops = _frame(pair_operations(load_history(spark, history)))
    pd.testing.assert_frame_equal(_canonical(ops, ["invoke_index"]),
                                  _canonical(expected_ops[list(ops.columns)], ["invoke_index"]))
    mops = _frame(spark.read.parquet(str(companion / "queue-mops")))
    expected = _frame(records(spark.read.parquet(str(companion / "ops"))))[list(mops.columns)]
    key = list(mops.columns)
    pd.testing.assert_frame_equal(_canonical(mops, key), _canonical(expected, key), check_dtype=False)
    if name == "planted":
        assert ((mops["flags"] & PROVEN) != 0).sum() == 4
    counts = [tuple(c) for c in json.loads((companion / OP_COUNTS).read_text())]
    assert stats_from_counts(counts) == op_stats(pair_operations(load_history(spark, history)))


def test_auto_checks_a_small_history_in_process_though_it_has_a_companion(checked_both_ways, tmp_path):
    *_, history, companion = checked_both_ways
    assert companion_for(history) == companion
    results = check_history(history, out_dir=tmp_path)
    assert (results["checker"]["engine"], results["checker"]["parquet_companion"]) == ("local", False)
    assert set(results["anomalies"]) == set(PLANTED) | {"G0"}


def test_list_append_companion_has_operations_only(tmp_path):
    from tests.checkers.histories import write_history
    from tests.checkers.la_histories import history as la_history
    from tests.checkers.test_list_append import SCENARIOS
    path = write_history(tmp_path / "history.jsonl", la_history(*SCENARIOS.values()))
    companion = write_companion(path, "list-append")
    assert sorted(p.name for p in companion.iterdir()) == sorted([SOURCE, OP_COUNTS, "ops"])
    assert companion_for(path) == companion


def test_large_history_gets_its_companion_before_spark_reads_it(spark, tmp_path, monkeypatch):
    """Above VALIDATE_FIRST_MAX_BYTES (lowered here) Spark is given the
    companion, written beside the history, or into --out when the history's
    folder cannot be written (an immutable folder, which root cannot write
    either); a broken large history is refused by the same pass."""
    from checkers import api
    monkeypatch.setattr(api, "VALIDATE_FIRST_MAX_BYTES", 100)
    out = tmp_path / "out"
    history = planted_history().write(tmp_path / "history.jsonl")
    results = check_history(history, out_dir=out, engine="spark")
    assert results["checker"]["parquet_companion"] is True and companion_for(history) == companion_path(history)
    assert set(results["anomalies"]) == set(PLANTED) | {"G0"}
    assert api.companion_first(history, "queue", out) == history      # up to date: Spark finds it beside

    locked = tmp_path / "locked"
    locked.mkdir()
    in_locked = planted_history().write(locked / "history.jsonl")
    subprocess.run(["chattr", "+i", str(locked)], check=True)
    try:
        assert api.companion_first(in_locked, "queue", out) == out / "history.parquet"
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=True)
    assert companion_for(in_locked) is None and (out / "history.parquet" / SOURCE).is_file()

    broken = tmp_path / "broken" / "history.jsonl"
    broken.parent.mkdir()
    broken.write_text(history.read_text() + '{"index": 999, "time": 1}\n')
    with pytest.raises(HistoryError) as e:
        api.companion_first(broken, "queue", out)
    lines = len(history.read_text().splitlines()) + 1
    assert f"{broken}:{lines}: missing field 'type'" in str(e.value) and not companion_path(broken).exists()

    monkeypatch.setattr(api, "VALIDATE_FIRST_MAX_BYTES", broken.stat().st_size)
    assert api.companion_first(broken, "queue", out) == broken     # small: Spark reads the JSON


def test_integer_parquet_cannot_hold_is_named_by_line(tmp_path):
    """The in-process engine keeps an index beyond 64 bits exact; the
    companion's long columns cannot: the writer's process names the line."""
    history = tmp_path / "history.jsonl"
    history.write_text('{"index":0,"time":1,"type":"invoke","process":0,"f":"poll","value":[["poll"]]}\n'
                       '{"index":%d,"time":2,"type":"ok","process":0,"f":"poll","value":[["poll",{}]]}\n' % (1 << 70))
    with pytest.raises(HistoryError) as e:
        write_companion(history)
    assert f"{history}:2: field 'index' {1 << 70} does not fit in 64 bits" in str(e.value)
    assert not companion_path(history).exists()


def test_records_writer_stops_once_its_validating_process_is_gone(tmp_path):
    """Given a parent pid that is not its parent (as after the validating
    process died and it was re-parented), the records writer stops at its
    first block instead of writing a companion nobody will complete."""
    history = planted_history().write(tmp_path / "history.jsonl")
    out = tmp_path / "history.parquet"
    out.mkdir()
    done = subprocess.run([sys.executable, "-m", "checkers.history.companion_write", str(history), str(out), "300", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "the validating process 1 is gone" in done.stderr
    assert not (out / SOURCE).exists()
