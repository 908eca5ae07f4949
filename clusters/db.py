"""The Database protocol: the lifecycle the harness drives on each node, whatever the
system under test, and the optional capabilities some systems add, declared the way
Jepsen's jepsen/db.clj does: one small protocol each (Process, Pause, LogFiles, ...).
A caller that needs a capability checks for it (`require`, or isinstance against the
runtime-checkable protocol) and refuses with a clear error when the database lacks it.
Nodes are named as in the inventory ("n1"); every call reaches the node over SSH."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:  # annotations only: the protocols must not depend on a Kafka module
    from clusters.nodes.inventory import Inventory
    from clusters.kafka.versions import KafkaRelease


class DatabaseError(RuntimeError):
    """A node's database failed to install, configure, start or stop; names the node."""

    def __init__(self, node: str, message: str) -> None:
        self.node = node
        super().__init__(f"node {node}: {message}")


class MissingCapability(TypeError):
    """A caller needs a capability (a protocol below) the database does not have."""


@runtime_checkable
class Database(Protocol):
    """What every database offers: set up, start and tear down on each node."""
    inventory: Inventory

    def install(self, node: str) -> None: ...
    def setup(self, node: str) -> None: ...  # config + storage format
    def wipe(self, node: str) -> None: ...  # kill, then remove its data and logs
    def ensure_formatted(self, node: str) -> bool: ...  # True if it had to format its storage
    def start_all(self, nodes: list[str] | None = None) -> None: ...  # together: a quorum needs a majority
    def start_each(self, nodes: list[str] | None = None) -> dict[str, Exception]: ...  # start_all; {node: why not}
    def serves_metadata(self, node: str) -> bool: ...  # the node serves clients
    def bootstrap_servers(self) -> str: ...  # "10.201.0.11:9092,..."
    def node_id(self, node: str) -> int: ...


@runtime_checkable
class Process(Protocol):
    """One daemon per node, known by its pid file (Jepsen's Process and Kill)."""
    def pid_file(self, node: str) -> str: ...
    def start(self, node: str) -> None: ...  # returns once the node serves clients
    def launch(self, node: str) -> int: ...  # starts it without waiting; its pid
    def wait_ready(self, node: str, timeout: float | None = None) -> None: ...
    def stop(self, node: str) -> None: ...  # SIGTERM, then wait
    def shutdown(self, node: str) -> None: ...  # stop, and whatever runs beside it
    def kill(self, node: str) -> None: ...  # SIGKILL
    def is_running(self, node: str) -> bool: ...
    def state(self, node: str) -> str: ...  # "running", "paused" or "stopped"


@runtime_checkable
class Pause(Protocol):
    def pause(self, node: str) -> None: ...  # SIGSTOP
    def resume(self, node: str) -> None: ...  # SIGCONT


@runtime_checkable
class LogFiles(Protocol):
    def collect_logs(self, node: str, dest_dir: Path) -> None: ...
    def log_tail(self, node: str, lines: int = 40) -> str: ...


@runtime_checkable
class Clock(Protocol):
    """Each node's process runs under libfaketime, reading its offset from one file."""
    faketime: bool  # False: the process runs on the real clock (logtrial.faketime=false)

    def clock_offset_file(self, node: str) -> str: ...
    def reset_clock(self, node: str) -> None: ...  # offset +0


@runtime_checkable
class Versions(Protocol):
    """Several releases, each node recording the one it was set up for."""
    release: KafkaRelease
    release_chosen: bool  # the inventory or the caller named it (else: the default)

    def recorded_release(self, node: str) -> KafkaRelease | None: ...
    def for_release(self, release: KafkaRelease) -> Any: ...  # the same database on another release


@runtime_checkable
class Config(Protocol):
    """A config file per node that can be compared with what setup would write now."""
    def config_file(self, node: str) -> str: ...
    def properties(self, node: str) -> dict[str, str]: ...


@runtime_checkable
class Ensemble(Protocol):
    """A coordination service beside the database on every node (Kafka's ZooKeeper
    mode): a Process and Pause of its own, None when the database runs without one."""
    zookeeper: Any


@runtime_checkable
class Membership(Protocol):
    """Which nodes hold what can change: Kafka's admin tools on a node, its log dir,
    its controller quorum (nemesis/membership.py, clusters/kafka/admin.py)."""
    dynamic_quorum: bool

    def kafka_dir(self, node: str) -> str: ...
    def data_dir(self, node: str) -> str: ...
    def config_file(self, node: str) -> str: ...
    def controller_servers(self) -> str: ...
    def tool_command(self, node: str, main_and_args: str, heap: str = "128m") -> str: ...
    def disk_directory_id(self, node: str) -> str: ...


@runtime_checkable
class ProducerState(Protocol):
    """Brokers whose producer-id state can be made to expire within seconds, given
    these static settings at start-up (nemesis/producer_state.py)."""
    producer_state_settings: Mapping[str, str]


@runtime_checkable
class PowerLoss(Protocol):
    """A node's data can sit on powerfs (clusters/nodes/powerfs.py), which forgets on a
    cut whatever was never made durable: the power fault (nemesis/power.py)."""
    powerfs: bool  # the processes run on the layer (logtrial.powerfs=true)

    def power_dirs(self, node: str) -> list[str]: ...  # the directories put on the layer
    def power_cut(self, node: str, mode: str) -> dict: ...  # the layer forgets; what it dropped
    def power_off(self, node: str) -> None: ...  # SIGKILL every process, the layer taken off
    def power_on(self, node: str) -> None: ...  # back on the layer, started; no wait
    # why an acknowledged write may not be on disk yet, so that a loss of every replica at
    # once may take it; None: the system fsyncs every write before it acknowledges it
    def unsynced_acks(self) -> str | None: ...


C = TypeVar("C")


def require(db: object, capability: type[C], needed_by: str) -> C:
    """`db` as the capability, or MissingCapability naming who needs it."""
    if not isinstance(db, capability):
        raise MissingCapability(f"{needed_by} needs a database with the {capability.__name__} "
                                f"capability; {type(db).__name__} does not have it")
    return db
