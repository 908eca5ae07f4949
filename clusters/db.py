"""The Database protocol: the lifecycle the harness drives on each node, whatever the
system under test. Nodes are named as in the inventory ("n1"); every call reaches
the node over SSH."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable


class DatabaseError(RuntimeError):
    """A node's database failed to install, configure, start or stop; names the node."""

    def __init__(self, node: str, message: str) -> None:
        self.node = node
        super().__init__(f"node {node}: {message}")


@runtime_checkable
class Database(Protocol):
    def install(self, node: str) -> None: ...
    def setup(self, node: str) -> None: ...  # config + storage format
    def start(self, node: str) -> None: ...  # returns once the node serves clients
    def stop(self, node: str) -> None: ...  # SIGTERM, then wait
    def kill(self, node: str) -> None: ...  # SIGKILL
    def pause(self, node: str) -> None: ...  # SIGSTOP
    def resume(self, node: str) -> None: ...  # SIGCONT
    def is_running(self, node: str) -> bool: ...
    def pid_file(self, node: str) -> str: ...
    def wipe(self, node: str) -> None: ...
    def collect_logs(self, node: str, dest_dir: Path) -> None: ...
    def bootstrap_servers(self) -> str: ...
    def clock_offset_file(self, node: str) -> str: ...
