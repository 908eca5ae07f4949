"""pause: SIGSTOP the broker on the targets (through its pid file), SIGCONT later."""
from __future__ import annotations

from clusters.db import DatabaseError, Pause, Process, require
from nemesis.fault import NodeTraces, ProcessFault
from nemesis.kind import START, STOP, FaultKind


class PauseFault(ProcessFault):
    name = "pause"
    stop_f = "resume"

    def start(self, cluster, params: dict) -> dict:
        require(cluster.db, Pause, "the pause fault")
        return self.start_on_nodes(cluster, params, lambda node: self._pause(cluster, node))

    def stop(self, cluster) -> dict:
        return self.stop_on_struck(require(cluster.db, Pause, "the pause fault").resume)

    @staticmethod
    def _pause(cluster, node: str) -> None:
        # a just-killed broker may linger as a zombie, which accepts SIGSTOP silently
        if not require(cluster.db, Process, "the pause fault").is_running(node):
            raise DatabaseError(node, "cannot pause: broker is not running")
        cluster.db.pause(node)


def undo_traces(cluster, session) -> list[str]:
    """SIGCONT for a broker left paused."""
    node = session.node.name
    if not isinstance(cluster.db, Pause) or cluster.db.state(node) != "paused":
        return []
    cluster.db.resume(node)
    return [f"{node}: resumed paused broker"]


# a broker still paused is the database's own finding ("broker is paused", Cluster.database_problems)
TRACES = NodeTraces(undo=undo_traces, left=lambda cluster, session: [])


KIND = FaultKind(
    name="pause", summary="SIGSTOP the broker on the targets, SIGCONT later",
    make=lambda context: PauseFault(context.resolve_role),
    history_f={"pause": START, "resume": STOP}, params=("target", "nodes"),
    # a stopped process keeps its log, and with acks=all and min ISR 2 an acknowledged
    # record is on a second replica: pausing any set of brokers only delays
    loses_data={"pause": None},
    needs=Pause, node_traces=TRACES)
