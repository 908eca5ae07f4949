"""The KRaft controller quorum as each voter persists it
(`<log.dirs>/__cluster_metadata-0/quorum-state`: leaderId, leaderEpoch), and the one
start it refuses: a voter of a static quorum whose log dir was wiped comes back at
epoch 0 while the other voters still name it leader of an older epoch, and exits with
`IllegalStateException: Received request or response with leader OptionalInt[2] and
epoch 6 which is inconsistent with current leader OptionalInt.empty and epoch 0`
(docs/findings.md, seed 50). It starts once the others have elected a leader of a later
epoch, which they do once their fetches from it have timed out."""
from __future__ import annotations

import json
import logging
import re
import shlex

from clusters.nodes.ssh import NodeSession

log = logging.getLogger(__name__)

QUORUM_STATE = "__cluster_metadata-0/quorum-state"
_STALE_LEADER = re.compile(r"leader OptionalInt\[(\d+)\] and epoch (\d+) which is inconsistent with "
                           r"current leader OptionalInt\.empty and epoch 0")


def quorum_state(session: NodeSession, data_dir: str) -> dict | None:
    """The voter's persisted quorum state, or None if it has none or cannot be read."""
    path = shlex.quote(f"{data_dir}/{QUORUM_STATE}")
    try:
        result = session.exec(f"cat {path}", timeout=10, check=False)
        return json.loads(result.stdout) if result.exit_code == 0 else None
    except Exception as e:  # noqa: BLE001 - one unreachable node must not hide the others
        log.info("node %s: cannot read its KRaft quorum state: %s", session.node.name, e)
        return None


def stale_leader_epoch(start_failure: str) -> int | None:
    """The epoch the quorum still names the node leader of, if its start failed so."""
    found = _STALE_LEADER.search(start_failure)
    return int(found.group(2)) if found else None


def newest_epoch(states: list[dict | None]) -> int:
    """The newest leader epoch any voter persisted (-1 if none says)."""
    return max((s.get("leaderEpoch", -1) for s in states if isinstance(s, dict)), default=-1)
