"""The directories of a database's nodes that the power fault puts on powerfs
(clusters/nodes/powerfs.py): putting them on or taking them off as the settings say
(at each launch of what uses them, so every start runs on what was asked), a cut of
all of a node's at once, and taking them off after a loss. Each system says which
directories (Kafka: the broker's log dir; tansu: its storage node's PostgreSQL data
dir) and holds one of these."""
from __future__ import annotations

from typing import Callable

from clusters.nodes import powerfs
from clusters.nodes.ssh import SSHPool


class PowerLayers:
    def __init__(self, ssh: SSHPool, dirs: Callable[[str], list[str]], names: Callable[[], str | None]) -> None:
        """`dirs`: a node's directories for the layer; `names`: the names model the
        settings ask for (powerfs.names_model), None for no layer."""
        self.ssh, self._dirs, self._names = ssh, dirs, names

    @property
    def wanted(self) -> bool:
        return self._names() is not None

    def dirs(self, node: str) -> list[str]:
        return self._dirs(node)

    def place(self, node: str) -> None:
        """Puts the node's directories on the layer when the settings ask for it, else
        takes them off it (left from a run that wanted it). What uses them is down."""
        session, names = self.ssh[node], self._names()
        for directory in self.dirs(node):
            if names is not None:
                powerfs.mount(session, directory, names)
            elif powerfs.present(session, directory):
                powerfs.unmount(session, directory)

    def cut(self, node: str, mode: str) -> dict:
        """Every directory's layer forgets at once; what each dropped, summed, and per directory."""
        session = self.ssh[node]
        return powerfs.summarize({directory: powerfs.cut(session, directory, mode) for directory in self.dirs(node)})

    def take_off(self, node: str) -> list[str]:
        session = self.ssh[node]
        return [action for directory in self.dirs(node) for action in powerfs.unmount(session, directory)]
