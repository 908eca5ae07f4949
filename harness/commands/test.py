"""`logtrial test`: run one workload against a cluster, with faults, and check it."""
from __future__ import annotations

import sys

import click

from common import exit_codes
from clusters.systems import SYSTEMS
from harness import interrupts
from harness.check_cli import check_options
from harness.kafka_options import kafka_release_options
from harness.presets import preset_options
from harness.runner import run_test
from harness.test_options import TestOptions
from workloads.client_kinds import CLIENT_NAMES
from workloads.settings import DEFAULT_CLIENT
from workloads.registry import WORKLOAD_NAMES

# precedence of exit codes when --test-count runs several tests: the worst wins
_SEVERITY = [exit_codes.VALID, exit_codes.UNKNOWN, exit_codes.INVALID, exit_codes.BAD_INPUT, exit_codes.HARNESS_ERROR,
             exit_codes.INTERRUPTED]


def nemesis_options(f):
    """The nemesis helper's option decorator when it is there, else --nemesis none only."""
    try:
        from nemesis.options import nemesis_options as real  # loads confluent_kafka: only when needed
    except ImportError:
        f = click.option("--nemesis-interval", type=float, default=10.0, show_default=True,
                         help="Seconds between fault changes.")(f)
        return click.option("--nemesis", "nemesis", default="none", show_default=True,
                            type=click.Choice(["none"]),
                            help="Faults to inject (no fault injector is installed in this build).")(f)
    return real(f)


@click.command()
@click.option("--workload", type=click.Choice(WORKLOAD_NAMES), default="queue", show_default=True)
@click.option("--client", type=click.Choice(CLIENT_NAMES), default=DEFAULT_CLIENT, show_default=True,
              help="The Kafka client under test (workloads/client_kinds.py): librdkafka is confluent-kafka's; "
                   "the others run only the workloads they have clients for, and refuse what they cannot do.")
@click.option("--nodes-file", type=click.Path(exists=True, dir_okay=False),
              help="Inventory (YAML) of the cluster's nodes.")
@click.option("--local", type=click.IntRange(1, 9), help="Bring up a local cluster of N nodes for this run.")
@click.option("--db", type=click.Choice(SYSTEMS),
              help="The system under test: kafka (default) or tansu (brokers on PostgreSQL; --local N "
                   "brings up N brokers and a PostgreSQL node). Default: the inventory's.")
@click.option("--bootstrap-servers", help="An existing Kafka without SSH access (no faults, no node logs).")
@click.option("--insecure-host-keys", is_flag=True, help="Accept unknown SSH host keys.")
@click.option("--txn-version", type=click.Choice(["1", "2"]), callback=lambda ctx, param, v: v and int(v),
              help="Finalize the cluster's transaction.version feature (Kafka 4.0+) before the run.")
@click.option("--pin-clients", is_flag=True,
              help="Each process's clients reach one node only (round-robin; local clusters).")
@kafka_release_options
@click.option("--store", default="store", show_default=True, type=click.Path(file_okay=False))
@click.option("--name", "test_name", help="Test name (default: made from workload, faults and settings).")
@click.option("--time-limit", type=float, default=60.0, show_default=True, help="Seconds of main phase.")
@click.option("--rate", type=float, default=100.0, show_default=True, help="Ops per second, all processes.")
@click.option("--concurrency", type=click.IntRange(1), default=10, show_default=True,
              help="Logical processes running at once.")
@nemesis_options
@click.option("--seed", type=int, help="Random seed (default: random, recorded in test.json).")
@click.option("--test-count", type=click.IntRange(1), default=1, show_default=True, help="Run the test N times.")
@click.option("--recovery-time", type=float, default=10.0, show_default=True,
              help="Seconds to wait after healing before the final reads.")
@click.option("--final-time-limit", type=float, default=60.0, show_default=True,
              help="Seconds the final reads may take.")
@click.option("--hang-timeout", type=float, default=120.0, show_default=True,
              help="Seconds without a heartbeat after which a watchdog process takes the control process "
                   "for hung: dumps its stacks, kills it, heals the cluster (0: no watchdog).")
@click.option("--leave-db-running", is_flag=True, help="Leave Kafka (and a --local cluster) up afterwards.")
@click.option("--check/--no-check", default=True, show_default=True)
@check_options
@click.option("--report/--no-report", default=True, show_default=True)
@click.option("--acks", type=click.Choice(["0", "1", "all"]), default="all", show_default=True)
@click.option("--idempotence/--no-idempotence", default=True, show_default=True)
@click.option("--retries", type=int, help="Producer retries (default: librdkafka's).")
@click.option("--isolation-level", type=click.Choice(["read_committed", "read_uncommitted"]),
              default="read_committed", show_default=True)
@click.option("--auto-offset-reset", type=click.Choice(["earliest", "latest"]), default="earliest",
              show_default=True)
@click.option("--enable-auto-commit/--no-enable-auto-commit", default=False, show_default=True)
@click.option("--sub-via", type=click.Choice(["assign", "subscribe"]), default="assign", show_default=True)
@click.option("--assign-p", type=click.FloatRange(0, 0.9), default=0.08, show_default=True,
              help="Queue: chance an op assigns (or subscribes) anew.")
@click.option("--txn", is_flag=True, help="Sends and polls in Kafka transactions.")
@click.option("--abort-p", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Chance a transaction is aborted on purpose.")
@click.option("--crash-clients", is_flag=True, help="Now and then close a process's clients and replace them.")
@click.option("--safe", is_flag=True,
              help="acks=all, idempotence, read_committed, earliest, no auto commit, assign.")
@click.option("--key-count", type=click.IntRange(1), default=4, show_default=True, help="Active keys at a time.")
@click.option("--max-writes-per-key", type=click.IntRange(1), default=1024, show_default=True)
@click.option("--replication-factor", type=click.IntRange(1), default=3, show_default=True)
@click.option("--min-insync-replicas", type=click.IntRange(1), default=2, show_default=True)
@click.option("--op-timeout", type=float, default=10.0, show_default=True,
              help="Seconds before an op is recorded as indefinite.")
@preset_options
def test(test_count: int, safe: bool, nemesis, **kwargs) -> None:
    """Run a test: workload + faults, final reads, check and report."""
    options = build_options(safe=safe, nemesis=nemesis, **kwargs)
    interrupts.install()
    worst = exit_codes.VALID
    for i in range(test_count):
        if test_count > 1:
            click.echo(f"test {i + 1} of {test_count}", err=True)
        try:
            result = run_test(options)
        except ValueError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(exit_codes.BAD_INPUT)
        worst = max(worst, result.exit_code, key=_SEVERITY.index)
        if result.exit_code == exit_codes.INTERRUPTED:
            break
    sys.exit(worst)


# what --safe sets (explicit flags lose to it)
SAFE = dict(acks="all", idempotence=True, isolation_level="read_committed", auto_offset_reset="earliest",
            enable_auto_commit=False, sub_via="assign")


def build_options(safe: bool, nemesis, **values) -> TestOptions:
    """Click's values -> TestOptions, validated; bad input exits BAD_INPUT naming it."""
    if isinstance(nemesis, str):
        nemesis = tuple(k.strip() for k in nemesis.split(",") if k.strip())
    if safe:
        values.update(SAFE)
    try:
        options = TestOptions.from_flat(nemesis=tuple(nemesis or ()), progress=True, **values)
        options.validate()
    except ValueError as e:  # CheckOptionError too: a bad --consistency-model lists the known ones
        click.echo(f"error: {e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    return options
