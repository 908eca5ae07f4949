"""`logtrial probe ...` without a cluster: the group lists its probes, each probe's
module loads, bad input exits BAD_INPUT naming what is wrong, and a probe that crashes
exits CRASHED (not 1, which is a finding)."""
from __future__ import annotations

import importlib

import pytest
from click.testing import CliRunner

import clusters.nodes.local
from common import exit_codes
from harness.cli import main
from harness.commands.probe import CRASHED, exit_with

# command -> its module in harness/probes/
PROBES = {"late-batch": "late_batch", "txn-version": "txn_version",
          "stale-offset-fetch": "stale_offset_fetch", "storage-loss-fetch": "storage_loss_fetch",
          "deleted-topic-fetch": "deleted_topic_fetch", "fetch-answer": "fetch_crash",
          "isr-power-loss": "isr_power_loss", "format-power-loss": "format_power_loss"}


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_probe_help_lists_every_probe_on_one_line():
    result = run("probe", "--help")
    assert result.exit_code == 0, result.output
    commands = result.output.split("Commands:")[1].splitlines()
    for name in PROBES:
        assert sum(line.split()[:1] == [name] for line in commands) == 1, result.output


@pytest.mark.parametrize("command", PROBES)
def test_each_probe_has_help_and_its_module_loads(command):
    assert run("probe", command, "--help").exit_code == 0
    importlib.import_module(f"harness.probes.{PROBES[command]}")


@pytest.fixture
def no_clusters(tmp_path, monkeypatch):
    """A state root with no cluster in it, whatever this machine runs."""
    monkeypatch.setattr(clusters.nodes.local, "STATE_ROOT", tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", ["late-batch", "txn-version", "storage-loss-fetch", "deleted-topic-fetch",
                                     "isr-power-loss", "format-power-loss"])
def test_an_unknown_cluster_is_bad_input_naming_it(no_clusters, command):
    result = run("probe", command, "no-such-cluster")
    assert result.exit_code == exit_codes.BAD_INPUT, result.output
    assert "no local cluster 'no-such-cluster'" in result.output
    assert "Traceback" not in result.output


def test_an_invalid_cluster_name_is_bad_input(no_clusters):
    result = run("probe", "late-batch", "Not_A_Name")
    assert result.exit_code == exit_codes.BAD_INPUT and "'Not_A_Name' is not valid" in result.output


def test_the_debug_log_with_the_java_client_is_bad_input(no_clusters):
    (no_clusters / "probe").mkdir()
    (no_clusters / "probe" / "inventory.yaml").write_text("")  # never read: the options are refused first
    result = run("probe", "late-batch", "probe", "--client", "java",
                 "--debug-log", str(no_clusters / "d.log"))
    assert result.exit_code == exit_codes.BAD_INPUT and "--debug-log is librdkafka's" in result.output


def test_a_crashed_probe_exits_crashed_with_its_traceback(capsys):
    def crash() -> int:
        raise RuntimeError("the cluster went away")

    with pytest.raises(SystemExit) as exited:
        exit_with(crash)
    assert exited.value.code == CRASHED != 1
    err = capsys.readouterr().err
    assert "the probe failed" in err and "RuntimeError: the cluster went away" in err


def test_the_debug_log_file_gets_librdkafkas_own_log_lines(tmp_path):
    """librdkafka writes its log to fd 2 itself (Python's logging never sees it): the
    probe's --debug-log redirects that, and gives stderr back after."""
    from confluent_kafka import Producer

    from harness.probes.librdkafka_log import stderr_appended_to

    log = tmp_path / "debug.log"
    with stderr_appended_to(str(log)):
        producer = Producer({"bootstrap.servers": "127.0.0.1:1", "debug": "broker"})
        producer.poll(0.5)
        del producer
    assert "|BROKER|" in log.read_text()


def test_stale_offset_fetch_with_no_broker_there_is_bad_input_naming_the_address():
    """librdkafka would retry an unreachable broker for ever: the probe gives up, and says where."""
    result = run("probe", "stale-offset-fetch", "127.0.0.1:1", "--timeout", "2")
    assert result.exit_code == exit_codes.BAD_INPUT, result.output
    assert "no broker at 127.0.0.1:1 created the probe's topics within 2 s" in result.output
    assert "Traceback" not in result.output
