"""The Parquet companion: written from a history, picked up by the check
only while complete and up to date, and giving the same results as the JSON;
bad input leaves no companion behind."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from checkers.api import check_history
from checkers.history_io import HistoryError
from checkers.history_parquet import SOURCE, companion_for, companion_path, write_companion
from harness.cli import main as cli
from tests.checkers.test_queue_anomalies import PLANTED, planted_history


@pytest.fixture(scope="module")
def checked_both_ways(spark, tmp_path_factory):
    """The planted history checked from JSON, then from its companion."""
    json_dir, parquet_dir = tmp_path_factory.mktemp("json"), tmp_path_factory.mktemp("parquet")
    from_json = check_history(planted_history().write(json_dir / "history.jsonl"), out_dir=json_dir / "out")
    history = planted_history().write(parquet_dir / "history.jsonl")
    companion = write_companion(spark, history)
    from_parquet = check_history(history, out_dir=parquet_dir / "out")
    return from_json, from_parquet, history, companion


def test_companion_is_used_and_agrees_with_json(checked_both_ways):
    from_json, from_parquet, history, companion = checked_both_ways
    assert companion == companion_path(history) == history.with_suffix(".parquet")
    assert from_json["checker"]["parquet_companion"] is False
    assert from_parquet["checker"]["parquet_companion"] is True
    # (key 12's interleaved sends are also a G0 cycle, which check_history searches)
    assert set(from_parquet["anomalies"]) == set(PLANTED) | {"G0"}
    for key in ("valid", "anomalies", "bad_anomaly_types", "series"):
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


def test_bad_history_names_the_line_and_leaves_no_companion(spark, tmp_path):
    history = planted_history().write(tmp_path / "history.jsonl")
    lines = history.read_text().splitlines(keepends=True)
    lines[4] = '{"index": 4, "time": 5000, "type": "ok", "process": 2, "f": "poll", "value": [\n'
    history.write_text("".join(lines))
    with pytest.raises(HistoryError) as e:
        write_companion(spark, history)
    assert f"{history}:5" in str(e.value) and "malformed JSON" in str(e.value)
    assert not companion_path(history).exists()


def test_to_parquet_command(spark, tmp_path):
    """In this process, so it writes with the test session's Spark instead of
    starting a JVM; the bad file goes through a process of its own (it is
    refused before any JVM starts)."""
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
