"""Shared fixtures live in tests/fixtures/, one module per resource, so that a
cluster and a Spark session are each brought up once per test session."""

pytest_plugins = [
    "tests.fixtures.cluster",
    "tests.fixtures.spark",
]
