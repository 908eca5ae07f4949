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
from workloads.bridge.kind import Bridge
from workloads.go_clients import build as go_build
from workloads.go_clients import factory as go_clients
from workloads.go_clients.config import franz_go_gaps, sarama_gaps
from workloads.java_client import build as java_build
from workloads.java_client import factory as java_client
from workloads.kafka_python import install as kafka_python_install
from workloads.kafka_python.factory import KafkaPythonClients
from workloads.kafkajs_client import factory as kafkajs_client
from workloads.kafkajs_client import install as kafkajs_install
from workloads.settings import DEFAULT_CLIENT, WorkloadSettings


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
    # how the findings' probes drive it (harness/probes/): in child processes through
    # the bridge's protocol, or in this process through its module's TimedProducer
    # ("module" path: workloads/<client>/timed.py); neither: librdkafka, the default
    bridge: Bridge | None = None
    timed: str | None = None


def bridged(name: str, bridge: Bridge, install_state: Callable[[], tuple[bool, str]],
            gaps: Callable[[WorkloadSettings], str | None] | None = None) -> ClientKind:
    """The entry of a client in child processes: the queue workload's, through its bridge."""
    return ClientKind(name, bridge.open, ("queue",), install_state, gaps, bridge=bridge)


class LibrdkafkaClients:
    """confluent-kafka's clients: nothing to start or stop beside them."""

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        from workloads.queue import QueueClient  # loads confluent_kafka: only when needed
        return QueueClient(workload, process, final)

    def versions(self) -> dict[str, str]:
        return {}  # test.json's versions name confluent_kafka and librdkafka already

    def close(self) -> None:
        pass


CLIENT_KINDS: dict[str, ClientKind] = {
    DEFAULT_CLIENT: ClientKind(DEFAULT_CLIENT, lambda version: LibrdkafkaClients(), ("queue", "list-append")),
    "java": bridged("java", java_client.BRIDGE, java_build.install_state),
    "franz-go": bridged("franz-go", go_clients.FRANZ_GO, go_build.install_state, franz_go_gaps),
    "sarama": bridged("sarama", go_clients.SARAMA, go_build.install_state, sarama_gaps),
    "kafka-python": ClientKind("kafka-python", KafkaPythonClients, ("queue",), kafka_python_install.install_state,
                               timed="workloads.kafka_python.timed"),
    "aiokafka": ClientKind("aiokafka", open_aiokafka, ("queue",), AIOKAFKA.install_state, aiokafka_config.gaps,
                           timed="workloads.aiokafka_client.timed"),
    "kafkajs": bridged("kafkajs", kafkajs_client.BRIDGE, kafkajs_install.install_state, kafkajs_client.kafkajs_gaps),
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
