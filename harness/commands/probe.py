"""`logtrial probe late-batch|txn-version|stale-offset-fetch|storage-loss-fetch|
deleted-topic-fetch|fetch-answer|isr-power-loss|format-power-loss`: the findings' probes
(harness/probes/, docs/findings.md), each reproducing one finding on demand.

Exit codes: 0 the probe saw nothing wrong; 1 it saw its finding (late-batch: a round
lost B, read A or was not ok; stale-offset-fetch: the consumer did not start at the
committed offset; storage-loss-fetch, deleted-topic-fetch, fetch-answer: the consumers'
process died of SIGSEGV; isr-power-loss: acknowledged records lost; format-power-loss:
the broker no longer starts); 2 (CRASHED) the probe itself failed; 3 bad input (no such
cluster, a bad option). The probes' own modules load only when one runs: `logtrial probe
--help` starts no client."""
from __future__ import annotations

import sys
import traceback
from typing import TYPE_CHECKING, Callable, NoReturn

import click

from common import exit_codes
from clusters.nodes.local import LocalCluster, LocalClusterError
from harness.probes.late_batch_timing import LIBRDKAFKA_LIFT_S
from harness.probes.powerfs_cluster import NotOnPowerfs
from workloads.client_kinds import CLIENT_NAMES
from workloads.settings import DEFAULT_CLIENT

if TYPE_CHECKING:
    from clusters.cluster import Cluster

CRASHED = 2  # not a verdict: exit 1 means the probe saw its finding


def local_inventory(ctx: click.Context, param: click.Parameter, name: str) -> str:
    """NAME's inventory, or a usage error (exit 3) naming the cluster."""
    try:
        local = LocalCluster(name)
    except LocalClusterError as e:
        raise click.BadParameter(str(e), ctx, param) from None
    if not local.inventory_path.exists():
        raise click.BadParameter(f"no local cluster {name!r} (no {local.inventory_path}); start one "
                                 f"with `logtrial cluster up --name {name}`", ctx, param)
    return str(local.inventory_path)


cluster_argument = click.argument("inventory", metavar="NAME", callback=local_inventory)
fetch_debug_log = click.option("--debug-log", type=click.Path(dir_okay=False),
                               help="Append the consumers' librdkafka debug log (fetch, metadata) to this file.")


def rounds_argument(default: int) -> Callable:
    return click.argument("rounds", type=click.IntRange(min=1), default=default, required=False)


def exit_with(probe_run: Callable[[], int]) -> NoReturn:
    """Exits with the probe's code, or CRASHED with the traceback if it raised: a
    crash must not read as a finding."""
    try:
        code = probe_run()
    except Exception:  # noqa: BLE001 - printed, and told apart from a finding by its exit code
        click.echo("error: the probe failed", err=True)
        traceback.print_exc()
        code = CRASHED
    sys.exit(code)


def refusing(probe_run: Callable[[Cluster], int], refusal: type[Exception], command: str) -> Callable[[Cluster], int]:
    """`probe_run`, whose `refusal` (the cluster is not of the kind the probe needs) is bad
    input (exit 3), not a crash."""
    def run(cluster: Cluster) -> int:
        try:
            return probe_run(cluster)
        except refusal as e:
            click.echo(f"logtrial probe {command}: {e}", err=True)
            sys.exit(exit_codes.BAD_INPUT)
    return run


def on_cluster(inventory: str, probe_run: Callable[[Cluster], int]) -> NoReturn:
    """`probe_run` on the opened cluster; opening it may crash too (SSH, a stopped broker)."""
    from clusters.cluster import Cluster  # SSH and the clients: only when a probe runs

    def opened() -> int:
        with Cluster.open(inventory) as cluster:
            return probe_run(cluster)
    exit_with(opened)


@click.group()
def probe() -> None:
    """Reproduce one finding of docs/findings.md on demand.

    Each probe prints what it saw; exit 0 nothing wrong, 1 the finding seen, 2 the probe
    itself failed, 3 bad input."""


@probe.command("late-batch", short_help="Where a batch held past its abort lands (txn).")
@cluster_argument
@click.argument("rounds", type=click.IntRange(min=1), default=1, required=False)
@click.option("--client", type=click.Choice(CLIENT_NAMES), default=DEFAULT_CLIENT, show_default=True,
              help="The producer: librdkafka (confluent-kafka), Kafka's Java client of the "
                   "cluster's version (workloads/java_client/), Sarama or franz-go "
                   "(workloads/go_clients/), kafkajs (workloads/kafkajs_client/), kafka-python or "
                   "aiokafka (workloads/kafka_python/, workloads/aiokafka_client/).")
@click.option("--lift-after", type=float, default=LIBRDKAFKA_LIFT_S, show_default=True,
              help="All but librdkafka: lift the hold this many seconds after A began (by default as librdkafka's "
                   "round lifts it); past 2 x the op timeout, the abort's max.block.ms passes first.")
@click.option("--debug-log", type=click.Path(dir_okay=False),
              help="Append librdkafka's debug log (eos, msg, protocol) to this file.")
@click.option("--until-lost", is_flag=True, help="Stop at the first round that lost B or read A.")
def late_batch(inventory: str, rounds: int, client: str, lift_after: float, debug_log: str | None,
               until_lost: bool) -> NoReturn:
    """Where does a transaction's batch land when it reaches the leader only after the
    client gave up on it, aborted, and began its next transaction? ROUNDS rounds (default
    1) on the local cluster NAME, each with a fresh topic whose leader is held by
    client-delay.

    Prints each round's steps, its partition's log and a verdict: B LOST / A READ, A'S
    SEQUENCE GIVEN TO B, ok, or INCONCLUSIVE. Exit 1 if any round was not ok
    (harness/probes/late_batch.py tells more)."""
    if client != DEFAULT_CLIENT and debug_log:
        raise click.UsageError("--debug-log is librdkafka's")
    from harness.probes import late_batch as probe_module  # loads the clients: only when run

    on_cluster(inventory, lambda cluster: probe_module.run(cluster, rounds, debug_log, until_lost,
                                                           client, lift_after))


@probe.command("txn-version", short_help="Which client really uses transaction.version 2.")
@cluster_argument
@click.argument("level", type=click.Choice(("1", "2")), default="2", required=False, metavar="[LEVEL]")
@click.argument("transactions", type=click.IntRange(min=1), default=4, required=False)
def txn_version(inventory: str, level: str, transactions: int) -> NoReturn:
    """Finalizes transaction.version LEVEL (1 or 2; default 2) on the local cluster NAME
    (Kafka 4.x), commits TRANSACTIONS (default 4) one-send transactions with each client,
    and prints each client's request versions (from the brokers' request logs) and the
    producer epochs of its batches and markers, read on a broker. Exit 0.

    (harness/probes/txn_version.py tells more.)"""
    from harness.probes import txn_version as probe_module  # loads the clients: only when run

    on_cluster(inventory, lambda cluster: probe_module.run(cluster, int(level), transactions))


@probe.command("stale-offset-fetch", short_help="librdkafka's consumer rewind to offset 0.")
@click.argument("bootstrap", metavar="HOST:PORT")
@click.option("--timeout", type=click.FloatRange(min=0.5), default=30.0, show_default=True,
              help="Seconds to wait for the broker to create the probe's topics (none: exit 3).")
def stale_offset_fetch(bootstrap: str, timeout: float) -> NoReturn:
    """A read_committed consumer assigns a partition while an open transaction holds its
    group's offset, assigns again, and the transaction commits: prints the committed
    offset and the first offset polled. Exit 0 if they are equal, 1 if the consumer
    rewound. Plain confluent-kafka calls against the broker HOST:PORT.

    (harness/probes/stale_offset_fetch.py tells more.)"""
    from harness.probes import stale_offset_fetch as probe_module  # loads the client: only when run

    def probe_run() -> int:
        try:
            return probe_module.run(bootstrap, timeout)
        except probe_module.NoBroker as e:
            click.echo(f"logtrial probe stale-offset-fetch: {e}", err=True)
            sys.exit(exit_codes.BAD_INPUT)
    exit_with(probe_run)


@probe.command("storage-loss-fetch", short_help="librdkafka's segfault when tansu's storage dies.")
@cluster_argument
@rounds_argument(default=5)
@fetch_debug_log
def storage_loss_fetch(inventory: str, rounds: int, debug_log: str | None) -> NoReturn:
    """librdkafka consumers fetch from the tansu cluster NAME while its PostgreSQL is
    SIGKILLed, up to ROUNDS times (default 5). Exit 1 at the first round whose consumer
    process died of SIGSEGV; 0 if none did.

    (harness/probes/storage_loss_fetch.py tells more.)"""
    from harness.probes import storage_loss_fetch as probe_module  # loads the client: only when run

    on_cluster(inventory, refusing(lambda cluster: probe_module.run(cluster, rounds, debug_log),
                                   probe_module.NotTansu, "storage-loss-fetch"))


@probe.command("deleted-topic-fetch", short_help="The same segfault when a fetched topic is deleted.")
@cluster_argument
@rounds_argument(default=1)
@fetch_debug_log
def deleted_topic_fetch(inventory: str, rounds: int, debug_log: str | None) -> NoReturn:
    """librdkafka consumers fetch a fresh topic of the local cluster NAME (tansu or Kafka)
    and the probe deletes it, up to ROUNDS times (default 1). Exit 1 at the first round
    whose consumer process died of SIGSEGV (tansu 0.6.0); 0 if none did (Kafka).

    (harness/probes/deleted_topic_fetch.py tells more.)"""
    from harness.probes import deleted_topic_fetch as probe_module  # loads the client: only when run

    on_cluster(inventory, lambda cluster: probe_module.run(cluster, rounds, debug_log))


@probe.command("isr-power-loss", short_help="Acknowledged records lost when both ISR members lose power.")
@cluster_argument
@rounds_argument(default=1)
@click.option("--fsync-each", is_flag=True,
              help="The topic fsyncs each record (flush.messages=1): the control, which must lose nothing.")
@click.option("--send-after", type=click.IntRange(0), default=0, show_default=True, metavar="N",
              help="Then N more records from the same producer: does it notice the loss (KIP-360)?")
def isr_power_loss(inventory: str, rounds: int, fsync_each: bool, send_after: int) -> NoReturn:
    """On the local 3-node Kafka cluster NAME, whose data sits on powerfs (`cluster up
    --set logtrial.powerfs=true`): a partition's third replica is stopped, acks=all
    records are acknowledged by the other two, and both lose power at once. Up to ROUNDS
    rounds (default 1). Exit 1 at the first round whose read after the loss misses
    acknowledged records.

    (harness/probes/isr_power_loss.py tells more.)"""
    from harness.probes import isr_power_loss as probe_module  # loads the client: only when run

    on_cluster(inventory, refusing(lambda cluster: probe_module.run(cluster, rounds, fsync_each, send_after),
                                   NotOnPowerfs, "isr-power-loss"))


@probe.command("format-power-loss", short_help="A node formatted before a power loss never starts.")
@cluster_argument
@click.option("--fsync-format", is_flag=True,
              help="The control: fsync what the format wrote before the loss (as the harness's set-up does).")
def format_power_loss(inventory: str, fsync_format: bool) -> NoReturn:
    """On the local Kafka cluster NAME, whose data sits on powerfs (`cluster up --set
    logtrial.powerfs=true`): its last node's log dir is emptied and formatted again, then
    the node loses power and is powered on. Exit 1 if the broker no longer starts.

    (harness/probes/format_power_loss.py tells more.)"""
    from harness.probes import format_power_loss as probe_module  # loads the client: only when run

    on_cluster(inventory, refusing(lambda cluster: probe_module.run(cluster, fsync_format),
                                   NotOnPowerfs, "format-power-loss"))


@probe.command("fetch-answer", short_help="The same segfault against a fake broker (no cluster).")
@click.argument("answer", type=click.Choice(("tansu", "echoed-id", "no-hint")), default="tansu", required=False)
@fetch_debug_log
def fetch_answer(answer: str, debug_log: str | None) -> NoReturn:
    """librdkafka consumers against a broker on 127.0.0.1 that answers every Fetch as
    ANSWER says: `tansu` (default) as tansu 0.6.0 does when its storage fails a topic-id
    lookup (a zero topic id and a CurrentLeader hint), `echoed-id` with the topic's own id,
    `no-hint` without the hint. Exit 1 if the consumers' process died of SIGSEGV.

    (harness/probes/fake_fetch_broker.py tells more.)"""
    from harness.probes import fetch_crash as probe_module  # loads the client: only when run

    exit_with(lambda: probe_module.run_fake(answer, debug_log))
