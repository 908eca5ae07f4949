"""pause: SIGSTOP the broker on the targets (through its pid file), SIGCONT later."""
from __future__ import annotations

from nemesis.fault import ProcessFault


class PauseFault(ProcessFault):
    name = "pause"
    stop_f = "resume"

    def start(self, cluster, params: dict) -> dict:
        return self.start_on_nodes(cluster, params, cluster.db.pause)

    def stop(self, cluster) -> dict:
        return self.stop_on_struck(cluster.db.resume)
