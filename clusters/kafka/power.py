"""A Kafka node's data on powerfs (clusters/nodes/powerfs.py), for the power fault: which
directories go on the layer, putting them on or taking them off as the settings say
(each time a broker is launched, so every start runs on what was asked), and a cut.

Only the broker's log dir goes on the layer (in KRaft mode it holds the metadata log
too). ZooKeeper's data dir does not yet: its server starts before the brokers and runs
beside them, so it would need a placement of its own at its own launch."""
from __future__ import annotations

from clusters.kafka.config import KafkaConfig
from clusters.kafka.paths import KafkaPaths
from clusters.nodes import powerfs
from clusters.nodes.ssh import SSHPool


class KafkaPower:
    def __init__(self, ssh: SSHPool, paths: KafkaPaths, config: KafkaConfig) -> None:
        self.ssh, self.paths, self.config = ssh, paths, config

    def dirs(self, node: str) -> list[str]:
        return [self.paths.data_dir(node)]

    def place(self, node: str) -> None:
        """Puts the node's directories on the layer when logtrial.powerfs is set, else
        takes them off it (left from a run that wanted it). The broker is down."""
        session = self.ssh[node]
        for directory in self.dirs(node):
            if self.config.powerfs:
                powerfs.mount(session, directory, self.config.powerfs_names)
            elif powerfs.present(session, directory):
                powerfs.unmount(session, directory)

    def cut(self, node: str, mode: str) -> dict:
        """Every directory's layer forgets at once; what each dropped, summed, and per directory."""
        session = self.ssh[node]
        reports = {directory: powerfs.cut(session, directory, mode) for directory in self.dirs(node)}
        return powerfs.summarize(reports)

    def take_off(self, node: str) -> list[str]:
        session = self.ssh[node]
        return [action for directory in self.dirs(node) for action in powerfs.unmount(session, directory)]
