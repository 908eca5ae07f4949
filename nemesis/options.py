"""The nemesis command-line options, as one click decorator (`logtrial test` uses it).

    @click.command()
    @nemesis_options
    def test(nemesis, nemesis_interval, db_targets, nemesis_schedule, partition_clients, ...):

`nemesis` arrives as a list of fault names ([] for none), `db_targets` as a list of
target names; unknown names are usage errors that list the valid ones.
"""
from __future__ import annotations

from typing import Callable

import click

from nemesis.registry import BY_NAME_ONLY, FAULT_NAMES, parse_kinds
from nemesis.runner import DEFAULT_INTERVAL, DEFAULT_TARGETS
from nemesis.schedule import ScheduleError, load_schedule
from nemesis.targets import TARGETS, parse_targets


def _kinds(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    try:
        return parse_kinds(value)
    except ValueError as e:
        raise click.BadParameter(str(e), ctx, param) from None


def _targets(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    try:
        return parse_targets(value)
    except ValueError as e:
        raise click.BadParameter(str(e), ctx, param) from None


def _schedule_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Reads the replayed history now, so a bad one is a usage error naming file and line."""
    if value is not None:
        try:
            load_schedule(value)
        except ScheduleError as e:
            raise click.BadParameter(str(e), ctx, param) from None
    return value


def _interval(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if value <= 0:
        raise click.BadParameter(f"must be a positive number of seconds, got {value:g}",
                                 ctx, param)
    return value


NEMESIS_OPTIONS = [
    click.option("--nemesis", default="none", show_default=True, callback=_kinds,
                 help=f"Faults to inject, comma-separated: {', '.join(FAULT_NAMES)}; "
                      f"'all' for every one but {', '.join(BY_NAME_ONLY)}; 'none' for a fault-free run."),
    click.option("--nemesis-interval", type=float, default=DEFAULT_INTERVAL, show_default=True,
                 callback=_interval,
                 help="Mean seconds between a fault's start and stop (and stop and next "
                      "start); each wait is drawn from 0.5-1.5 x this."),
    click.option("--db-targets", default=",".join(DEFAULT_TARGETS), show_default=True,
                 callback=_targets,
                 help=f"Which brokers pause/kill/clock/packet strike, comma-separated, one drawn per "
                      f"fault: {', '.join(TARGETS)}."),
    click.option("--nemesis-schedule", type=click.Path(exists=True, dir_okay=False),
                 default=None, callback=_schedule_file,
                 help="Replay the faults recorded in an earlier run's history.jsonl "
                      "(same times, same nodes) instead of drawing new ones."),
    click.option("--partition-clients", is_flag=True, default=False,
                 help="Partitions also cut the control node (the clients) off from the "
                      "far side; by default clients reach every node."),
]


def nemesis_options(command: Callable) -> Callable:
    """Adds --nemesis, --nemesis-interval, --db-targets, --nemesis-schedule and
    --partition-clients to a click command."""
    for option in reversed(NEMESIS_OPTIONS):
        command = option(command)
    return command
