"""Run directories and the runner's bookkeeping, without a cluster: the no-op
workload from the overhead benchmark drives the real worker loop."""
import json
import os

from benchmarks.runner_overhead import NoopRun
from checkers.history.stream import raw_events
from checkers.history.wellformed import wellformedness_problems
from common import exit_codes
from harness import runner
from harness.runner import TestOptions
from results import store
from results.runs import list_runs


def test_run_dirs_are_per_test_and_timestamp_and_latest_follows(tmp_path):
    first = store.create_run_dir(tmp_path, "queue-partition acks=all", now=0)
    second = store.create_run_dir(tmp_path, "queue-partition acks=all", now=0)
    assert first.parent.name == "queue-partition-acks=all"
    assert second.name == first.name + "-1"
    assert (first / "nodes").is_dir()
    assert os.path.realpath(tmp_path / "latest") == str(second)
    store.write_test_json(first, {"status": "complete", "start_time": "2026-01-01T00:00:00"})
    store.write_test_json(second, {"status": "incomplete", "start_time": "2026-01-01T00:00:01"})
    runs = list_runs(tmp_path)
    assert [(tmp_path / r.rel, r.status) for r in runs] == [(second, "incomplete"), (first, "complete")]


def test_test_names_say_workload_faults_and_settings():
    assert runner.test_name(TestOptions.from_flat(local=3)) == "queue-no-faults-acks=all"
    options = TestOptions.from_flat(local=3, workload="list-append", nemesis=("partition", "pause"), txn=True,
                                    acks="1", idempotence=False, sub_via="subscribe")
    name = runner.test_name(options)
    assert name == "list-append-partition,pause-acks=1-txn-no-idem-subscribe"


def test_a_run_records_options_status_and_a_well_formed_history(tmp_path):
    options = TestOptions.from_flat(bootstrap_servers="unused", store=str(tmp_path), time_limit=0.5, rate=2000,
                                    concurrency=3, recovery_time=0, check=False, report=False, seed=7)
    result = NoopRun(options).execute()
    assert result.status == "complete"
    assert result.exit_code == exit_codes.UNKNOWN  # not checked (--no-check)
    events = list(raw_events(result.run_dir / "history.jsonl"))
    assert len(events) > 10 and wellformedness_problems(events, "queue") == []
    test_json = json.loads((result.run_dir / "test.json").read_text())
    assert test_json["status"] == "complete" and test_json["seed"] == 7
    assert test_json["options"]["concurrency"] == 3
    assert set(test_json["versions"]) == {"logtrial", "kafka", "confluent_kafka", "librdkafka"}
    assert test_json["counts"]["ok"] == len(events) // 2
    assert (result.run_dir / "logtrial.log").read_text()
    assert json.loads((result.run_dir / "results.json").read_text())["valid"] == "unknown"


def test_bad_options_are_refused_before_a_run_directory_exists(tmp_path):
    import pytest
    with pytest.raises(ValueError, match="exactly one of"):
        NoopRun(TestOptions.from_flat(store=str(tmp_path)))
    with pytest.raises(ValueError, match="faults need a cluster"):
        NoopRun(TestOptions.from_flat(bootstrap_servers="x", nemesis=("pause",), store=str(tmp_path)))
    with pytest.raises(ValueError, match="--acks all"):
        NoopRun(TestOptions.from_flat(bootstrap_servers="x", acks="1", store=str(tmp_path)))
    assert not any(tmp_path.iterdir())
