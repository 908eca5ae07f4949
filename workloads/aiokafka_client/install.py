"""The pinned aiokafka and its own dependencies, installed on first use into the
client cache (`<cache root>/clients/aiokafka-<version>/`), apart from
kafka-python's, and imported from there (workloads/pinned_package.py).
`python -m workloads.aiokafka_client.install` installs it (make clients)."""
from __future__ import annotations

from workloads.pinned_package import PinnedPackage

# the newest 0.14.x on PyPI when it was pinned, with the dependencies its wheel
# names (async-timeout, packaging, typing_extensions), each pinned here
PINNED = PinnedPackage("aiokafka", "0.14.0", module="aiokafka", marker="aiokafka/__init__.py",
                       requirements=("async-timeout==5.0.1", "packaging==26.4", "typing_extensions==4.16.0"),
                       submodules=("aiokafka.errors", "aiokafka.structs", "aiokafka.abc",
                                   "aiokafka.producer.transaction_manager"))

if __name__ == "__main__":
    PINNED.main()
