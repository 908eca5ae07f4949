"""One daemon per node, known only by its pid file: the stop/kill/pause/state
lifecycle that the Kafka broker and the ZooKeeper server share."""
from __future__ import annotations

import logging
import shlex
import time
from pathlib import Path

from clusters.db import DatabaseError
from clusters.nodes.ssh import NodeSession, SSHError, SSHPool

log = logging.getLogger(__name__)

STOP_TIMEOUT = 30
KILL_TIMEOUT = 10


class NodeProcess:
    """Subclasses say where the pid file is and what the process is called."""

    label = "process"

    def __init__(self, ssh: SSHPool) -> None:
        self.ssh = ssh

    def pid_file(self, node: str) -> str:
        raise NotImplementedError

    def _session(self, node: str) -> NodeSession:
        return self.ssh[node]

    def _forget_dead_process(self, node: str) -> None:
        """Hook: clean up what a dead process left behind (nothing by default)."""

    def stop(self, node: str) -> None:
        session = self._session(node)
        session.signal(self.pid_file(node), "CONT")  # a paused process cannot shut down
        if not session.signal(self.pid_file(node), "TERM"):
            return
        if not session.wait_exit(self.pid_file(node), STOP_TIMEOUT):
            log.warning("node %s: %s ignored SIGTERM for %ss, killing it", node, self.label,
                        STOP_TIMEOUT)
            self.kill(node)
        self._forget_dead_process(node)

    def kill(self, node: str) -> None:
        session = self._session(node)
        if session.signal(self.pid_file(node), "KILL"):
            if not session.wait_exit(self.pid_file(node), KILL_TIMEOUT):
                raise DatabaseError(node, f"{self.label} still alive {KILL_TIMEOUT} s after SIGKILL")
        self._forget_dead_process(node)

    def pause(self, node: str) -> None:
        if not self._session(node).signal(self.pid_file(node), "STOP"):
            raise DatabaseError(node, f"cannot pause: {self.label} is not running")

    def resume(self, node: str) -> None:
        self._session(node).signal(self.pid_file(node), "CONT")

    def is_running(self, node: str) -> bool:
        return self._session(node).pid_alive(self.pid_file(node))

    def is_paused(self, node: str) -> bool:
        return self._session(node).process_state(self.pid_file(node)) == "T"

    def state(self, node: str) -> str:
        """"running", "paused" or "stopped"."""
        process = self._session(node).process_state(self.pid_file(node))
        if process in (None, "Z", "X"):
            return "stopped"
        return "paused" if process in ("T", "t") else "running"

    def serves_metadata(self, node: str) -> bool:
        raise NotImplementedError

    def log_tail(self, node: str, lines: int = 40) -> str:
        raise NotImplementedError

    def _wait_serving(self, node: str, timeout: float, what: str) -> None:
        """Until serves_metadata(node); DatabaseError with the log's last lines when the
        process exits first ("<what> exited during start-up") or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running(node):
                raise DatabaseError(node, f"{what} exited during start-up; last log lines:\n" + self.log_tail(node))
            if self.serves_metadata(node):
                return
            time.sleep(0.5)
        raise DatabaseError(node, f"{self.label} not serving metadata after {timeout:g} s; "
                            "last log lines:\n" + self.log_tail(node))

    # -- logs -------------------------------------------------------------------------
    def _tail(self, node: str, files: list[str], lines: int) -> str:
        """The last lines of each file that exists, headed by its path."""
        paths = " ".join(shlex.quote(f) for f in files)
        try:
            return self._session(node).exec(
                f"for f in {paths}; do [ -f $f ] && echo \"== $f\" && tail -n {lines} $f; done",
                check=False, timeout=15).stdout.rstrip() or "(no log yet)"
        except SSHError as e:
            return f"(log unavailable: {e})"

    def _download_files(self, node: str, files: list[str], dest_dir: Path) -> None:
        """Copies each of `files` (a log, a config) into dest_dir under its own name."""
        dest_dir = Path(dest_dir)
        dest_dir.mkdir(parents=True, exist_ok=True)
        for remote in files:
            self._session(node).download(remote, dest_dir / Path(remote).name)

    def _download_logs(self, node: str, logs_dir: str, config_file: str, dest_dir: Path) -> None:
        """Copies every file in logs_dir, and the config file, into dest_dir."""
        session = self._session(node)
        dest_dir = Path(dest_dir)
        dest_dir.mkdir(parents=True, exist_ok=True)
        listing = session.exec(f"ls -1 {shlex.quote(logs_dir)} 2>/dev/null",
                               check=False, timeout=30).stdout.split()
        for name in listing:
            session.download(f"{logs_dir}/{name}", dest_dir / name)
        session.download(config_file, dest_dir / Path(config_file).name)


def failure_of(action, node: str) -> Exception | None:
    """What action(node) raised of a node's usual failures, or None if it succeeded:
    starting several nodes at once reports each one's, and none hides another's."""
    try:
        action(node)
        return None
    except (DatabaseError, SSHError) as e:
        return e
