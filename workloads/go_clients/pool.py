"""The run's Go-client processes of one client: one per network namespace (workloads/bridge/pool.py)."""
from __future__ import annotations

from workloads.bridge.pool import ProcessPool
from workloads.bridge.process import BridgeProcess
from workloads.go_clients.build import build


class GoPool(ProcessPool):
    def __init__(self, client: str):
        binary = str(build())  # builds on first use
        super().__init__(lambda name: BridgeProcess([binary, "-client", client], name), f"{client}-client")

    def versions(self) -> dict[str, str]:
        """The client's module (franz_go or sarama) and the Go release the program was built with."""
        return dict(self.first().ready)
