"""How the session shares tests out (tests/conftest.py) and which builds it starts
(tests/fixtures/builds.py): the long groups first, each on a worker (with two shared
clusters, each half of the shared cluster's tests on a cluster of its own); the tests
that need a one-time build last, in one group; and only a build that is missing is
started."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from clusters.tansu.system import TANSU
from tests import conftest
from tests.conftest import (AFTER_BUILDS_GROUP, OWN_CLUSTERS_GROUP, SHARED_CLUSTER_GROUP, SHARED_CLUSTER_RUNS_GROUP,
                            SHARED_CLUSTERS_ENV, cluster_group, in_schedule_order)
from tests.fixtures import builds
from tests.fixtures.cluster import worker_cluster_name


@dataclass
class Item:
    name: str
    fixturenames: tuple[str, ...] = ()
    path: Path = field(default_factory=lambda: Path("test_x.py"))

    def get_closest_marker(self, name: str):
        return None


def test_the_groups_come_first_and_the_tests_that_need_a_build_last_each_in_its_order(monkeypatch):
    monkeypatch.setenv(SHARED_CLUSTERS_ENV, "2")
    items = [Item("a"), Item("schema", ("tansu_built",)), Item("shared", ("cluster", "local_cluster")),
             Item("run", ("tansu", "tansu_built", "tmp_path")), Item("own", ("fresh_cluster",)), Item("b"),
             Item("fault", ("healed_cluster", "local_cluster"), Path("tests/nemesis/test_x.py"))]
    ordered = in_schedule_order(items)
    assert [i.name for i in ordered] == ["shared", "own", "fault", "a", "b", "schema", "run"]
    assert [cluster_group(i) for i in ordered] == [SHARED_CLUSTER_RUNS_GROUP, OWN_CLUSTERS_GROUP, SHARED_CLUSTER_GROUP,
                                                   None, None, AFTER_BUILDS_GROUP, AFTER_BUILDS_GROUP]


def test_the_shared_clusters_tests_are_one_group_or_two_halves(monkeypatch):
    """One group by default; with two shared clusters, the faults' and clusters' tests
    and the rest."""
    def groups() -> dict[str, str | None]:
        return {d: cluster_group(Item("t", ("cluster", "local_cluster"), Path(f"tests/{d}/test_x.py")))
                for d in ("nemesis", "clusters", "harness", "workloads", "results")}
    monkeypatch.delenv(SHARED_CLUSTERS_ENV, raising=False)
    assert set(groups().values()) == {SHARED_CLUSTER_GROUP}
    monkeypatch.setenv(SHARED_CLUSTERS_ENV, "2")
    assert groups() == {"nemesis": SHARED_CLUSTER_GROUP, "clusters": SHARED_CLUSTER_GROUP,
                        "harness": SHARED_CLUSTER_RUNS_GROUP, "workloads": SHARED_CLUSTER_RUNS_GROUP,
                        "results": SHARED_CLUSTER_RUNS_GROUP}
    monkeypatch.setenv(SHARED_CLUSTERS_ENV, "3")
    with pytest.raises(pytest.UsageError, match="LOGTRIAL_TEST_SHARED_CLUSTERS must be 1 or 2, not '3'"):
        groups()


def test_each_worker_has_a_shared_cluster_of_its_own(monkeypatch):
    monkeypatch.setenv("LOGTRIAL_TEST_CLUSTER", "ci")
    names = {}
    for worker in ("gw0", "gw1", "gw2"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        names[worker] = worker_cluster_name()
    assert names == {"gw0": "ci", "gw1": "ci-gw1", "gw2": "ci-gw2"}


def test_only_a_missing_build_of_a_requested_fixture_is_needed(monkeypatch):
    monkeypatch.setattr(builds, "is_built", lambda kind: False)
    assert builds.builds_needed(["tmp_path", "tansu_built"]) == [TANSU]
    assert builds.builds_needed(["tmp_path", "cluster"]) == []
    monkeypatch.setattr(builds, "is_built", lambda kind: True)
    assert builds.builds_needed(["tansu_built"]) == []


def test_every_build_fixture_is_defined_where_the_session_finds_it():
    assert set(builds.BUILD_FIXTURES) <= set(dir(builds)) and conftest.BUILD_FIXTURES is builds.BUILD_FIXTURES
