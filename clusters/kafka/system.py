"""Apache Kafka as a system under test (clusters/systems.py lists it): the default
`db:` of an inventory, every broker a node of the same kind, all of Kafka's client
API, and releases chosen with --kafka-version and --kafka-mode."""
from __future__ import annotations

from clusters.db import Database
from clusters.nodes.inventory import Inventory
from clusters.nodes.ssh import SSHPool
from clusters.system_kind import Say, SystemKind


def _open(inventory: Inventory, ssh: SSHPool, settings: dict | None) -> Database:
    from clusters.kafka.database import KafkaDB  # loads confluent_kafka: only when a cluster is opened
    return KafkaDB(inventory, ssh, settings)


def _nothing_beforehand(say: Say) -> None:
    """Nothing: each release's jars are fetched by the Database's install on first use
    (clusters/kafka/jars.py; in about a minute), the default one by `make kafka`."""


KAFKA = SystemKind(
    name="kafka",
    open=_open,
    ensure_installed=_nothing_beforehand,
    install_state=None,  # doctor checks the default release's jars itself
    broker_tools={"java": ("Kafka brokers (Java 17 or later)", True)},
    kafka_release=True,
)
