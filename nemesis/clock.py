"""clock: skew one broker's clock without touching the machine's.

The nodes may share one kernel, so the system clock is off limits. Every broker runs
under libfaketime, reading its offset from a per-node file
(Database.clock_offset_file); this fault only rewrites that file:

- bump: jump by ±8 ms .. ±4 min (log-uniform), held until reset;
- strobe: flip between +0 and +delta every period (1-4 s) for a while (a small shell
  loop on the node, under a pid file, so it keeps its rhythm whatever the SSH latency).
  Brokers re-read the offset file at most once a second (FAKETIME_CACHE_DURATION=1:
  re-reading it on every clock call, FAKETIME_NO_CACHE, makes a JVM spin), so faster
  strobes would go unseen;
- reset: back to +0.

After a bump the fault checks what a process under the same libfaketime settings
sees (`date` on the node) and records the observed skew beside the intended one.
"""
from __future__ import annotations

import random
import shlex
from typing import Sequence

from clusters.db import Clock, Process, require
from clusters.nodes.faketime import faketime_env, skewed_marker
from clusters.nodes.ssh import NodeSession
from nemesis.fault import NodeTraces, ProcessFault
from nemesis.kind import START, STOP, FaultKind

HEALED_OFFSET = "+0"


def clock_strobe_pid_file(offset_file: str) -> str:
    """Pid file of the strobe loop, which keeps rewriting the offset file: a heal must
    stop it, or it would undo the clock reset."""
    return f"{offset_file}.strobe.pid"


def offset_text(offset_ms: float) -> str:
    """libfaketime's relative offset syntax, in (fractional) seconds: "+1.250"; "+0" for
    none (what nemesis.heal.verify_healed expects of a healthy node)."""
    return f"{offset_ms / 1000:+.3f}" if offset_ms else HEALED_OFFSET


def write_offset_command(path: str, offset_ms: float) -> str:
    # written whole then renamed: libfaketime never reads half an offset
    p = shlex.quote(path)
    return f"printf '%s\\n' {shlex.quote(offset_text(offset_ms))} > {p}.tmp && mv {p}.tmp {p}"


def strobe_command(path: str, delta_ms: float, period_ms: float, duration_s: float) -> str:
    period = f"{period_ms / 1000:.3f}"
    loop = (f"end=$(( $(date +%s) + {int(duration_s)} )); "
            f"while [ \"$(date +%s)\" -lt \"$end\" ]; do "
            f"{write_offset_command(path, delta_ms)}; sleep {period}; "
            f"{write_offset_command(path, 0)}; sleep {period}; done; "
            f"{write_offset_command(path, 0)}")
    return f"sh -c {shlex.quote(loop)}"


def observed_skew_ms(cluster, node: str) -> float:
    """What a process under the broker's libfaketime settings sees, minus the real time."""
    env = faketime_env(cluster.db.clock_offset_file(node))
    env["FAKETIME_NO_CACHE"] = "1"  # read the file now, whatever the broker's cache says
    faked = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    out = cluster.ssh[node].exec(f"date +%s%N; env {faked} date +%s%N", timeout=15).stdout
    real, fake = (int(x) for x in out.split())
    return round((fake - real) / 1e6, 1)


class ClockFault(ProcessFault):
    name = "clock"
    stop_f = "reset-clock"

    def plan(self, nodes: Sequence[str], target_specs: Sequence[str],
             rng: random.Random) -> dict:
        params = self.plan_targets(nodes, target_specs, rng)
        if rng.random() < 0.5:
            return {**params, "mode": "bump",
                    "offset_ms": round(rng.choice((-1, 1)) * 2 ** rng.uniform(3, 18), 1)}
        return {**params, "mode": "strobe", "delta_ms": round(2 ** rng.uniform(2, 16), 1),
                "period_ms": round(2 ** rng.uniform(10, 12)), "duration_s": rng.randint(5, 30)}

    def start_f(self, params: dict) -> str:
        return f"{params['mode']}-clock"

    def start(self, cluster, params: dict) -> dict:
        if not require(cluster.db, Clock, "the clock fault").faketime:
            raise RuntimeError("the brokers run without libfaketime (logtrial.faketime=false): "
                               "the clock fault cannot skew them")
        if params["mode"] == "bump":
            observed: dict[str, float] = {}
            value = self.start_on_nodes(cluster, params, lambda node: observed.update(
                {node: self._bump(cluster, node, params["offset_ms"])}))
            return {**value, "observed_ms": observed}
        return self.start_on_nodes(cluster, params, lambda node: self._strobe(
            cluster, node, params))

    def stop(self, cluster) -> dict:
        return self.stop_on_struck(lambda node: self.reset(cluster, node))

    # -- on one node -----------------------------------------------------------------------
    def _bump(self, cluster, node: str, offset_ms: float) -> float:
        """Sets the offset; returns the skew a process under libfaketime now sees."""
        self.stop_strobe(cluster, node)
        mark_skewed(cluster, node)
        cluster.ssh[node].exec(write_offset_command(cluster.db.clock_offset_file(node), offset_ms), timeout=15)
        return observed_skew_ms(cluster, node)

    def _strobe(self, cluster, node: str, params: dict) -> None:
        self.stop_strobe(cluster, node)
        path = cluster.db.clock_offset_file(node)
        mark_skewed(cluster, node)
        cluster.ssh[node].start_daemon(
            strobe_command(path, params["delta_ms"], params["period_ms"], params["duration_s"]),
            clock_strobe_pid_file(path), f"{path}.strobe.log")

    def reset(self, cluster, node: str) -> None:
        self.stop_strobe(cluster, node)
        cluster.ssh[node].exec(write_offset_command(cluster.db.clock_offset_file(node), 0),
                               timeout=15)

    @staticmethod
    def stop_strobe(cluster, node: str) -> None:
        _stop_strobe(cluster, cluster.ssh[node])


def _stop_strobe(cluster, session: NodeSession) -> bool:
    """Stops the node's strobe loop; True if one was running."""
    pid_file = clock_strobe_pid_file(cluster.db.clock_offset_file(session.node.name))
    if not session.signal(pid_file, "TERM"):
        return False
    session.wait_exit(pid_file, 10)
    return True


def mark_skewed(cluster, node: str) -> None:
    """Before the skew: the heal must restart this broker even once the offset is +0."""
    marker = shlex.quote(skewed_marker(cluster.db.clock_offset_file(node)))
    cluster.ssh[node].exec(f"touch {marker}", timeout=15)


def _ran_skewed(cluster, session: NodeSession) -> bool:
    marker = shlex.quote(skewed_marker(cluster.db.clock_offset_file(session.node.name)))
    return session.exec(f"test -e {marker}", check=False, timeout=15).exit_code == 0


def _offset(cluster, session: NodeSession) -> str:
    """The offset file's text ("" if it is missing)."""
    path = shlex.quote(cluster.db.clock_offset_file(session.node.name))
    return session.exec(f"cat {path}", check=False, timeout=15).stdout.strip()


def undo_traces(cluster, session: NodeSession) -> list[str]:
    """Stops a strobe loop, puts the offset back to +0 and stops a broker that ran with a
    skewed clock (Cluster.revive then starts it, on the real time)."""
    if not isinstance(cluster.db, Clock):
        return []
    node, actions = session.node.name, []
    if _stop_strobe(cluster, session):
        actions.append(f"{node}: stopped clock strobe")
    if _offset(cluster, session) != HEALED_OFFSET:
        cluster.db.reset_clock(node)
        actions.append(f"{node}: reset clock offset")
    if _ran_skewed(cluster, session):
        require(cluster.db, Process, "restarting a skewed broker").stop(node)  # its start removes the marker
        actions.append(f"{node}: stopped broker that ran with a skewed clock, to restart it")
    return actions


def traces_left(cluster, session: NodeSession) -> list[str]:
    if not isinstance(cluster.db, Clock):
        return []
    found = []
    offset = _offset(cluster, session)
    if offset != HEALED_OFFSET:
        found.append(f"clock offset is {offset or 'missing'!r}, not {HEALED_OFFSET}")
    if session.pid_alive(clock_strobe_pid_file(cluster.db.clock_offset_file(session.node.name))):
        found.append("clock strobe still running")
    if _ran_skewed(cluster, session):
        found.append("broker ran with a skewed clock and was not restarted")
    return found


TRACES = NodeTraces(undo=undo_traces, left=traces_left)


KIND = FaultKind(
    name="clock", summary="bump or strobe the brokers' clocks on the targets (libfaketime), reset later",
    make=lambda context: ClockFault(context.resolve_role),
    history_f={"bump-clock": START, "strobe-clock": START, "reset-clock": STOP},
    # replication orders by offsets and epochs, not by clocks; a skew of at most 4.4 min
    # (bump) or 66 s (strobe) is far from the test topics' retention (days)
    loses_data={"bump-clock": None, "strobe-clock": None},
    params=("target", "nodes", "mode"), needs=Clock, node_traces=TRACES)
