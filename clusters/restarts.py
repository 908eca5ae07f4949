"""Starting brokers again during a heal, until they serve or a bound is reached: the
ones that did not start are retried alone, with backoff; a voter refused because the
controller quorum still names it leader of an older epoch (clusters/kafka/quorum.py)
is retried once the other voters have moved on to a later epoch. Never gives up
silently: at the bound, NodesNotRevived says per node what is left and why."""
from __future__ import annotations

import time
from typing import Protocol

from clusters.db import DatabaseError
from clusters.kafka.quorum import newest_epoch, quorum_state, stale_leader_epoch
from clusters.nodes.ssh import SSHError, SSHPool

BACKOFF_FIRST_S, BACKOFF_MAX_S = 2.0, 30.0
QUORUM_POLL_S = 2.0


# the refusal's line can sit above a long stack trace in the broker's log
STALE_LEADER_TAIL_LINES = 400


class Restartable(Protocol):
    def start_each(self, nodes: list[str]) -> dict[str, Exception]: ...
    def data_dir(self, node: str) -> str: ...
    def log_tail(self, node: str, lines: int = 40) -> str: ...


class NodesNotRevived(DatabaseError):
    """Brokers still not started at the heal's bound: `left` is {node: why}; `actions`
    what was done meanwhile."""

    def __init__(self, left: dict[str, str], actions: list[str]) -> None:
        self.left, self.actions = left, actions
        super().__init__(",".join(sorted(left)), "; ".join(f"{n}: {why}" for n, why in sorted(left.items())))


def daemon_name(db: object, node: str) -> str:
    """What runs on `node`, in words: "broker" unless the database says otherwise
    (tansu's storage node runs PostgreSQL)."""
    name = getattr(db, "daemon_name", None)
    return name(node) if name is not None else "broker"


def start_within(db: Restartable, ssh: SSHPool, nodes: list[str], deadline: float,
                 note: str = "") -> list[str]:
    """Starts `nodes` together, then again those that did not start, until every one
    serves; returns what it did ("n1: restarted broker (attempt 2)", with `note`
    after the daemon's name). Raises NodesNotRevived once time.monotonic() passes
    `deadline` with nodes left."""
    actions: list[str] = []
    pending, attempt, backoff = list(nodes), 0, BACKOFF_FIRST_S
    while pending:
        attempt += 1
        failed = db.start_each(pending)
        suffix = f" (attempt {attempt})" if attempt > 1 else ""
        actions += [f"{node}: restarted {daemon_name(db, node)}{note}{suffix}" for node in pending
                    if node not in failed]
        pending = list(failed)
        stale = {node: _stale_epoch(db, node, e) for node, e in failed.items()}
        stale = {node: epoch for node, epoch in stale.items() if epoch is not None}
        actions += [f"{node}: start refused: the controller quorum still names it leader of epoch {epoch} "
                    "(its log dir was wiped); waiting for the other voters to move on"
                    for node, epoch in stale.items()]
        if pending and time.monotonic() >= deadline:
            raise NodesNotRevived({node: _why(failed[node], attempt, stale.get(node)) for node in pending},
                                  actions)
        if stale:
            others = [n for n in ssh.inventory.node_names if n not in stale]
            _wait_for_epoch_after(db, ssh, others, max(stale.values()), deadline)
        elif pending:
            time.sleep(max(0.0, min(backoff, deadline - time.monotonic())))
            backoff = min(2 * backoff, BACKOFF_MAX_S)
    return actions


def _wait_for_epoch_after(db: Restartable, ssh: SSHPool, voters: list[str], epoch: int,
                          deadline: float) -> None:
    """Until a voter of `voters` persisted a leader epoch after `epoch`, or the deadline."""
    while time.monotonic() < deadline:
        if newest_epoch([quorum_state(ssh[n], db.data_dir(n)) for n in voters]) > epoch:
            return
        time.sleep(QUORUM_POLL_S)


def _stale_epoch(db: Restartable, node: str, error: Exception) -> int | None:
    """The epoch the quorum still names `node` leader of, if that is why it did not start."""
    found = stale_leader_epoch(str(error))
    if found is None and isinstance(error, DatabaseError):
        try:
            found = stale_leader_epoch(db.log_tail(node, STALE_LEADER_TAIL_LINES))
        except SSHError:
            return None
    return found


def _why(error: Exception, attempts: int, stale_epoch: int | None) -> str:
    tried = f"broker did not start in {attempts} attempt{'s' if attempts > 1 else ''}"
    if stale_epoch is not None:
        return (f"{tried}: the controller quorum still names it leader of epoch {stale_epoch} (its log dir "
                "was wiped) and the other voters have not moved on to a later epoch")
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"{tried}: {first}"
