"""Shared fixtures live in tests/fixtures/, one module per resource, so that a
cluster and a Spark session are each brought up once per test session."""

import random

import pytest

pytest_plugins = [
    "tests.fixtures.cluster",
    "tests.fixtures.spark",
]


# `make test` runs pytest-xdist workers (Makefile). Most tests share out freely;
# two groups each stay on one worker, in order:
# - every test of the shared cluster (its fixture is per worker and the cluster
#   is named, so two workers must never both bring it up);
# - the tests that bring up clusters of their own (interrupted runs, other Kafka
#   versions, fresh clusters): they mostly wait on brokers and faults, so they
#   run beside the shared cluster's tests instead of after them.
SHARED_CLUSTER_GROUP = "shared-cluster"
OWN_CLUSTERS_GROUP = "own-clusters"
SHARED_CLUSTER_FIXTURES = {"local_cluster"}  # cluster and healed_cluster depend on it
OWN_CLUSTER_FIXTURES = {"fresh_cluster", "zookeeper_cluster", "dynamic_quorum_cluster"}
OWN_CLUSTER_MODULES = {"test_interrupted_runs.py", "test_kafka_versions.py", "test_tansu_cluster.py"}


def cluster_group(item: pytest.Item) -> str | None:
    """The xdist group a test must run in, or None if it can go anywhere."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & SHARED_CLUSTER_FIXTURES:
        return SHARED_CLUSTER_GROUP
    if (fixtures & OWN_CLUSTER_FIXTURES or item.get_closest_marker("own_cluster")
            or item.path.name in OWN_CLUSTER_MODULES):
        return OWN_CLUSTERS_GROUP
    return None


def pytest_addoption(parser) -> None:
    parser.addoption("--order-seed", type=int, default=None,
                     help="run the tests in an order shuffled by this seed (each xdist group keeps "
                          "its tests on one worker, in the shuffled order): a test that depends "
                          "on what an earlier one left on the shared cluster shows up")


def shuffled(items: list[pytest.Item], rng: random.Random) -> list[pytest.Item]:
    """The modules in a random order, and each module's tests too. A module's tests stay
    together, so its module-scoped fixtures (a Spark cluster, a checked history) are still
    made once."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = list(modules.values())
    rng.shuffle(order)
    for tests in order:
        rng.shuffle(tests)
    return [item for tests in order for item in tests]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items) -> None:
    seed = config.getoption("--order-seed")
    if seed is not None:
        items[:] = shuffled(items, random.Random(seed))
    for item in items:
        group = cluster_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
