"""Named bundles of broker and client settings for `logtrial test`, and the
producer knobs' command-line options (docs/producer-state.md).

    logtrial test --local 3 --preset unsafe --nemesis kill,partition --seed 7
    logtrial test --local 3 --preset safe   --nemesis kill,partition --seed 7
    logtrial test --local 3 --preset producer-state --nemesis producer-state,pause
    logtrial test --set log.flush.interval.messages=1 ...

A preset fills in the options the command line left at their defaults (an
explicit flag always wins) and adds broker settings; `--set key=value` broker
settings win over the preset's. `--nemesis producer-state` adds the static
broker settings that fault needs (nemesis.producer_state.BROKER_SETTINGS).
Brokers already running with other settings are restarted with the new ones
(clusters/reconfigure.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

import click
from click.core import ParameterSource

from clusters.kafka.config import parse_settings
from nemesis.producer_state import BROKER_SETTINGS as PRODUCER_STATE_BROKER_SETTINGS


@dataclass(frozen=True)
class Preset:
    help: str
    db: dict[str, str] = field(default_factory=dict)        # broker settings
    options: dict[str, object] = field(default_factory=dict)  # `logtrial test` options (TestOptions names)


SAFE_DB = {"unclean.leader.election.enable": "false", "min.insync.replicas": "2"}
SAFE_OPTIONS = {"acks": "all", "idempotence": True, "min_insync_replicas": 2, "replication_factor": 3,
                "isolation_level": "read_committed"}

PRESETS: dict[str, Preset] = {
    "safe": Preset("acks=all, idempotent producers, min ISR 2, no unclean leader election",
                   db=SAFE_DB, options=SAFE_OPTIONS),
    # docs/findings.md's late-batch campaign: a Produce request held past its transaction's
    # abort, on the partition's leader, in short runs
    "late-batch": Preset(
        "safe, with faults on the partition leader every 6 s, 3 s op timeout, 20 s runs, 3 s recovery "
        "(use with --txn --nemesis client-delay)",
        db=SAFE_DB, options={**SAFE_OPTIONS, "db_targets": ("leader",), "nemesis_interval": 6.0, "op_timeout": 3.0,
                             "time_limit": 20.0, "recovery_time": 3.0}),
    "unsafe": Preset(
        "acks=1, no idempotence but retries, 5 requests in flight, min ISR 1, unclean leader election",
        db={"unclean.leader.election.enable": "true", "min.insync.replicas": "1"},
        options={"acks": "1", "idempotence": False, "retries": 10, "max_in_flight": 5,
                 "min_insync_replicas": 1, "replication_factor": 3}),
    "producer-state": Preset(
        "idempotent producers that idle past a short producer-id expiry (use with --nemesis producer-state)",
        db=PRODUCER_STATE_BROKER_SETTINGS,
        options={"acks": "all", "idempotence": True, "max_in_flight": 5, "idle_p": 0.05, "idle_ms": 4000}),
}


def apply_preset(values: dict, explicit: set[str]) -> dict:
    """Option values (click's names) after the preset, --set and the fault
    kinds' own broker settings; the result has `db_settings` and no `set`."""
    values = dict(values)
    preset_name = values.get("preset")
    preset = PRESETS[preset_name] if preset_name else Preset("")
    for name, value in preset.options.items():
        if name not in explicit:
            values[name] = value
    db = dict(preset.db)
    if "producer-state" in (values.get("nemesis") or ()):
        db = {**PRODUCER_STATE_BROKER_SETTINGS, **db}
    values["db_settings"] = {**db, **parse_settings(values.pop("set", ()) or ())}
    return values


PRESET_OPTIONS = [
    click.option("--preset", type=click.Choice(sorted(PRESETS)), default=None,
                 help="Settings bundle: " + "; ".join(f"{name}: {p.help}" for name, p in sorted(PRESETS.items()))
                      + ". Explicit flags win."),
    click.option("--set", "set", multiple=True, metavar="KEY=VALUE",
                 help="Broker setting (repeatable); brokers running with other settings are restarted."),
    click.option("--max-in-flight", type=click.IntRange(1), default=None,
                 help="Producer requests in flight per connection (1-5 with idempotence; default librdkafka's 5)."),
    click.option("--idle-p", type=click.FloatRange(0, 1), default=0.0, show_default=True,
                 help="Chance a process goes idle before an op (its producer sends nothing meanwhile)."),
    click.option("--idle-ms", type=click.IntRange(0), default=0, show_default=True,
                 help="How long an idle process stays idle, in ms."),
]


def preset_options(command: Callable) -> Callable:
    """Adds --preset, --set, --max-in-flight, --idle-p and --idle-ms to a click
    command, and applies the preset before the command runs: it receives
    `db_settings` instead of `set`, and the preset's values for options left
    at their defaults."""
    @functools.wraps(command)
    def wrapper(**kwargs):
        ctx = click.get_current_context()
        explicit = {name for name in kwargs
                    if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)}
        try:
            values = apply_preset(kwargs, explicit)
        except ValueError as e:
            raise click.BadParameter(str(e), ctx, param_hint="--set") from None
        return command(**values)

    for option in reversed(PRESET_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
