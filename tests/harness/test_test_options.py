"""TestOptions' specs against the command line, the workload registry against
the checkers', and the check's options through `test`, `test-all` and `check`
(no cluster: the end-to-end run is in tests/harness/test_runner_cluster.py)."""
from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from checkers.options import CheckOptions
from checkers.registry import WORKLOAD_NAMES as CHECKED_WORKLOADS
from common import exit_codes
from harness.cli import main
from harness.commands.check import recorded_check
from harness.commands import test as test_module, test_all as test_all_module
from harness.flat import flat_names
from harness import test_options as test_options_module
from harness.test_options import TestOptions
from results.runs import option
from workloads.registry import KINDS, WORKLOAD_NAMES, workload_kind

# options of `test` that are not settings of a run: how many runs, and a shorthand for others
COMMAND_ONLY = {"test_count", "safe"}


def option_names(command: click.Command) -> set[str]:
    # --set reaches TestOptions as db_settings (harness/presets.py)
    return {"db_settings" if p.name == "set" else p.name for p in command.params} - COMMAND_ONLY


def test_the_harness_and_the_checkers_know_the_same_workloads():
    assert WORKLOAD_NAMES == CHECKED_WORKLOADS
    assert all(kind.checker.name == name for name, kind in KINDS.items())


def test_every_spec_field_has_a_test_option_and_every_option_a_field():
    assert option_names(test_module.test) == TestOptions.option_names()


def test_every_test_all_option_sets_a_spec_field():
    matrix_axes = {"workloads", "nemeses", "txn", "test_count", "junit", "kafka_versions", "quorums", "clients", "dbs",
                   "txn_versions", "seeds", "forensics", "resume"}
    assert option_names(test_all_module.test_all) - matrix_axes <= flat_names(TestOptions)


def test_a_test_matrix_runs_txn_as_an_axis_only_where_the_workload_has_one():
    assert workload_kind("queue").txn_settings((False, True)) == (False, True)
    assert workload_kind("list-append").txn_settings((False, True)) == (True,)
    with pytest.raises(ValueError, match="queue, list-append"):
        workload_kind("bank")


def test_options_are_recorded_flat_under_the_names_results_reads():
    options = TestOptions.from_flat(local=3, workload="list-append", txn=True, nemesis=("pause",),
                                    consistency_model="serializable", forbid=("G0",))
    record = json.loads(json.dumps(options.record()))
    assert option(record, "workload") == "list-append" and option(record, "txn") is True
    assert option(record, "nemesis") == ["pause"] and option(record, "concurrency") == 10
    assert options.check.record()["consistency_model"] == "serializable"
    assert json.loads(json.dumps(TestOptions.from_flat(**record).record())) == record
    assert options.replace(txn=False).workload.settings.txn is False


def test_a_bad_consistency_model_is_bad_input_before_the_run(tmp_path):
    for command in (["test"], ["test-all", "--workloads", "list-append"]):
        result = CliRunner().invoke(main, [*command, "--bootstrap-servers", "127.0.0.1:1", "--store",
                                           str(tmp_path / "store"), "--consistency-model", "serial"])
        assert result.exit_code == exit_codes.BAD_INPUT, result.output
        assert "unknown consistency model 'serial'; known: " in result.output
        assert "read-uncommitted" in result.output and "PL-2" in result.output
        assert not (tmp_path / "store").exists()


def test_a_local_cluster_name_no_cluster_can_have_is_bad_input_before_the_run(tmp_path, monkeypatch):
    """--local's cluster is named by LOGTRIAL_LOCAL_CLUSTER (read at import)."""
    monkeypatch.setattr(test_options_module, "DEFAULT_NAME", "Bad_Name")
    result = CliRunner().invoke(main, ["test", "--local", "3", "--store", str(tmp_path / "store")])
    assert result.exit_code == exit_codes.BAD_INPUT, result.output
    assert "LOGTRIAL_LOCAL_CLUSTER: cluster name 'Bad_Name' is not valid" in result.output
    assert not (tmp_path / "store").exists()


def test_check_takes_the_recorded_options_unless_given():
    test_json = {"check": {**CheckOptions("serializable", forbid=("G0",)).record(), "engine": "local"}}
    values = recorded_check(test_json, {"allow": ("G1c",)})
    assert CheckOptions.from_record(values) == CheckOptions("serializable", allow=("G1c",), forbid=("G0",))
    assert values["engine"] == "local"
    assert recorded_check({}, {}) == {}   # a run from before test.json had "check"


def test_checking_a_run_again_takes_its_recorded_allow_and_forbid(tmp_path):
    """A stored run whose test.json allows lost writes: `check` on it leaves them
    out of the bad types, unless the command line says otherwise."""
    oracle = Path(__file__).resolve().parents[1] / "fixtures" / "oracle" / "queue-unsafe-kill-partition.jsonl"
    (tmp_path / "history.jsonl").write_bytes(oracle.read_bytes())
    recorded = {**CheckOptions(allow=("lost-write",)).record(), "engine": "local", "spark_master": None}
    (tmp_path / "test.json").write_text(json.dumps({"workload": "queue", "check": recorded}))

    def bad_types(*args: str) -> list[str]:
        result = CliRunner().invoke(main, ["check", str(tmp_path), *args])
        assert result.exit_code == exit_codes.INVALID, result.output
        results = json.loads((tmp_path / "results.json").read_text())
        assert "lost-write" in results["anomaly_types"] and results["checker"]["engine"] == "local"
        return results["bad_anomaly_types"]
    assert "lost-write" not in bad_types()
    assert "lost-write" in bad_types("--allow", "unseen")


def test_a_consistency_model_for_the_queue_is_refused_before_the_run(tmp_path):
    result = CliRunner().invoke(main, ["test", "--workload", "queue", "--bootstrap-servers", "127.0.0.1:1",
                                       "--store", str(tmp_path / "store"), "--consistency-model", "serializable"])
    assert result.exit_code == exit_codes.BAD_INPUT, result.output
    assert "queue workload is not checked against a consistency model" in result.output
    assert not (tmp_path / "store").exists()


def test_a_test_matrix_runs_each_client_on_the_workloads_it_has():
    cells = test_all_module.matrix(["queue", "list-append"], ["none"], "off", 1, clients=["librdkafka", "java"])
    assert [(c.client, c.workload) for c in cells] == [("librdkafka", "queue"), ("librdkafka", "list-append"),
                                                       ("java", "queue")]
    base = TestOptions.from_flat(local=3)
    assert test_all_module.options_for(base, cells[2]).workload.settings.client == "java"
    assert test_all_module.options_for(base, cells[0]).workload.settings.client == "librdkafka"
    assert "client=java" in test_all_module.cell_label(cells[2])


def test_client_and_txn_version_are_recorded_flat():
    record = TestOptions.from_flat(local=3, client="java", txn_version=2).record()
    assert option(record, "client") == "java" and option(record, "txn_version") == 2
    result = CliRunner().invoke(main, ["test", "--local", "3", "--client", "java", "--workload", "list-append"])
    assert result.exit_code == exit_codes.BAD_INPUT and "has no client for --workload list-append" in result.output


def test_the_client_library_versions_are_recorded_whole():
    import confluent_kafka

    from harness.test_record import versions
    recorded = versions()
    assert recorded["librdkafka"] == confluent_kafka.libversion()[0]
    assert recorded["confluent_kafka"].count(".") == 2, recorded
