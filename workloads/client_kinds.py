"""The Kafka clients a workload can run on (`--client`), one entry each: how a
run's clients are made and what test.json records of them. A workload makes its
clients through the kind its settings name (KafkaWorkloadBase.clients), never by
branching on the name; which workloads a kind serves is its `workloads`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from workloads.aiokafka_client import config as aiokafka_config
from workloads.aiokafka_client.factory import open_aiokafka
from workloads.aiokafka_client.install import PINNED as AIOKAFKA
from workloads.base import Client
from workloads.go_clients import build as go_build
from workloads.go_clients.config import sarama_gaps
from workloads.java_client import build as java_build
from workloads.kafka_python import install as kafka_python_install
from workloads.go_clients.factory import open_franz_go, open_sarama
from workloads.kafka_python.factory import KafkaPythonClients
from workloads.kafkajs_client import install as kafkajs_install
from workloads.kafkajs_client.factory import kafkajs_gaps, open_kafkajs
from workloads.settings import WorkloadSettings


class ClientFactory(Protocol):
    """A run's clients of one kind: made per logical process, closed with the workload."""
    def queue_client(self, workload, process: int, final: bool = False) -> Client: ...
    def versions(self) -> dict[str, str]: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class ClientKind:
    name: str
    open: Callable[[str | None], ClientFactory]  # (the cluster's Kafka version) -> the run's factory
    workloads: tuple[str, ...]                   # the workloads it has clients for
    # (ready, detail) for `logtrial doctor`: what it builds or installs once; None: nothing
    install_state: Callable[[], tuple[bool, str]] | None = None
    # what it cannot do of what the settings ask, naming the capability (refused
    # before any work starts: WorkloadSpec.validate); None: it does all of it
    gaps: Callable[[WorkloadSettings], str | None] | None = None


class LibrdkafkaClients:
    """confluent-kafka's clients: nothing to start or stop beside them."""

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        from workloads.queue import QueueClient  # loads confluent_kafka: only when needed
        return QueueClient(workload, process, final)

    def versions(self) -> dict[str, str]:
        return {}  # test.json's versions name confluent_kafka and librdkafka already

    def close(self) -> None:
        pass


class JavaClients:
    """kafka-clients of the cluster's version in JVMs (workloads/java_client/)."""

    def __init__(self, kafka_version: str | None):
        from workloads.java_client.pool import JvmPool  # compiles and starts a JVM: only when asked
        self.pool = JvmPool(kafka_version)

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        from workloads.java_client.queue_client import JavaQueueClient
        return JavaQueueClient(workload, process, self.pool, final)

    def versions(self) -> dict[str, str]:
        return self.pool.versions()

    def close(self) -> None:
        self.pool.close()


CLIENT_KINDS: dict[str, ClientKind] = {
    "librdkafka": ClientKind("librdkafka", lambda version: LibrdkafkaClients(), ("queue", "list-append")),
    "java": ClientKind("java", JavaClients, ("queue",), java_build.install_state),
    "franz-go": ClientKind("franz-go", open_franz_go, ("queue",), go_build.install_state),
    "sarama": ClientKind("sarama", open_sarama, ("queue",), go_build.install_state, sarama_gaps),
    "kafka-python": ClientKind("kafka-python", KafkaPythonClients, ("queue",), kafka_python_install.install_state),
    "aiokafka": ClientKind("aiokafka", open_aiokafka, ("queue",), AIOKAFKA.install_state, aiokafka_config.gaps),
    "kafkajs": ClientKind("kafkajs", open_kafkajs, ("queue",), kafkajs_install.install_state, kafkajs_gaps),
}
CLIENT_NAMES: tuple[str, ...] = tuple(CLIENT_KINDS)


def open_clients(settings) -> ClientFactory:
    """The run's clients of the kind `settings.client` names, on the cluster's version."""
    return client_kind(settings.client).open(settings.kafka_clients_version)


def client_kind(name: str) -> ClientKind:
    try:
        return CLIENT_KINDS[name]
    except KeyError:
        raise ValueError(f"--client must be one of {', '.join(CLIENT_NAMES)}, not {name!r}") from None
