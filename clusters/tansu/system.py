"""tansu as a system under test (clusters/systems.py lists it): stateless brokers
on one PostgreSQL node (clusters/tansu/database.py), the part of Kafka's client API they
serve, and a cargo build of tansu on first use (clusters/tansu/install.py)."""
from __future__ import annotations

from clusters.tansu import install as tansu_install
from clusters.db import Database
from clusters.nodes.inventory import Inventory
from clusters.nodes.ssh import SSHPool
from clusters.system_kind import ExtraNode, Say, SystemKind
from clusters.tansu.database import STORAGE_ROLE, TansuDB


def _open(inventory: Inventory, ssh: SSHPool, settings: dict | None) -> Database:
    return TansuDB(inventory, ssh, settings)


def _ensure_installed(say: Say) -> None:
    tansu_install.ensure_installed(say=say)


def _install_state() -> tuple[bool, str]:
    if tansu_install.is_installed():
        return True, str(tansu_install.binary())
    return False, (f"not built: built on first use of --db tansu, or by `make tansu` "
                   f"({tansu_install.EXPECTED_BUILD})")


TANSU = SystemKind(
    name="tansu",
    open=_open,
    ensure_installed=_ensure_installed,
    install_state=_install_state,
    broker_tools={},  # the install uploads the broker's binary: nothing more to find
    extra_node=ExtraNode(STORAGE_ROLE, "PostgreSQL", {
        str(tansu_install.POSTGRES_BIN / "postgres"): ("tansu's storage node (postgresql-15)", True)}),
    # Kafka client features the harness may use against it, found by trying
    # (docs/findings.md, tansu). Not "transactions" (librdkafka cannot commit: no
    # EndTxn it takes), nor "latest-offset-read-committed" (its query needs
    # PostgreSQL 16, Debian has 15)
    client_features=frozenset({"idempotence"}),
)
