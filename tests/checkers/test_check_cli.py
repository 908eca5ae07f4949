"""`logtrial check`: exit codes, results.json, workload from test.json, bad
input naming file and line. Runs in-process on the shared Spark session."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from common import exit_codes
from harness.cli import main
from harness.commands.check import check
from tests.checkers.histories import Builder


def _run(*args):
    return CliRunner().invoke(check, [str(a) for a in args], catch_exceptions=False)


def test_valid_run_dir_exits_0_and_writes_results(spark, tmp_path):
    h = Builder()
    h.send(0, [(1, 0, 10)]); h.poll(1, {1: [(0, 10)]})
    h.write(tmp_path / "history.jsonl")
    (tmp_path / "test.json").write_text(json.dumps({"workload": "queue", "status": "complete"}))
    result = _run(tmp_path)
    assert result.exit_code == exit_codes.VALID, result.output
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["valid"] is True and saved["anomalies"] == {} and saved["workload"] == "queue"
    assert saved["stats"]["by_f"] == {"send": {"ok": 1}, "poll": {"ok": 1}}


def test_invalid_history_exits_1_and_forbid_allow_change_the_verdict(spark, tmp_path):
    h = Builder()
    h.send(0, [(1, 0, 10), (1, 2, 11)]); h.send(1, [(1, 1, 12)])   # int-send-skip (allowed)
    h.send(2, [(2, 0, 20)]); h.poll(3, {1: [(0, 10), (1, 12), (2, 11)], 2: [(0, 21)]})  # inconsistent
    path = h.write(tmp_path / "history.jsonl")
    out = tmp_path / "out"
    assert _run(path, "--out", out).exit_code == exit_codes.INVALID
    first = json.loads((out / "results.json").read_text())
    assert "int-send-skip" in first["anomaly_types"] and "int-send-skip" not in first["bad_anomaly_types"]
    assert "inconsistent-offsets" in first["bad_anomaly_types"]
    result = _run(path, "--out", out, "--allow", "inconsistent-offsets", "--allow", "unseen",
                  "--allow", "lost-write", "--forbid", "int-send-skip")
    assert result.exit_code == exit_codes.INVALID
    assert json.loads((out / "results.json").read_text())["bad_anomaly_types"] == ["int-send-skip"]


def test_history_without_ok_ops_is_unknown(spark, tmp_path):
    h = Builder()
    h.send(0, [(1, None, 10)], type_="fail")
    path = h.write(tmp_path / "history.jsonl")
    result = _run(path)
    assert result.exit_code == exit_codes.UNKNOWN
    assert json.loads((tmp_path / "results.json").read_text())["valid"] == "unknown"


def test_bad_input_exits_3_naming_file_and_line(spark, tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_text('{"index":0,"time":1,"type":"invoke","process":0,"f":"poll","value":[["poll"]]}\n'
                    '{"index":1,"time":2,"type":"ok","process":0,"f":"poll"\n')
    result = CliRunner(mix_stderr=False).invoke(check, [str(path)]) if "mix_stderr" in \
        CliRunner.__init__.__code__.co_varnames else CliRunner().invoke(check, [str(path)])
    assert result.exit_code == exit_codes.BAD_INPUT
    assert f"{path}:2: malformed JSON" in (result.stderr if hasattr(result, "stderr") else result.output)


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_a_history_that_is_not_utf8_exits_3_naming_file_and_line(spark, tmp_path, engine):
    path = tmp_path / "history.jsonl"
    path.write_bytes(b'{"index":0,"time":1,"type":"invoke","process":0,"f":"poll","value":[["poll"]]}\r\n'
                     b'{"index":1,"time":2,"type":"ok","process":0,"f":"poll","value":[["poll",{}]],"x":"\xff"}\n')
    result = CliRunner().invoke(check, [str(path), "--workload", "queue", "--engine", engine,
                                        "--out", str(tmp_path / "out")])
    assert result.exit_code == exit_codes.BAD_INPUT, result.output
    assert f"{path}:2: not UTF-8: byte 0xff at character 83" in result.output


def test_auto_engine_picks_by_size_workload_and_memory(tmp_path):
    """auto picks by size and workload (sparse files: only their size is read):
    list-append in-process up to its local_max_bytes; the queue beyond its
    own through the companion, in worker processes, while the estimated peak
    fits in half this machine's memory; Spark beyond, or when named."""
    import os

    from checkers.api import choose_engine
    from checkers.registry import CHECKERS, physical_memory
    queue = CHECKERS["queue"]
    too_big = int(physical_memory() / 2 / queue.companion_memory_per_byte) + 1
    picks = {}
    for size in (queue.local_max_bytes + 1, CHECKERS["list-append"].local_max_bytes + 1, too_big):
        path = tmp_path / f"{size}.jsonl"
        path.touch()
        os.truncate(path, size)
        picks[size] = [choose_engine(path, "auto", None, w) for w in ("queue", "list-append")]
    assert list(picks.values()) == [["local", "local"], ["local", "spark"], ["spark", "spark"]]
    assert choose_engine(path, "auto", "spark://127.0.0.1:7077", "list-append") == "spark"
    assert choose_engine(tmp_path / f"{queue.local_max_bytes + 1}.jsonl", "auto", "spark://127.0.0.1:7077",
                         "queue") == "spark"


def test_a_consistency_model_is_refused_for_the_queue_and_an_unknown_one_names_the_known(tmp_path):
    """--consistency-model is not silently ignored where no model applies, and a typo is
    bad input (exit 3) before the history is read, not a checker failure (exit 4)."""
    history = tmp_path / "history.jsonl"
    history.write_text('{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "send", '
                       '"value": [["send", 1, 1]]}\n')
    refused = CliRunner().invoke(main, ["check", str(history), "--workload", "queue",
                                        "--consistency-model", "serializable"])
    assert refused.exit_code == exit_codes.BAD_INPUT, refused.output
    assert "queue workload is not checked against a consistency model" in refused.output
    typo = CliRunner().invoke(main, ["check", str(history), "--workload", "list-append",
                                     "--consistency-model", "serialisable"])
    assert typo.exit_code == exit_codes.BAD_INPUT, typo.output
    assert "unknown consistency model 'serialisable'; known: " in typo.output
    assert "strong-session-snapshot-isolation" in typo.output
    assert not (tmp_path / "results.json").exists()


def test_a_model_alias_is_checked_and_recorded_by_its_name(tmp_path):
    from checkers.api import check_history
    from checkers.options import CheckOptions
    history = tmp_path / "history.jsonl"
    history.write_text('{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", '
                       '"value": [["append", 1, 1]]}\n'
                       '{"index": 1, "time": 2, "process": 0, "type": "ok", "f": "txn", '
                       '"value": [["append", 1, 1]]}\n')
    results = check_history(history, "list-append", out_dir=tmp_path, engine="local",
                            options=CheckOptions(consistency_model="PL-2.99"))
    assert results["checker"]["consistency_model"] == "repeatable-read"
