"""A cluster of "nodes" on this machine: one network namespace per node, each with
its own IP and its own sshd, joined by a bridge whose IP the control node uses.

Provisioning uses `ip`/`ip netns` directly; afterwards the harness reaches the
nodes only over SSH, exactly as it would real machines. Everything a cluster owns
is recorded in <state root>/<name>/state.yaml, so `down` removes exactly that,
even after a crash, and touches nothing belonging to another cluster.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from clusters.nodes.faketime import leftover_files
from clusters.nodes.inventory import Inventory, Node, write_inventory
from clusters.nodes.proc import is_zombie, stat_fields

STATE_ROOT = Path(os.environ.get("LOGTRIAL_STATE_DIR", "/var/lib/logtrial/clusters"))
# the one default name: `test --local` and every `cluster` subcommand use it;
# several users of one machine set LOGTRIAL_LOCAL_CLUSTER to keep apart
DEFAULT_NAME = os.environ.get("LOGTRIAL_LOCAL_CLUSTER", "local")
POOL = ipaddress.ip_network("10.201.0.0/16")
SUBNET_LOCK = Path("/run/lock/logtrial-subnets.lock") if Path("/run/lock").is_dir() else \
    Path(tempfile.gettempdir()) / "logtrial-subnets.lock"
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,23}$")
SSHD = "/usr/sbin/sshd"
FIRST_NODE_HOST = 11  # nodes get .11, .12, ...; the bridge (control node) gets .1
MAX_NODES = 9
SSHD_START_TIMEOUT = 15


class LocalClusterError(RuntimeError):
    pass


@dataclass
class NodeStatus:
    name: str
    ip: str
    netns: bool  # the namespace exists
    sshd: bool  # sshd's pid is alive
    reachable: bool  # its port 22 accepts a TCP connection from the control node


def check_name(name: str) -> str:
    """`name`, if a local cluster may have it (its namespaces and paths are made of it)."""
    if not NAME_PATTERN.match(name):
        raise LocalClusterError(f"cluster name {name!r} is not valid: use 1-24 lower-case "
                                "letters, digits or '-', starting with a letter or digit")
    return name


class LocalCluster:
    def __init__(self, name: str, state_root: Path | str | None = None) -> None:
        self.name = check_name(name)
        self.root = Path(state_root) if state_root else STATE_ROOT
        self.dir = self.root / name
        # interface names are limited to 15 chars: derive a short, stable tag from the name
        self.tag = hashlib.sha1(name.encode()).hexdigest()[:6]
        self.bridge = f"ltb-{self.tag}"

    # -- names and paths --------------------------------------------------------------
    @property
    def inventory_path(self) -> Path:
        return self.dir / "inventory.yaml"

    @property
    def state_path(self) -> Path:
        return self.dir / "state.yaml"

    @property
    def keys_dir(self) -> Path:
        return self.dir / "keys"

    def netns(self, node: str) -> str:
        return f"lt-{self.name}-{node}"

    def veth(self, node: str) -> str:
        return f"lt{self.tag}-{node}"

    def client_netns(self, node: str) -> str:
        """The namespace of clients pinned to `node` (clusters/nodes/pinning.py)."""
        return f"lt-{self.name}.pin-{node}"  # "." is in no cluster name: no clash

    def client_veth(self, node: str) -> str:
        return f"lt{self.tag}p-{node}"

    def home(self, node: str) -> Path:
        return self.dir / node

    def sshd_dir(self, node: str) -> Path:
        return self.dir / "sshd" / node

    def exists(self) -> bool:
        return self.state_path.exists()

    # -- up ---------------------------------------------------------------------------
    def up(self, nodes: int = 3, subnet: str | None = None) -> Inventory:
        """Creates the cluster and writes its inventory. On any failure, removes what
        it created and raises."""
        require_root()
        if not 1 <= nodes <= MAX_NODES:
            raise LocalClusterError(f"--nodes must be 1..{MAX_NODES}, got {nodes}")
        with self._lock(), _subnet_lock():
            if self.exists() or self._leftover_namespaces():
                raise LocalClusterError(
                    f"cluster {self.name} already exists ({self.dir}); "
                    f"run `logtrial cluster down --name {self.name}` first")
            net = self._choose_subnet(subnet)
            names = [f"n{i}" for i in range(1, nodes + 1)]
            state = {"name": self.name, "subnet": str(net), "bridge": self.bridge,
                     "nodes": {n: str(net[FIRST_NODE_HOST + i]) for i, n in enumerate(names)}}
            self.dir.mkdir(parents=True, exist_ok=True)
            # recorded before anything is created, so a failed bring-up can be undone
            _write_yaml(self.state_path, state)
            try:
                return self._provision(net, state["nodes"])
            except BaseException:
                self._teardown(keep_data=False)
                raise

    def _provision(self, net: ipaddress.IPv4Network, ips: dict[str, str]) -> Inventory:
        host_key, client_key = self._make_keys()
        self._make_bridge(net)
        for node, ip in ips.items():
            self._make_node_network(node, ip, net.prefixlen)
        fp = host_key_fingerprint(host_key)
        for node, ip in ips.items():
            self._start_sshd(node, ip, host_key, client_key.with_suffix(".pub"))
        for node, ip in ips.items():
            wait_for_port(ip, 22, SSHD_START_TIMEOUT, f"sshd of node {node}")
        inventory = Inventory(
            name=self.name,
            nodes=tuple(Node(name=node, host=ip, port=22, user="root", key_file=str(client_key),
                             host_key=fp, home=str(self.home(node)), local=True)
                        for node, ip in ips.items()),
            path=str(self.inventory_path))
        write_inventory(inventory, self.inventory_path)
        return inventory

    def _choose_subnet(self, requested: str | None) -> ipaddress.IPv4Network:
        taken = self._subnets_in_use()
        if requested:
            try:
                net = ipaddress.ip_network(requested, strict=True)
            except ValueError as e:
                raise LocalClusterError(f"--subnet {requested}: {e}") from None
            if net.version != 4 or net.prefixlen > 28:
                raise LocalClusterError(f"--subnet {requested}: need an IPv4 network of /28 "
                                        "or larger")
            for other, owner in taken.items():
                if net.overlaps(other):
                    raise LocalClusterError(f"--subnet {requested} overlaps {other}, "
                                            f"in use by {owner}")
            return net
        for candidate in POOL.subnets(new_prefix=24):
            if not any(candidate.overlaps(other) for other in taken):
                return candidate
        raise LocalClusterError(f"no free /24 left in {POOL}")

    def _subnets_in_use(self) -> dict[ipaddress.IPv4Network, str]:
        """Subnets of other logtrial clusters and of this machine's interfaces."""
        taken: dict[ipaddress.IPv4Network, str] = {}
        if self.root.exists():
            for state_file in self.root.glob("*/state.yaml"):
                with contextlib.suppress(Exception):
                    other = yaml.safe_load(state_file.read_text())
                    taken[ipaddress.ip_network(other["subnet"])] = f"cluster {other['name']}"
        out = run(["ip", "-o", "-4", "addr", "show"]).stdout
        for line in out.splitlines():
            fields = line.split()
            with contextlib.suppress(ValueError, IndexError):
                net = ipaddress.ip_interface(fields[3]).network
                if not net.is_loopback:
                    taken.setdefault(net, f"interface {fields[1]}")
        return taken

    def _make_keys(self) -> tuple[Path, Path]:
        """A host key shared by the cluster's sshds and the client key the harness uses."""
        self.keys_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.keys_dir, 0o700)
        host_key = self.keys_dir / "ssh_host_ed25519_key"
        client_key = self.keys_dir / "id_ed25519"
        for path, comment in ((host_key, f"logtrial-{self.name}-host"),
                              (client_key, f"logtrial-{self.name}-client")):
            # fresh keys for every bring-up, also when `down --keep-data` left old ones
            path.unlink(missing_ok=True)
            path.with_suffix(".pub").unlink(missing_ok=True)
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
        return host_key, client_key

    def _make_bridge(self, net: ipaddress.IPv4Network) -> None:
        if link_exists(self.bridge):
            raise LocalClusterError(f"interface {self.bridge} already exists (another cluster "
                                    "with a colliding name tag?)")
        run(["ip", "link", "add", self.bridge, "type", "bridge"])
        run(["ip", "addr", "add", f"{net[1]}/{net.prefixlen}", "dev", self.bridge])
        run(["ip", "link", "set", self.bridge, "up"])

    def _make_node_network(self, node: str, ip: str, prefixlen: int) -> None:
        self.attach_namespace(self.netns(node), self.veth(node), ip, prefixlen)

    def attach_namespace(self, ns: str, veth: str, ip: str, prefixlen: int) -> None:
        """A new namespace `ns` on the bridge through `veth`, its eth0 at `ip`."""
        run(["ip", "netns", "add", ns])
        run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns])
        run(["ip", "link", "set", veth, "master", self.bridge])
        run(["ip", "link", "set", veth, "up"])
        in_ns = ["ip", "netns", "exec", ns]
        run(in_ns + ["ip", "link", "set", "lo", "up"])
        run(in_ns + ["ip", "addr", "add", f"{ip}/{prefixlen}", "dev", "eth0"])
        run(in_ns + ["ip", "link", "set", "eth0", "up"])

    def _start_sshd(self, node: str, ip: str, host_key: Path, authorized_keys: Path) -> None:
        home, sdir = self.home(node), self.sshd_dir(node)
        home.mkdir(parents=True, exist_ok=True)
        sdir.mkdir(parents=True, exist_ok=True)
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        config = sdir / "sshd_config"
        config.write_text(SSHD_CONFIG.format(ip=ip, host_key=host_key, pid=sdir / "sshd.pid",
                                             authorized_keys=authorized_keys))
        run(["ip", "netns", "exec", self.netns(node), SSHD, "-f", str(config),
             "-E", str(sdir / "sshd.log")])
        _wait_for_pid_file(sdir / "sshd.pid", f"sshd of {node} (its log: {sdir / 'sshd.log'})")

    # -- down -------------------------------------------------------------------------
    def down(self, keep_data: bool = False) -> list[str]:
        """Removes the cluster's processes, namespaces, interfaces and (unless keep_data)
        files. Safe to run twice. Returns what it removed."""
        require_root()
        with self._lock():
            return self._teardown(keep_data)

    def _teardown(self, keep_data: bool) -> list[str]:
        removed: list[str] = []
        nodes = self._known_nodes()
        for node in nodes:
            removed += self._stop_node_processes(node, graceful=keep_data)
        for node in nodes:
            removed += self._delete_namespace(self.netns(node), self.veth(node))
        removed += self.delete_client_namespaces()  # left behind by a run that died
        if link_exists(self.bridge):
            run(["ip", "link", "del", self.bridge])
            removed.append(f"interface {self.bridge}")
        if self.dir.exists():
            if keep_data:
                self.state_path.unlink(missing_ok=True)
                shutil.rmtree(self.dir / "sshd", ignore_errors=True)
                removed.append(f"state of {self.dir} (data kept)")
            else:
                shutil.rmtree(self.dir)
                removed.append(f"directory {self.dir}")
        return removed

    def _known_nodes(self) -> list[str]:
        nodes: set[str] = set()
        if self.state_path.exists():
            with contextlib.suppress(Exception):
                nodes |= set(yaml.safe_load(self.state_path.read_text())["nodes"])
        nodes |= set(self._leftover_namespaces())
        return sorted(nodes)

    def _leftover_namespaces(self) -> list[str]:
        prefix = f"lt-{self.name}-"
        return [ns[len(prefix):] for ns in list_netns()
                if ns.startswith(prefix) and re.fullmatch(r"n\d+", ns[len(prefix):])]

    def client_namespaces(self) -> list[str]:
        prefix = self.client_netns("")
        return [ns for ns in list_netns() if ns.startswith(prefix)]

    def delete_client_namespaces(self) -> list[str]:
        """Deletes the namespaces of pinned clients (clusters/nodes/pinning.py) and their veths."""
        prefix = self.client_netns("")
        removed = []
        for ns in self.client_namespaces():
            removed += self._delete_namespace(ns, self.client_veth(ns[len(prefix):]))
        return removed

    @staticmethod
    def _delete_namespace(ns: str, veth: str) -> list[str]:
        """Deletes `ns`, then the host end of its veth: the kernel removes that
        with the namespace, but asynchronously, so it may still be there."""
        removed = []
        if ns in list_netns():
            run(["ip", "netns", "del", ns])
            removed.append(f"netns {ns}")
        if link_exists(veth):
            run(["ip", "link", "del", veth], check=False)
            removed.append(f"interface {veth}")
        return removed

    def _stop_node_processes(self, node: str, graceful: bool) -> list[str]:
        """Stops the daemons recorded in pid files (brokers, sshd), then anything else
        still inside the node's namespace (it is ours: nothing else runs there)."""
        removed = []
        home = self.home(node)
        pid_files = list(home.glob("**/*.pid")) if home.exists() else []
        pid_files += [self.sshd_dir(node) / "sshd.pid"]
        pids = [pid for pid in (owned_pid(pf) for pf in pid_files) if pid]
        ns = self.netns(node)
        if ns in list_netns():
            pids += [int(p) for p in run(["ip", "netns", "pids", ns], check=False).stdout.split()]
        pids = sorted(p for p in set(pids) if pid_exists(p))
        if graceful:
            signal_all(pids, signal.SIGTERM)
            wait_gone(pids, 15)
        signal_all(pids, signal.SIGKILL)
        wait_gone(pids, 5)
        for pid in pids:  # what libfaketime leaves behind a killed process
            for leftover in leftover_files(pid):
                Path(leftover).unlink(missing_ok=True)
        removed += [f"process {pid} (node {node})" for pid in pids]
        return removed

    # -- status -----------------------------------------------------------------------
    def status(self) -> list[NodeStatus]:
        if not self.state_path.exists():
            raise LocalClusterError(f"cluster {self.name} does not exist (no {self.state_path})")
        state = yaml.safe_load(self.state_path.read_text())
        namespaces = set(list_netns())
        result = []
        for node, ip in state["nodes"].items():
            pid = read_pid(self.sshd_dir(node) / "sshd.pid")
            result.append(NodeStatus(name=node, ip=ip, netns=self.netns(node) in namespaces,
                                     sshd=bool(pid and pid_exists(pid) and not is_zombie(pid)),
                                     reachable=port_open(ip, 22, 2)))
        return result

    @contextlib.contextmanager
    def _lock(self):
        """Serializes up/down of the clusters of one state root across processes."""
        with _locked(self.root / ".lock"):
            yield


SSHD_CONFIG = """\
# sshd of one logtrial node (its own network namespace); written by clusters/nodes/local.py
ListenAddress {ip}
Port 22
HostKey {host_key}
PidFile {pid}
AuthorizedKeysFile {authorized_keys}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
MaxSessions 64
MaxStartups 64
ClientAliveInterval 15
ClientAliveCountMax 4
Subsystem sftp internal-sftp
# bash started by sshd sources the user's ~/.bashrc unless it is a nested shell
# (Debian's build). A node's commands need none of it, and a heavy one (here:
# pyenv init) cost each command about 0.1 CPU-s and doubled its latency.
SetEnv SHLVL=1
"""


def require_root() -> None:
    if os.geteuid() != 0:
        raise LocalClusterError(
            "a local cluster needs root: it creates network namespaces, a bridge and veth "
            "interfaces, runs an sshd per node and lets the nemesis edit iptables. "
            "Run as root (e.g. with sudo), or use an inventory of real machines.")


def run(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise LocalClusterError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}): "
                                f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def list_netns() -> list[str]:
    out = run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def link_exists(name: str) -> bool:
    return Path("/sys/class/net", name).exists()


def host_key_fingerprint(key_path: Path) -> str:
    out = run(["ssh-keygen", "-l", "-E", "sha256", "-f", f"{key_path}.pub"]).stdout
    return out.split()[1]


SSHD_PID_FILE_TIMEOUT_S = 10.0


def _wait_for_pid_file(pid_file: Path, what: str) -> None:
    """A daemonised sshd writes its pid file after it listens: so a node can
    be reachable before heal, down or status could find its process. Up
    returns only once they can."""
    deadline = time.monotonic() + SSHD_PID_FILE_TIMEOUT_S
    while read_pid(pid_file) is None:
        if time.monotonic() > deadline:
            raise LocalClusterError(f"{what}: no pid in {pid_file} after {SSHD_PID_FILE_TIMEOUT_S:g} s")
        time.sleep(0.02)


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(Path(pid_file).read_text().strip())
    except (OSError, ValueError):
        return None


def owned_pid(pid_file: Path) -> int | None:
    """The pid in pid_file, unless that pid now belongs to a later process (its start
    time differs from the one clusters.nodes.ssh.start_daemon recorded beside the pid file)."""
    pid = read_pid(pid_file)
    recorded = Path(f"{pid_file}.start")
    if pid is None or not recorded.exists():
        return pid
    fields = stat_fields(pid)
    if fields is None:
        return None
    return pid if fields[19] == recorded.read_text().strip() else None


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
            if sig == signal.SIGTERM:
                os.kill(pid, signal.SIGCONT)  # a paused process must run to act on SIGTERM


def wait_gone(pids: list[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(pid_exists(p) and not is_zombie(p) for p in pids):
        time.sleep(0.1)


def port_open(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for_port(host: str, port: int, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(host, port, 1):
            return
        time.sleep(0.1)
    raise LocalClusterError(f"{what} not listening on {host}:{port} after {timeout:g} s")


def _write_yaml(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False))
    os.replace(tmp, path)


def existing_clusters(state_root: Path | str | None = None) -> list[LocalCluster]:
    """The local clusters recorded under the state root, by name."""
    root = Path(state_root) if state_root else STATE_ROOT
    if not root.is_dir():
        return []
    return [LocalCluster(d.name, root) for d in sorted(root.iterdir())
            if (d / "state.yaml").exists() and NAME_PATTERN.match(d.name)]


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _subnet_lock():
    """Held from choosing a subnet until the bridge holds its address (then
    `ip addr` shows it to everyone), machine-wide: clusters of other state roots
    (a test's own, another user's) read a subnet as free from the interfaces
    alone, and two bring-ups at once once picked the same one."""
    return _locked(SUBNET_LOCK)
