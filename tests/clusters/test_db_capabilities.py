"""The Database protocol's optional capabilities: KafkaDB has them all; a caller
that needs one a database lacks refuses with an error naming both."""
from __future__ import annotations

import pytest

from clusters import db as capabilities
from clusters.db import MissingCapability, require
from clusters.nodes.inventory import Inventory, Node
from clusters.kafka.config import UNSYNCED_ACKS
from clusters.kafka.database import KafkaDB
from nemesis.clock import ClockFault
from nemesis.membership import MembershipFault
from nemesis.pause import PauseFault
from nemesis.producer_state import ProducerStateFault

EVERY = (capabilities.Database, capabilities.Process, capabilities.Pause, capabilities.LogFiles,
         capabilities.Clock, capabilities.Versions, capabilities.Config, capabilities.Ensemble,
         capabilities.Membership, capabilities.ProducerState)


class ProcessOnly:
    """A database that can only be started and stopped."""
    def pid_file(self, node): ...
    def start(self, node): ...
    def launch(self, node): ...
    def wait_ready(self, node, timeout=None): ...
    def stop(self, node): ...
    def shutdown(self, node): ...
    def kill(self, node): ...
    def is_running(self, node): return True
    def state(self, node): return "running"


class FakeCluster:
    db = ProcessOnly()


def test_kafka_has_every_capability():
    nodes = tuple(Node(f"n{i}", f"10.9.9.1{i}", 22, "root", "/k", None, f"/h/n{i}") for i in (1, 2, 3))
    kafka = KafkaDB(Inventory("t", nodes), ssh=None)
    assert [c.__name__ for c in EVERY if not isinstance(kafka, c)] == []


@pytest.mark.parametrize("settings, synced", [({}, False), ({"log.flush.interval.messages": "10"}, False),
                                               ({"log.flush.interval.messages": "1"}, True)])
def test_kafka_says_its_acknowledged_writes_are_synced_only_with_an_fsync_of_every_message(settings, synced):
    nodes = tuple(Node(f"n{i}", f"10.9.9.1{i}", 22, "root", "/k", None, f"/h/n{i}") for i in (1, 2, 3))
    kafka = KafkaDB(Inventory("t", nodes), ssh=None, settings=settings)
    assert isinstance(kafka, capabilities.PowerLoss)
    assert kafka.unsynced_acks() == (None if synced else UNSYNCED_ACKS)


def test_require_names_the_caller_and_the_capability():
    db = ProcessOnly()
    assert require(db, capabilities.Process, "x") is db
    with pytest.raises(MissingCapability, match="the pause fault needs a database with the Pause "
                                                "capability; ProcessOnly does not have it"):
        require(db, capabilities.Pause, "the pause fault")


@pytest.mark.parametrize("fault, params, capability", [
    (PauseFault(lambda role: ["n1"]), {"target": "one", "nodes": ["n1"]}, "Pause"),
    (ClockFault(lambda role: ["n1"]), {"target": "one", "nodes": ["n1"], "mode": "bump", "offset_ms": 5.0}, "Clock"),
    (MembershipFault(), {"mode": "reassign", "change": "move", "pick": 1}, "Membership"),
    (ProducerStateFault(), {"mode": "truncate"}, "ProducerState"),
])
def test_faults_refuse_a_database_without_their_capability(fault, params, capability):
    with pytest.raises(MissingCapability, match=f"the {capability}"):
        fault.start(FakeCluster(), params)
