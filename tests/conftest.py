"""Shared fixtures live in tests/fixtures/, one module per resource, so that a
cluster and a Spark session are each brought up once per test session."""

import os
import random

import pytest

pytest.register_assert_rewrite("tests.fixtures")  # imported here before pytest_plugins loads them
from tests.fixtures.builds import BUILD_FIXTURES, builds_needed, is_built, start_in_background  # noqa: E402
from tests.fixtures.depth import PROFILE_ENV, register_profiles  # noqa: E402

# the property tests' depth: `commit` by default, `nightly` (four times the examples of
# every property test) with LOGTRIAL_HYPOTHESIS_PROFILE=nightly, as `make test-deep` sets
HYPOTHESIS_PROFILE = register_profiles()

pytest_plugins = [
    "tests.fixtures.builds",
    "tests.fixtures.cluster",
    "tests.fixtures.spark",
]


# `make test` runs pytest-xdist workers (Makefile). Most tests share out freely;
# four groups each stay on one worker, in order:
# - the tests of the shared cluster, one after another on one worker. Its fixture is
#   per worker, and each worker's cluster has a name of its own (tests/fixtures/cluster.py),
#   so with LOGTRIAL_TEST_SHARED_CLUSTERS=2 they run in two halves side by side, on two
#   clusters: the faults' and the clusters' tests, and the rest (runs, clients, the
#   command line). That shortens the suite's critical path where cores are spare; on
#   this project's 2-core machine it made the suite slower (docs/benchmarks.md, "Test
#   suite": every test slowed by the second cluster's load), hence the default of 1;
# - the tests that bring up clusters of their own (interrupted runs, other Kafka
#   versions, fresh clusters): they mostly wait on brokers and faults, so they
#   run beside the shared cluster's tests instead of after them;
# - the tests that need a one-time build (tansu's cargo build, tests/fixtures/builds.py),
#   run last: collection starts the builds they need in the background, so on a
#   fresh machine the build overlaps the rest of the suite (under `nice`, it takes
#   what the tests leave of the cores) and is done, or nearly, when they start.
# xdist's loadgroup hands out its units in collection order (the Makefile turns off
# its reordering by size), so in_schedule_order puts the groups of long chains first,
# a worker each, and the builds' group last.
SHARED_CLUSTER_GROUP = "shared-cluster"           # the faults' and the clusters' tests
SHARED_CLUSTER_RUNS_GROUP = "shared-cluster-runs"  # the other half, with two shared clusters
FAULT_AND_CLUSTER_DIRS = {"nemesis", "clusters"}
SHARED_CLUSTERS_ENV = "LOGTRIAL_TEST_SHARED_CLUSTERS"
OWN_CLUSTERS_GROUP = "own-clusters"
AFTER_BUILDS_GROUP = "after-builds"
SHARED_CLUSTER_FIXTURES = {"local_cluster"}  # cluster and healed_cluster depend on it
OWN_CLUSTER_FIXTURES = {"fresh_cluster", "zookeeper_cluster", "dynamic_quorum_cluster"}
OWN_CLUSTER_MODULES = {"test_interrupted_runs.py", "test_kafka_versions.py"}


def cluster_group(item: pytest.Item) -> str | None:
    """The xdist group a test must run in, or None if it can go anywhere."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & BUILD_FIXTURES.keys():
        return AFTER_BUILDS_GROUP
    if fixtures & SHARED_CLUSTER_FIXTURES:
        if shared_clusters() == 1 or item.path.parent.name in FAULT_AND_CLUSTER_DIRS:
            return SHARED_CLUSTER_GROUP
        return SHARED_CLUSTER_RUNS_GROUP
    if (fixtures & OWN_CLUSTER_FIXTURES or item.get_closest_marker("own_cluster")
            or item.path.name in OWN_CLUSTER_MODULES):
        return OWN_CLUSTERS_GROUP
    return None


def shared_clusters() -> int:
    """How many shared clusters the session brings up (LOGTRIAL_TEST_SHARED_CLUSTERS: 1 or 2)."""
    value = os.environ.get(SHARED_CLUSTERS_ENV, "1")
    if value not in ("1", "2"):
        raise pytest.UsageError(f"{SHARED_CLUSTERS_ENV} must be 1 or 2, not {value!r}")
    return int(value)


def pytest_addoption(parser) -> None:
    parser.addoption("--order-seed", type=int, default=None,
                     help="run the tests in an order shuffled by this seed (each xdist group keeps "
                          "its tests on one worker, in the shuffled order): a test that depends "
                          "on what an earlier one left on the shared cluster shows up")


def shuffled(items: list, rng: random.Random) -> list:
    """The modules in a random order, and each module's tests too. A module's tests stay
    together, so its module-scoped fixtures (a Spark cluster, a checked history) are still
    made once."""
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = list(modules.values())
    rng.shuffle(order)
    for tests in order:
        rng.shuffle(tests)
    return [item for tests in order for item in tests]


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    seed = config.getoption("--order-seed")
    if seed is not None:
        items[:] = shuffled(items, random.Random(seed))
    # the groups, before xdist's own hook reads them
    for item in items:
        group = cluster_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    yield
    # after every other plugin's reordering and deselection: the builds' tests last
    items[:] = in_schedule_order(items)
    after = [item for item in items if cluster_group(item) == AFTER_BUILDS_GROUP]
    # every xdist worker collects the same tests: the first one starts the builds
    if after and not config.option.collectonly and os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        start_in_background(builds_needed(name for item in after for name in item.fixturenames))


def in_schedule_order(items: list) -> list:
    """The tests in their order, the long groups first and those that need a build last
    (a stable sort). xdist hands out one unit to each worker in turn, in collection
    order: the groups first land on workers of their own, and start at once."""
    def rank(item) -> int:
        group = cluster_group(item)
        return 2 if group == AFTER_BUILDS_GROUP else 1 if group is None else 0
    return sorted(items, key=rank)


def pytest_report_header(config) -> list[str]:
    """The property tests' depth; which builds are missing, and what becomes of the tests that need them."""
    return [f"hypothesis profile: {HYPOTHESIS_PROFILE} ({PROFILE_ENV})"] + [f"{kind.name}: {kind.install_state()[1]}; the tests that need it start the build in the "
            f"background and run last" for kind in BUILD_FIXTURES.values() if not is_built(kind)]
