"""tansu as a system under test: the build from crates.io, its brokers, and the
PostgreSQL server that stores its data."""
