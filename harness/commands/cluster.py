"""`logtrial cluster up|down|status|heal`: a local cluster (network namespaces on this
machine) by --name, or real machines by --inventory."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from common import exit_codes
from clusters.cluster import HEAL_BOUND, Cluster, adopt_recorded_release
from clusters.nodes.lock import heal_lock
from clusters.db import DatabaseError, Versions
from clusters.nodes.inventory import InventoryError, load_inventory, write_inventory
from clusters.kafka.config import check_dynamic_quorum, parse_settings, release_settings
from clusters.kafka.versions import KafkaVersionError, resolve
from clusters.nodes.local import DEFAULT_NAME, LocalCluster, LocalClusterError, check_name, existing_clusters
from clusters.nodes.ssh import SSHError, SSHPool
from clusters.system_kind import InstallError, SystemKind
from clusters.systems import DEFAULT_SYSTEM, SYSTEMS, for_system, kind_of, open_database, system_kind, system_of
from harness.cluster_targets import Target, TargetError, named_target, run_target
from harness.kafka_options import kafka_release_options
from harness.test_options import check_txn_version
from nemesis.control_link import ControlLinkError
from nemesis.heal import ClusterNotHealed, heal_control_node, heal_inventory

FAILURES = (LocalClusterError, SSHError, DatabaseError, ClusterNotHealed, ControlLinkError)

def _cluster_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A bad --name is bad input (exit 3), refused before anything is made."""
    try:
        return None if value is None else check_name(value)
    except LocalClusterError as e:
        raise click.BadParameter(str(e)) from None


up_name_option = click.option("--name", default=DEFAULT_NAME, show_default=True, callback=_cluster_name,
                              help="Local cluster name (its netns are lt-<name>-n1...).")
name_option = click.option("--name", default=None, callback=_cluster_name,
                           help="Local cluster name. Default: every local cluster that exists "
                                "(or the one --run used).")
run_option = click.option("--run", "run_dir", type=click.Path(file_okay=False),
                          help="A run directory (e.g. store/latest): act on the cluster it used, "
                               "local or an inventory of real machines.")
inventory_option = click.option("--inventory", "inventory_path", type=click.Path(dir_okay=False),
                                help="Inventory of real machines (docs/inventory.md); "
                                     "instead of a local cluster.")
insecure_option = click.option("--insecure-host-keys", is_flag=True,
                               help="Accept node host keys not listed in the inventory.")


def fail(message: str, code: int = exit_codes.HARNESS_ERROR) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def targets(name: str | None, inventory_path: str | None, run_dir: str | None = None) -> list[Target]:
    """The clusters a command acts on: --run's, --inventory, --name's, or else
    every local cluster that exists (and the output says which)."""
    try:
        if run_dir:
            return [run_target(run_dir)]
        if name:
            return [named_target(name)]
    except TargetError as e:
        fail(str(e), exit_codes.BAD_INPUT)
    if inventory_path:
        return [Target(f"inventory {inventory_path}", inventory_path)]
    found = [c for c in existing_clusters() if c.inventory_path.exists()]
    click.echo(f"local clusters in {LocalCluster(DEFAULT_NAME).root}: "
               f"{', '.join(c.name for c in found) or 'none'}")
    return [Target(f"cluster {c.name}", str(c.inventory_path), c) for c in found]


@click.group()
def cluster() -> None:
    """Bring a Kafka test cluster up or down, show its state, undo faults."""


@cluster.command()
@up_name_option
@inventory_option
@click.option("--db", "system", type=click.Choice(SYSTEMS), default=DEFAULT_SYSTEM, show_default=True,
              help="The system under test on a local cluster (an inventory names its own: `db:`).")
@click.option("--nodes", default=3, show_default=True, type=int,
              help="Local brokers (1-9; tansu: 1-8, plus its PostgreSQL node).")
@click.option("--subnet", help="Private IPv4 subnet for a local cluster "
                               "(default: first free /24 in 10.201.0.0/16).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Broker setting overriding logtrial's defaults; repeatable.")
@kafka_release_options
@click.option("--txn-version", type=click.Choice(["1", "2"]), callback=lambda ctx, param, v: v and int(v),
              help="Finalize transaction.version (Kafka 4.0+, KIP-890) once the cluster is up.")
@insecure_option
def up(name: str, inventory_path: str | None, system: str, nodes: int, subnet: str | None,
       settings: tuple[str, ...], kafka_version: str | None, kafka_mode: str | None,
       dynamic_quorum: bool, txn_version: int | None, insecure_host_keys: bool) -> None:
    """Create a local cluster (or use --inventory) and start its system on every node."""
    try:
        kind = kind_of(load_inventory(inventory_path)) if inventory_path else system_kind(system)
        overrides, label = _up_settings(kind, settings, kafka_version, kafka_mode, dynamic_quorum)
        if txn_version is not None:
            if not kind.kafka_release:
                raise ValueError(f"--txn-version is Kafka's own, not for --db {kind.name}")
            check_txn_version(txn_version, resolve(kafka_version, kafka_mode))
    except ValueError as e:  # KafkaVersionError names the version and mode, InventoryError the file
        fail(str(e), exit_codes.BAD_INPUT)
    try:
        kind.ensure_installed(click.echo)  # tansu: a cargo build on first use
    except InstallError as e:
        fail(str(e))
    except KeyboardInterrupt:
        fail("interrupted", exit_codes.INTERRUPTED)
    started = time.monotonic()
    local = None if inventory_path else LocalCluster(name)
    try:
        if local:
            inventory = local.up(nodes=kind.local_nodes(nodes), subnet=subnet)
            inventory_path = str(local.inventory_path)
            # the system and settings travel with the inventory, so later set-ups use the same
            write_inventory(for_system(inventory, kind, overrides), inventory_path)
        # a user's inventory is not rewritten: the settings land in each node's config
        with Cluster.open(inventory_path, insecure_host_keys=insecure_host_keys,
                          db_settings=overrides) as opened:
            label = label or " ".join(system_of(opened.db))
            if txn_version is not None:
                from clusters.kafka.admin import set_transaction_version
                finalized = set_transaction_version(opened, opened.inventory.nodes[0].name, txn_version)
                label += f", transaction.version {finalized}"
    except (InventoryError, KafkaVersionError) as e:
        fail(str(e), exit_codes.BAD_INPUT)
    except (*FAILURES, KeyboardInterrupt) as e:
        if local:
            local.down()  # nothing half-started is left behind
        fail(f"cluster up failed: {e}" if not isinstance(e, KeyboardInterrupt) else "interrupted",
             exit_codes.INTERRUPTED if isinstance(e, KeyboardInterrupt) else
             exit_codes.HARNESS_ERROR)
    loaded = load_inventory(inventory_path)
    click.echo(f"cluster {loaded.name}: {len(loaded.nodes)} nodes up in "
               f"{time.monotonic() - started:.1f} s, {label}"
               + (", dynamic controller quorum" if dynamic_quorum else ""))
    click.echo(f"  inventory: {inventory_path}")
    click.echo(f"  bootstrap: {','.join(f'{n.host}:9092' for n in loaded.nodes if n.role is None)}")


def _up_settings(kind: SystemKind, settings: tuple[str, ...], kafka_version: str | None, kafka_mode: str | None,
                 dynamic_quorum: bool) -> tuple[dict[str, str], str | None]:
    """The settings `up` writes into the inventory and, for Kafka, the release's label
    (checked before anything is created); ValueError names what is wrong."""
    overrides = parse_settings(settings)
    if not kind.kafka_release:
        if kafka_version or kafka_mode or dynamic_quorum:
            raise ValueError(f"--kafka-version, --kafka-mode and --dynamic-quorum choose a Kafka release; "
                             f"--db {kind.name} runs its one pinned release")
        return overrides, None
    release = resolve(kafka_version, kafka_mode)
    if dynamic_quorum:
        check_dynamic_quorum(release)
    return {**overrides, **release_settings(kafka_version, kafka_mode, dynamic_quorum)}, release.label


@cluster.command()
@name_option
@inventory_option
@run_option
@click.option("--keep-data", is_flag=True, help="Keep node data (logs, Kafka data).")
@insecure_option
def down(name: str | None, inventory_path: str | None, run_dir: str | None, keep_data: bool,
         insecure_host_keys: bool) -> None:
    """Stop everything and remove the local cluster(s) (or stop Kafka on --inventory nodes)."""
    failed = False
    for target in targets(name, inventory_path, run_dir):
        try:
            with heal_lock(target.inventory_path):
                stopped = _down(target, keep_data, insecure_host_keys)
            click.echo(f"{target.label}: {stopped}")
        except (InventoryError, KafkaVersionError) as e:
            fail(str(e), exit_codes.BAD_INPUT)
        except FAILURES as e:
            click.echo(f"error: {target.label}: down failed: {e}", err=True)
            failed = True
    if failed:
        sys.exit(exit_codes.HARNESS_ERROR)


def _down(target: Target, keep_data: bool, insecure_host_keys: bool) -> str:
    """Takes the target down; says what it did."""
    linked = restore_control_links(target)
    if target.local is None:
        with Cluster.open(target.inventory_path, insecure_host_keys, start=False) as c:
            for node in c.nodes:
                c.db.shutdown(node) if keep_data else c.db.wipe(node)
        return f"stopped {system_of(c.db)[0]} on {len(c.nodes)} nodes"
    removed = linked + target.local.down(keep_data=keep_data)
    return "removed " + ", ".join(removed) if removed else "nothing to remove"


def restore_control_links(target: Target) -> list[str]:
    """The control-link cuts a killed run left on this machine for the target's cluster,
    removed: needed before any SSH to its nodes, and by `down` too, since the rules live
    here, not in the cluster's namespaces. Nothing when its inventory is gone."""
    path = Path(target.inventory_path)
    return heal_control_node(load_inventory(path)) if path.exists() else []


@cluster.command()
@name_option
@inventory_option
@run_option
@insecure_option
def status(name: str | None, inventory_path: str | None, run_dir: str | None,
           insecure_host_keys: bool) -> None:
    """Each node's reachability over SSH and its broker's state."""
    healthy = True
    for target in targets(name, inventory_path, run_dir):
        healthy &= _status(target, insecure_host_keys)
    if not healthy:
        sys.exit(exit_codes.HARNESS_ERROR)


def _status(target: Target, insecure_host_keys: bool) -> bool:
    path = target.inventory_path
    try:
        inventory = load_inventory(path)
        roles = bool(kind_of(inventory).roles)  # a role column where nodes are not all brokers
    except (InventoryError, KafkaVersionError) as e:
        fail(str(e), exit_codes.BAD_INPUT)
    ssh = SSHPool(inventory, insecure_host_keys=insecure_host_keys, connect_timeout=5)
    try:
        db = open_database(inventory, ssh)
    except KafkaVersionError as e:
        fail(f"{path}: {e}", exit_codes.BAD_INPUT)
    # for a local cluster, say why a node is unreachable (namespace or sshd gone)
    local = {n.name: n for n in target.local.status()} if target.local else {}
    unreachable = {node.name: _ssh_error(ssh, node.name) for node in inventory.nodes}
    db = adopt_recorded_release(db, nodes=[n for n, error in unreachable.items() if error is None])
    healthy = True
    label = db.release.label if isinstance(db, Versions) else " ".join(system_of(db))
    click.echo(f"cluster {inventory.name} ({path}): {label}")
    click.echo(f"  {'node':6} {'address':16} {'ssh':12} {'role: state' if roles else 'broker'}")
    for node in inventory.nodes:
        try:
            if unreachable[node.name]:
                raise unreachable[node.name]
            reach, state = "reachable", db.state(node.name)
            if state == "running" and not db.serves_metadata(node.name):
                state = "running, not serving " + ("metadata" if node.role is None else "connections")
            if getattr(db, "zookeeper", None) and db.zookeeper.state(node.name) != "running":
                state += f", zookeeper {db.zookeeper.state(node.name)}"
        except SSHError as e:
            reach, state = "UNREACHABLE", str(e).splitlines()[0]
            if node.name in local:
                ns = local[node.name]
                state += (f" (netns {'present' if ns.netns else 'MISSING'}, "
                          f"sshd {'running' if ns.sshd else 'NOT RUNNING'})")
        healthy &= reach == "reachable" and state == "running"
        role = f"{node.role or 'broker'}: " if roles else ""
        click.echo(f"  {node.name:6} {node.host:16} {reach:12} {role}{state}")
    ssh.close()
    return healthy


def _ssh_error(ssh, node: str) -> SSHError | None:
    try:
        ssh[node].exec("true", timeout=10)
        return None
    except SSHError as e:
        return e


@cluster.command()
@name_option
@inventory_option
@run_option
@insecure_option
@click.option("--timeout", "bound", type=click.FloatRange(min=0), default=HEAL_BOUND, show_default=True,
              help="Seconds to keep retrying before reporting, per node, what is left (exit 4).")
def heal(name: str | None, inventory_path: str | None, run_dir: str | None,
         insecure_host_keys: bool, bound: float) -> None:
    """Undo every fault logtrial made: its iptables chains, packet qdiscs and holder,
    paused and dead brokers, clock offsets and strobes, powerfs layers (unmounted, the
    data left as the last power loss made it); brokers that ran with a skewed clock are
    restarted. Retried with backoff until healed or --timeout."""
    failed = False
    for target in targets(name, inventory_path, run_dir):
        try:
            actions = heal_inventory(target.inventory_path, insecure_host_keys, bound)
        except (InventoryError, KafkaVersionError) as e:
            fail(str(e), exit_codes.BAD_INPUT)
        except FAILURES as e:
            for action in getattr(e, "actions", []):
                click.echo(f"  {action}")
            click.echo(f"error: {target.label}: heal failed: {e}", err=True)
            failed = True
            continue
        for action in actions:
            click.echo(f"  {action}")
        click.echo(f"{target.label}: healed ({len(actions)} actions)")
    if failed:
        sys.exit(exit_codes.HARNESS_ERROR)
