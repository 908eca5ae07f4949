"""The cluster a run uses, from opening to closing: an inventory's, a local
one brought up (or reused) for the run, or bare bootstrap servers; its
release reconciled with what was asked; client pinning; and at the end its
node logs collected and Kafka stopped (unless --leave-db-running)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

from clusters.db import Versions
from clusters.nodes.inventory import load_inventory, write_inventory
from clusters.kafka.config import MODE_KEY, QUORUM_KEY, VERSION_KEY
from clusters.kafka.versions import resolve
from clusters.nodes.local import DEFAULT_NAME, LocalCluster
from clusters.nodes.pinning import ClientPins, local_cluster_of
from clusters.reconfigure import restart_if_reconfigured
from clusters.systems import DEFAULT_SYSTEM, for_system, kind_of, system_kind, system_of
from harness.test_options import ClusterSpec
from harness.test_record import TestRecord

log = logging.getLogger(__name__)

# the cluster --local brings up (and reuses when left running)
LOCAL_CLUSTER = DEFAULT_NAME


class ClusterSession:
    def __init__(self, spec: ClusterSpec, record: TestRecord, say: Callable[[str], None],
                 fault_settings: dict[str, str] | None = None):
        self.spec = spec
        # what the run's faults need the database to run with (nemesis.registry.db_settings)
        self.fault_settings = dict(fault_settings or {})
        self.record = record
        self._say = say
        self.cluster = None          # clusters.cluster.Cluster, when reached over SSH
        self.local_cluster = None    # clusters.nodes.local.LocalCluster, with --local

    def open(self) -> str:
        """Opens (or brings up) the cluster, starting Kafka where needed; its bootstrap servers."""
        spec = self.spec
        if spec.bootstrap_servers:
            return spec.bootstrap_servers
        from clusters.cluster import Cluster  # loads confluent_kafka: only when needed
        self._ensure_installed()
        inventory_path = self._bring_up_local(spec.local) if spec.local else spec.nodes_file
        if not spec.local:
            self._record_where({"inventory": str(Path(inventory_path).resolve())})
        self.cluster = Cluster.open(inventory_path, insecure_host_keys=spec.insecure_host_keys,
                                    db_settings={**self.fault_settings, **spec.db_settings,
                                                 **spec.release_settings})
        self._record_system()
        for line in restart_if_reconfigured(self.cluster):
            self._say(line)
        if spec.txn_version is not None:
            self._set_txn_version(spec.txn_version)
        self.record["nodes"] = [n.name for n in self.cluster.inventory.nodes]
        return self.cluster.db.bootstrap_servers()

    def _ensure_installed(self) -> None:
        """What the system needs built, before any node is touched: tansu's cargo build
        on first use, with a line saying how long it takes and where its log is."""
        if self.spec.nodes_file:
            kind = kind_of(load_inventory(self.spec.nodes_file))
        else:
            kind = system_kind(self.spec.db or DEFAULT_SYSTEM)
        kind.ensure_installed(self._say)

    def _record_system(self) -> None:
        """test.json's "db" (every system) and "kafka" (Kafka's release), and versions."""
        db, inventory = self.cluster.db, self.cluster.inventory
        if self.spec.db and inventory.db != self.spec.db:
            raise ValueError(f"--db {self.spec.db}, but inventory {inventory.path} runs {inventory.db} (its db:)")
        system, version = system_of(db)
        self.record["db"] = {"system": system, "version": version}
        self.record["versions"][system] = version
        if isinstance(db, Versions):
            self.record["kafka"] = {"version": db.release.version, "mode": db.release.mode}
            log.info("cluster %s open; %s running on every node", inventory.name, db.release.label)
        else:
            self.record["versions"]["kafka"] = "none"  # the Kafka API of another system
            log.info("cluster %s open; %s %s running on every node", inventory.name, system, version)

    def _set_txn_version(self, level: int) -> None:
        """Finalizes transaction.version before any client connects (producers read the
        finalized features when they connect) and records what the cluster then reports."""
        from clusters.kafka.admin import set_transaction_version  # loads confluent_kafka: only when needed
        node = self.cluster.inventory.nodes[0].name
        self.record["transaction_version"] = set_transaction_version(self.cluster, node, level)
        log.info("transaction.version finalized at %s", self.record["transaction_version"])

    def _record_where(self, where: dict) -> None:
        """Written before the cluster is touched, so `logtrial cluster heal --run`
        finds it even if this process dies in the next instant."""
        self.record.write(cluster=where)

    def _bring_up_local(self, nodes: int) -> str:
        """Brings up the local cluster LOCAL_CLUSTER, or reuses it if one of the
        right size was left running (--leave-db-running); its inventory."""
        local = LocalCluster(LOCAL_CLUSTER)
        self._record_where({"local": local.name, "state_root": str(local.root)})
        wanted, kind = self.spec.release_settings, system_kind(self.spec.db or DEFAULT_SYSTEM)
        if local.exists():
            left = load_inventory(local.inventory_path)
            if len(left.nodes) != kind.local_nodes(nodes) or left.db != kind.name \
                    or _release_of(left.settings) != _release_of(wanted):
                local.down()
        if not local.exists():
            beside = f" and its {kind.extra_node.runs} node" if kind.extra_node else ""
            self._say(f"bringing up local cluster {LOCAL_CLUSTER} ({nodes} {kind.name} nodes{beside})")
            inventory = local.up(kind.local_nodes(nodes))
            # the system and release travel with the inventory: a reused cluster says what it runs
            write_inventory(for_system(inventory, kind, wanted), local.inventory_path)
        self.local_cluster = local
        return str(local.inventory_path)

    def client_pins(self) -> ClientPins | None:
        """With --pin-clients, each process's clients reach one node (docs/pinned-clients.md)."""
        if not self.spec.pin_clients:
            return None
        brokers = self.cluster.inventory.nodes_with_role(None) if self.cluster else None
        return ClientPins(self.local_cluster or local_cluster_of(self.spec.nodes_file), brokers)

    def collect_logs(self, dest: Path) -> None:
        """Every node's Kafka logs into dest/<node>/, in parallel, best effort."""
        if self.cluster is None:
            return
        for node, error in self.cluster.collect_logs(dest).items():
            log.warning("collecting logs from %s failed: %s", node, error)

    def close(self) -> None:
        """Stops Kafka (an inventory's) or takes the local cluster down, unless --leave-db-running."""
        if self.cluster is not None:
            if not self.spec.leave_db_running and self.spec.nodes_file:
                for node in self.cluster.inventory.nodes:
                    self.cluster.db.stop(node.name)
            self.cluster.close()
        if self.local_cluster is not None and not self.spec.leave_db_running:
            self.local_cluster.down()


def _release_of(settings: dict) -> tuple[str, str, str]:
    release = resolve(settings.get(VERSION_KEY), settings.get(MODE_KEY))
    return release.version, release.mode, settings.get(QUORUM_KEY, "static")
