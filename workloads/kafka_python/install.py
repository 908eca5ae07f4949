"""The pinned kafka-python, installed on first use into the client cache
(`<cache root>/clients/kafka-python-<version>/`) and imported from there, as
workloads/pinned_package.py does for every Python client under test."""
from __future__ import annotations

from workloads.pinned_package import PinnedPackage

# the newest 3.0.x on PyPI when it was pinned; it needs nothing beside itself
PINNED = PinnedPackage("kafka-python", "3.0.12", module="kafka", marker="kafka/version.py",
                       submodules=("kafka.errors", "kafka.structs", "kafka.consumer.subscription_state"))
PACKAGE, VERSION = PINNED.name, PINNED.version
install_dir = PINNED.install_dir
install_state = PINNED.install_state
load = PINNED.load

if __name__ == "__main__":
    PINNED.main()
