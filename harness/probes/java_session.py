"""A session of Kafka's Java client in the JVM bridge (workloads/java_client/), or of
another client in a child process (the Go program: pass its `configs`), opened the way
the probes need it: a transactional producer, its consumer and its offset lookup, all
from one client id."""
from __future__ import annotations

from types import ModuleType

from workloads.bridge.pool import ProcessPool
from workloads.bridge.process import BridgeProcess
from workloads.java_client import config as java_config
from workloads.settings import WorkloadSettings


def open_session(pool: ProcessPool, bootstrap: str, settings: WorkloadSettings, client_id: str,
                 txn_id: str, group_id: str, op_timeout_s: float,
                 config: ModuleType = java_config) -> tuple[BridgeProcess, int]:
    """The child process and the session id to call; the consumer is `client_id`-c, the
    lookup `client_id`-o (client ids are how the brokers' request logs tell them apart).
    `config` writes the client's configurations (producer_config, consumer_config,
    lookup_config): the Java client's unless told."""
    jvm, session = pool.process(), pool.new_session()
    jvm.call(session, "open", 30,
             producer=config.producer_config(bootstrap, settings, client_id, txn_id),
             consumer=config.consumer_config(bootstrap, settings, f"{client_id}-c", group_id),
             lookup=config.lookup_config(bootstrap, f"{client_id}-o", group_id),
             auto_offset_reset="earliest", op_timeout_ms=int(op_timeout_s * 1000))
    return jvm, session
