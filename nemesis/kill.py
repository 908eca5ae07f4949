"""kill: SIGKILL the broker on the targets (through its pid file), start it again later.
It leaves no trace of its own: a dead broker is restarted by the database's part of
the heal (Cluster.revive)."""
from __future__ import annotations

from clusters.db import Process, require
from nemesis.fault import ProcessFault
from nemesis.kind import START, STOP, FaultKind

# how long the restart waits for the broker to serve again before the schedule goes on
# (other faults may keep it from rejoining: it is reported, and the final heal checks it)
RESTART_WAIT_S = 30.0


class KillFault(ProcessFault):
    name = "kill"
    stop_f = "start"

    def start(self, cluster, params: dict) -> dict:
        return self.start_on_nodes(cluster, params, require(cluster.db, Process, "the kill fault").kill)

    def stop(self, cluster) -> dict:
        return self.stop_on_struck(lambda node: self._restart(cluster, node))

    @staticmethod
    def _restart(cluster, node: str) -> None:
        if not cluster.db.is_running(node):  # another fault may have restarted it already
            cluster.db.launch(node)
        cluster.db.wait_ready(node, timeout=RESTART_WAIT_S)


KIND = FaultKind(
    name="kill", summary="SIGKILL the broker on the targets, start it again later",
    make=lambda context: KillFault(context.resolve_role),
    history_f={"kill": START, "start": STOP}, params=("target", "nodes"), needs=Process,
    # SIGKILL ends the process, not the machine: the page cache keeps what the broker (or
    # PostgreSQL, under tansu) wrote, and acks=all with min ISR 2 has every acknowledged
    # record on a second replica
    loses_data={"kill": None})
