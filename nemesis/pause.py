"""pause: SIGSTOP the broker on the targets (through its pid file), SIGCONT later."""
from __future__ import annotations

from clusters.db import DatabaseError
from nemesis.fault import ProcessFault


class PauseFault(ProcessFault):
    name = "pause"
    stop_f = "resume"

    def start(self, cluster, params: dict) -> dict:
        return self.start_on_nodes(cluster, params, lambda node: self._pause(cluster, node))

    def stop(self, cluster) -> dict:
        return self.stop_on_struck(cluster.db.resume)

    @staticmethod
    def _pause(cluster, node: str) -> None:
        # a just-killed broker may linger as a zombie, which accepts SIGSTOP silently
        if not cluster.db.is_running(node):
            raise DatabaseError(node, "cannot pause: broker is not running")
        cluster.db.pause(node)
