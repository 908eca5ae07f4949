"""Shared fixtures live in tests/fixtures/, one module per resource, so that a
cluster and a Spark session are each brought up once per test session."""

import pytest

pytest_plugins = [
    "tests.fixtures.cluster",
    "tests.fixtures.spark",
]


# `make test` runs two pytest-xdist workers: the checker tests (CPU-bound:
# pandas, Spark) share out across both, while every test outside
# tests/checkers/ runs on one worker, in order, as one group. That group holds
# everything that brings up clusters (the shared one is named, so two workers
# must never both bring it up) and mostly waits on brokers and faults.
HARNESS_GROUP = "harness"


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if "tests/checkers/" not in item.nodeid:
            item.add_marker(pytest.mark.xdist_group(HARNESS_GROUP))
