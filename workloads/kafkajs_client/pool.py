"""The run's kafkajs processes: one per network namespace (workloads/bridge/pool.py)."""
from __future__ import annotations

from workloads.bridge.pool import ProcessPool
from workloads.bridge.process import BridgeProcess
from workloads.kafkajs_client.install import command


class KafkajsPool(ProcessPool):
    def __init__(self) -> None:
        argv = command()  # installs the modules on first use
        super().__init__(lambda name: BridgeProcess(argv, name), "kafkajs-client")

    def versions(self) -> dict[str, str]:
        """The kafkajs package and the Node release the program runs on."""
        ready = self.first().ready
        return {"kafkajs": ready["kafkajs"], "node": ready["node"]}
