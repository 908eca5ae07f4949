"""How the session shares tests out (tests/conftest.py) and which builds it starts
(tests/fixtures/builds.py): the tests that need a one-time build run last, in one
group, and only a build that is missing is started."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from clusters.tansu.system import TANSU
from tests import conftest
from tests.conftest import AFTER_BUILDS_GROUP, SHARED_CLUSTER_GROUP, builds_last, cluster_group
from tests.fixtures import builds


@dataclass
class Item:
    name: str
    fixturenames: tuple[str, ...] = ()
    path: Path = field(default_factory=lambda: Path("test_x.py"))

    def get_closest_marker(self, name: str):
        return None


def test_the_tests_that_need_a_build_run_last_in_one_group_in_their_order():
    items = [Item("a"), Item("schema", ("tansu_built",)), Item("shared", ("cluster", "local_cluster")),
             Item("run", ("tansu", "tansu_built", "tmp_path")), Item("b")]
    assert [i.name for i in builds_last(items)] == ["a", "shared", "b", "schema", "run"]
    assert [cluster_group(i) for i in builds_last(items)][-3:] == [None, AFTER_BUILDS_GROUP, AFTER_BUILDS_GROUP]
    assert cluster_group(items[2]) == SHARED_CLUSTER_GROUP


def test_only_a_missing_build_of_a_requested_fixture_is_needed(monkeypatch):
    monkeypatch.setattr(builds, "is_built", lambda kind: False)
    assert builds.builds_needed(["tmp_path", "tansu_built"]) == [TANSU]
    assert builds.builds_needed(["tmp_path", "cluster"]) == []
    monkeypatch.setattr(builds, "is_built", lambda kind: True)
    assert builds.builds_needed(["tansu_built"]) == []


def test_every_build_fixture_is_defined_where_the_session_finds_it():
    assert set(builds.BUILD_FIXTURES) <= set(dir(builds)) and conftest.BUILD_FIXTURES is builds.BUILD_FIXTURES
