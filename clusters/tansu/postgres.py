"""tansu's storage node: a PostgreSQL server of its own, under the node's home.

Not the system's service: logtrial runs Debian's PostgreSQL 15 binaries with a data
dir, config, socket dir and pid file under <home>/postgres/, as the `postgres` user
(PostgreSQL refuses to run as root), so `cluster down` removes it all with the node.
The database `tansu` gets the schema derived from the installed crate
(clusters/tansu/schema.py) on every start: it is `create table if not exists`.

PostgreSQL forks a backend per connection, so pause and kill signal the postmaster's
whole process group (start_daemon makes it a group leader), and stop is its "fast"
shutdown (SIGINT): the default SIGTERM waits until every client has left, and tansu's
brokers never leave."""
from __future__ import annotations

import shlex
from pathlib import Path

from clusters.db import DatabaseError
from clusters.nodes.inventory import Inventory
from clusters.nodes.daemon import KILL_TIMEOUT, STOP_TIMEOUT, NodeProcess
from clusters.nodes.ssh import SSHError, SSHPool
from clusters.tansu.install import POSTGRES_BIN, schema_path

PORT = 5432
DATABASE = "tansu"
USER = "postgres"  # the OS user the server runs as, and the database superuser
AS_USER = f"setpriv --reuid={USER} --regid={USER} --init-groups"  # execs: the pid stays the server's
READY_TIMEOUT = 60
# the server's settings; --set postgres.<name>=value overrides one (TansuConfig)
DEFAULTS = {
    "max_connections": "100",
    "shared_buffers": "'32MB'",
    "fsync": "on",  # a killed storage node must keep what it acknowledged
    "synchronous_commit": "on",
    "log_min_messages": "warning",
}


class PostgresNode(NodeProcess):
    label = "postgresql"

    def __init__(self, ssh: SSHPool, inventory: Inventory, settings: dict[str, str]) -> None:
        super().__init__(ssh)
        self.inventory, self.settings = inventory, settings

    # -- layout -----------------------------------------------------------------------
    def dir(self, node: str) -> str:
        return f"{self.inventory.node(node).home}/postgres"

    def data_dir(self, node: str) -> str:
        return f"{self.dir(node)}/data"

    def config_file(self, node: str) -> str:
        return f"{self.dir(node)}/postgresql.conf"

    def pid_file(self, node: str) -> str:
        return f"{self.dir(node)}/postgres.pid"

    def log_file(self, node: str) -> str:
        return f"{self.dir(node)}/postgres.log"

    def url(self, node: str) -> str:
        """Where tansu's brokers reach it: TLS off (Debian's certificate names localhost only)."""
        return f"postgres://{USER}@{self.inventory.node(node).host}:{PORT}/{DATABASE}?sslmode=disable"

    def properties(self, node: str) -> dict[str, str]:
        d = self.dir(node)
        return {"listen_addresses": f"'{self.inventory.node(node).host}'", "port": str(PORT),
                "data_directory": f"'{self.data_dir(node)}'", "hba_file": f"'{d}/pg_hba.conf'",
                "ident_file": f"'{self.data_dir(node)}/pg_ident.conf'",
                "unix_socket_directories": f"'{d}/run'", **DEFAULTS, **self.settings}

    # -- set-up -----------------------------------------------------------------------
    def install(self, node: str) -> None:
        """Checks the node has PostgreSQL 15 (it comes from Debian, not from logtrial)."""
        if self._session(node).exec(f"test -x {POSTGRES_BIN}/postgres", check=False, timeout=15).exit_code:
            raise DatabaseError(node, f"PostgreSQL 15 not found ({POSTGRES_BIN}/postgres); "
                                "install Debian's postgresql-15 on the storage node")

    def setup(self, node: str) -> None:
        """Creates the cluster's data dir once (initdb), writes the config and hba file
        (trust on the test network: nothing else reaches it) and the schema file."""
        session, d = self._session(node), shlex.quote(self.dir(node))
        session.exec(f"mkdir -p {d}/run && chown {USER}: {d} {d}/run", timeout=30)
        conf = "".join(f"{k} = {v}\n" for k, v in self.properties(node).items())
        session.write_file(self.config_file(node), conf)
        session.write_file(f"{self.dir(node)}/pg_hba.conf",
                           "local all all trust\nhost all all 0.0.0.0/0 trust\n")
        session.write_file(f"{self.dir(node)}/schema.sql", schema_path().read_text())
        data = shlex.quote(self.data_dir(node))
        session.exec(f"test -s {data}/PG_VERSION || {AS_USER} {POSTGRES_BIN}/initdb -D {data} -U {USER} "
                     f"--auth=trust -E UTF8 --no-sync > {d}/initdb.log 2>&1", timeout=120)

    def is_formatted(self, node: str) -> bool:
        return self._session(node).exec(f"test -s {shlex.quote(self.data_dir(node))}/PG_VERSION",
                                         check=False, timeout=15).exit_code == 0

    def wipe(self, node: str) -> None:
        self.kill(node)
        self._session(node).exec(f"rm -rf {shlex.quote(self.dir(node))}", timeout=60)

    # -- lifecycle --------------------------------------------------------------------
    def start(self, node: str) -> None:
        self.launch(node)
        self.wait_ready(node)

    def launch(self, node: str) -> int:
        """Starts the server. The lock files a killed server left are removed first:
        its pid may still be an unreaped zombie, which PostgreSQL takes for a live
        server (`lock file "postmaster.pid" already exists`, the same of the socket's); ours is known dead by
        its pid file, and its backends died with its process group."""
        session = self._session(node)
        if not session.pid_alive(self.pid_file(node)):
            session.exec(f"rm -f {shlex.quote(self.data_dir(node))}/postmaster.pid "
                         f"{shlex.quote(self.dir(node))}/run/.s.PGSQL.{PORT}.lock", timeout=15)
        command = f"{AS_USER} {POSTGRES_BIN}/postgres -c config_file={shlex.quote(self.config_file(node))}"
        return session.start_daemon(command, self.pid_file(node), self.log_file(node))

    def wait_ready(self, node: str, timeout: float | None = None) -> None:
        """Until it accepts connections; then the database and the schema are made sure of."""
        ready = (f"for i in $(seq {int((timeout or READY_TIMEOUT) * 4)}); do {self._isready(node)} && exit 0; "
                 f"{self._our_server_gone(node)} && exit 2; sleep 0.25; done; exit 1")
        result = self._session(node).exec(ready, check=False, timeout=(timeout or READY_TIMEOUT) + 30)
        if result.exit_code:
            what = "exited during start-up" if result.exit_code == 2 else "not accepting connections"
            raise DatabaseError(node, f"postgresql {what}; last log lines:\n{self.log_tail(node)}")
        self._ensure_schema(node)

    def _ensure_schema(self, node: str) -> None:
        psql = f"{POSTGRES_BIN}/psql -q -v ON_ERROR_STOP=1 -h {self.inventory.node(node).host} -U {USER}"
        d = shlex.quote(self.dir(node))
        self._session(node).exec(
            f"{psql} -tAc \"select 1 from pg_database where datname = '{DATABASE}'\" | grep -q 1 || "
            f"{psql} -c 'create database {DATABASE}'; {psql} -d {DATABASE} -f {d}/schema.sql", timeout=60)

    def serves_metadata(self, node: str) -> bool:
        """Whether it accepts connections (what a broker needs of it)."""
        try:
            return self._session(node).exec(self._isready(node), check=False, timeout=15).exit_code == 0
        except SSHError:
            return False

    def _isready(self, node: str) -> str:
        return f"{POSTGRES_BIN}/pg_isready -q -t 2 -h {self.inventory.node(node).host} -p {PORT} -U {USER}"

    def _our_server_gone(self, node: str) -> str:
        return f"! kill -0 $(cat {shlex.quote(self.pid_file(node))}) 2>/dev/null"

    def stop(self, node: str) -> None:
        """Fast shutdown (SIGINT): clients are disconnected, the data is flushed."""
        session = self._session(node)
        session.signal(self.pid_file(node), "CONT", group=True)
        if session.signal(self.pid_file(node), "INT") and not session.wait_exit(self.pid_file(node), STOP_TIMEOUT):
            self.kill(node)

    def kill(self, node: str) -> None:
        """SIGKILL to the postmaster and every backend at once, as a crash would."""
        session = self._session(node)
        if session.signal(self.pid_file(node), "KILL", group=True) and \
                not session.wait_exit(self.pid_file(node), KILL_TIMEOUT):
            raise DatabaseError(node, f"postgresql still alive {KILL_TIMEOUT} s after SIGKILL")

    def pause(self, node: str) -> None:
        if not self._session(node).signal(self.pid_file(node), "STOP", group=True):
            raise DatabaseError(node, "cannot pause: postgresql is not running")

    def resume(self, node: str) -> None:
        self._session(node).signal(self.pid_file(node), "CONT", group=True)

    # -- logs -------------------------------------------------------------------------
    def log_tail(self, node: str, lines: int = 40) -> str:
        return self._tail(node, [self.log_file(node)], lines)

    def collect_logs(self, node: str, dest_dir: Path) -> None:
        self._download_files(node, [self.log_file(node), self.config_file(node)], dest_dir)
