"""The run's franz-go processes: one per network namespace (workloads/bridge/pool.py)."""
from __future__ import annotations

from workloads.bridge.pool import ProcessPool
from workloads.bridge.process import BridgeProcess
from workloads.franz_go_client.build import build


class FranzGoPool(ProcessPool):
    def __init__(self) -> None:
        binary = str(build())  # builds on first use
        super().__init__(lambda name: BridgeProcess([binary], name), "franz-go-client")

    def versions(self) -> dict[str, str]:
        """The franz-go module and the Go release the program was built with."""
        ready = self.first().ready
        return {"franz_go": ready["franz_go"], "go": ready["go"]}
