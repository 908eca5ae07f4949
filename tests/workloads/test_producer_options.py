"""Presets, --set, and the producer knobs (no cluster needed)."""
from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from harness.presets import PRESETS, preset_options
from harness.flat import flat_names
from harness.runner import TestOptions
from nemesis.producer_state import BROKER_SETTINGS
from workloads.producer_knobs import IdleGenerator, check_max_in_flight, invoke_extra, producer_config
from workloads.settings import WorkloadSettings


@click.command()
@click.option("--acks", default="all")
@click.option("--idempotence/--no-idempotence", default=True)
@click.option("--nemesis", default="none", callback=lambda c, p, v: [k for k in v.split(",") if k != "none"])
@preset_options
def show(**values):
    click.echo(json.dumps(values, sort_keys=True))


def _run(*args) -> dict:
    result = CliRunner().invoke(show, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_preset_fills_defaults_but_explicit_flags_and_set_win():
    values = _run("--preset", "unsafe", "--acks", "all", "--set", "min.insync.replicas=2",
                  "--set", "log.flush.interval.messages=1")
    assert values["acks"] == "all"                      # explicit flag beats the preset
    assert values["idempotence"] is False               # preset beats the default
    assert values["max_in_flight"] == 5 and values["retries"] == 10
    assert values["db_settings"] == {"unclean.leader.election.enable": "true", "min.insync.replicas": "2",
                                     "log.flush.interval.messages": "1"}
    assert "set" not in values


def test_no_preset_changes_nothing_and_producer_state_fault_brings_its_broker_settings():
    plain = _run()
    assert plain["db_settings"] == {} and plain["acks"] == "all" and plain["max_in_flight"] is None
    assert _run("--nemesis", "producer-state")["db_settings"] == BROKER_SETTINGS


def test_bad_set_is_a_usage_error_naming_it():
    result = CliRunner().invoke(show, ["--set", "no-equals-sign"])
    assert result.exit_code == 2
    assert "--set 'no-equals-sign': expected key=value" in result.output


def test_every_preset_names_real_test_options():
    fields = flat_names(TestOptions)
    for name, preset in PRESETS.items():
        assert set(preset.options) <= fields, name
        TestOptions.from_flat(local=3, **preset.options).validate()


def test_max_in_flight_limits():
    check_max_in_flight(5, idempotent=True)
    check_max_in_flight(50, idempotent=False)
    with pytest.raises(ValueError, match="between 1 and 5 with idempotence"):
        check_max_in_flight(6, idempotent=True)
    with pytest.raises(ValueError, match="--max-in-flight"):
        TestOptions.from_flat(local=3, max_in_flight=6).validate()
    assert producer_config(WorkloadSettings(max_in_flight=3)) == {"max.in.flight.requests.per.connection": 3}
    assert producer_config(WorkloadSettings()) == {}


def test_invokes_of_sends_say_which_producer_sent_them():
    assert invoke_extra("send", WorkloadSettings()) == {"producer": {"idempotent": True, "transactional": False}}
    assert invoke_extra("txn", WorkloadSettings(idempotence=False, txn=True)) == {
        "producer": {"idempotent": True, "transactional": True}}
    assert invoke_extra("send", WorkloadSettings(idempotence=False)) == {
        "producer": {"idempotent": False, "transactional": False}}
    assert invoke_extra("poll", WorkloadSettings()) == {}


def test_idle_generator_idles_the_chosen_fraction_and_is_seeded():
    class Ops:
        def next_op(self, process):
            return ("op", process)

    def idles(seed: int) -> int:
        generator = IdleGenerator(Ops(), idle_p=0.25, idle_ms=1, seed=seed)
        assert [generator.next_op(p % 4) for p in range(400)] == [("op", p % 4) for p in range(400)]
        return generator.idles

    assert 60 <= idles(7) <= 140
    assert idles(7) == idles(7)
