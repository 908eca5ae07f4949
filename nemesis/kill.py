"""kill: SIGKILL the broker on the targets (through its pid file), start it again later."""
from __future__ import annotations

from nemesis.fault import ProcessFault


class KillFault(ProcessFault):
    name = "kill"
    stop_f = "start"

    def start(self, cluster, params: dict) -> dict:
        return self.start_on_nodes(cluster, params, cluster.db.kill)

    def stop(self, cluster) -> dict:
        # start() returns once the broker serves again; a broker that cannot (say, it is
        # still partitioned away) is reported, and restarted by the final heal
        return self.stop_on_struck(cluster.db.start)
