"""SSH control layer: the only way the harness reaches cluster nodes after provisioning.

One paramiko connection per node, reused by every command and SFTP transfer, with
keepalives, and re-established when it drops (a partition nemesis may sever it).
Host keys are checked against the inventory's fingerprint: nothing is accepted
blindly unless the user asks for `--insecure-host-keys`.
"""
from __future__ import annotations

import base64
import hashlib
import logging
import shlex
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

import paramiko

from clusters.nodes.inventory import Inventory, Node

log = logging.getLogger(__name__)
T = TypeVar("T")

KEEPALIVE_SECONDS = 5
SFTP_TIMEOUT_SECONDS = 60  # the longest wait for one SFTP packet
# exit status of coreutils `timeout` when it had to stop the command
TIMEOUT_EXIT = 124


@dataclass
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str


class SSHError(Exception):
    """Anything that went wrong reaching a node or running a command on it."""

    def __init__(self, node: str, message: str, command: str | None = None,
                 result: ExecResult | None = None) -> None:
        self.node, self.command, self.result = node, command, result
        text = f"node {node}: {message}"
        if command is not None:
            text += f"\n  command: {_shorten(command)}"
        super().__init__(text)


class HostKeyError(SSHError):
    """The node's host key is unknown or differs from the inventory's fingerprint."""


def fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH's SHA256 fingerprint (`ssh-keygen -lf`), as stored in the inventory."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


class _FingerprintPolicy(paramiko.MissingHostKeyPolicy):
    """Accepts exactly the key whose fingerprint the inventory names."""

    def __init__(self, node: Node, insecure: bool) -> None:
        self.node, self.insecure = node, insecure

    def missing_host_key(self, client, hostname, key) -> None:
        seen = fingerprint(key)
        if self.node.host_key is None:
            if self.insecure:
                log.warning("node %s: accepting unverified host key %s (--insecure-host-keys)",
                            self.node.name, seen)
                return
            raise HostKeyError(self.node.name, f"no host_key in the inventory to verify {seen} "
                               "against (add it, or pass --insecure-host-keys)")
        if seen != self.node.host_key:
            raise HostKeyError(self.node.name, f"host key changed or wrong: {hostname} presented "
                               f"{seen}, the inventory expects {self.node.host_key}")


class NodeSession:
    """One reused SSH connection to one node. Thread-safe: commands may run concurrently."""

    def __init__(self, node: Node, insecure_host_keys: bool = False,
                 connect_timeout: float = 10) -> None:
        self.node = node
        self.insecure_host_keys = insecure_host_keys
        self.connect_timeout = connect_timeout
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._lock = threading.Lock()

    # -- connection -------------------------------------------------------------------
    def _connect(self) -> paramiko.SSHClient:
        node = self.node
        deadline = time.monotonic() + self.connect_timeout
        try:
            sock = socket.create_connection((node.host, node.port), timeout=self.connect_timeout)
        except OSError as e:
            raise SSHError(node.name, f"cannot reach {node.host}:{node.port}: "
                           f"{e.strerror or e or 'timed out'}") from None
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(_FingerprintPolicy(node, self.insecure_host_keys))
        remaining = max(deadline - time.monotonic(), 1.0)
        try:
            client.connect(node.host, port=node.port, username=node.user,
                           key_filename=node.key_file, sock=sock, timeout=remaining,
                           banner_timeout=remaining, auth_timeout=remaining,
                           look_for_keys=False, allow_agent=False)
        except SSHError:
            client.close()
            raise
        except paramiko.AuthenticationException as e:
            client.close()
            raise SSHError(node.name, f"authentication as {node.user} with {node.key_file} "
                           f"failed: {e}") from None
        except (paramiko.SSHException, OSError, EOFError) as e:
            client.close()
            raise SSHError(node.name, f"SSH handshake with {node.host}:{node.port} failed: "
                           f"{e or type(e).__name__}") from None
        client.get_transport().set_keepalive(KEEPALIVE_SECONDS)
        return client

    def _transport(self) -> paramiko.Transport:
        with self._lock:
            if self._client is None or not self._client.get_transport() \
                    or not self._client.get_transport().is_active():
                self._drop_locked()
                self._client = self._connect()
            return self._client.get_transport()

    def _drop_locked(self) -> None:
        if self._sftp is not None:
            try:
                self._sftp.close()
            except Exception:  # noqa: BLE001 - closing a dead connection may fail any way
                pass
        if self._client is not None:
            self._client.close()
        self._client, self._sftp = None, None

    def connect(self) -> None:
        """Opens the connection now (otherwise the first command does)."""
        self._transport()

    def close(self) -> None:
        with self._lock:
            self._drop_locked()

    def _open_channel(self) -> paramiko.Channel:
        """A fresh channel; a stale connection is re-established once, before anything ran."""
        try:
            return self._transport().open_session(timeout=self.connect_timeout)
        except (paramiko.SSHException, OSError, EOFError):
            with self._lock:
                self._drop_locked()
            try:
                return self._transport().open_session(timeout=self.connect_timeout)
            except (paramiko.SSHException, OSError, EOFError) as e:
                raise SSHError(self.node.name, f"cannot open a session: {e}") from None

    # -- commands ---------------------------------------------------------------------
    def exec(self, command: str, timeout: float = 60, check: bool = True,
             env: dict | None = None) -> ExecResult:
        """Runs `command` with sh on the node. A command still running after `timeout`
        seconds is killed on the node and SSHError raised; `check` raises on non-zero exit."""
        wrapped = _env_prefix(env) + command
        if timeout is not None:
            # killed on the node too, not just abandoned by us
            wrapped = f"timeout -k 2 {timeout:g} sh -c {shlex.quote(wrapped)}"
        channel = self._open_channel()
        started = time.monotonic()
        try:
            channel.settimeout(timeout + 5 if timeout is not None else None)
            channel.exec_command(wrapped)
            result = self._collect(channel, command, timeout)
        except socket.timeout:
            raise SSHError(self.node.name, f"no answer within {timeout:g} s "
                           "(connection lost?)", command) from None
        except (paramiko.SSHException, OSError, EOFError) as e:
            with self._lock:
                self._drop_locked()
            raise SSHError(self.node.name, f"connection failed during command: {e}",
                           command) from None
        finally:
            channel.close()
        # 124 may also be the command's own status (e.g. an inner `timeout`): only a run
        # that lasted the whole timeout was stopped by ours
        if timeout is not None and result.exit_code == TIMEOUT_EXIT \
                and time.monotonic() - started >= timeout:
            raise SSHError(self.node.name, f"timed out after {timeout:g} s", command, result)
        if check and result.exit_code != 0:
            detail = (result.stderr.strip() or result.stdout.strip())[-600:]
            raise SSHError(self.node.name, f"exit code {result.exit_code}: {detail}",
                           command, result)
        return result

    def _collect(self, channel: paramiko.Channel, command: str,
                 timeout: float | None) -> ExecResult:
        out, err = bytearray(), bytearray()
        deadline = None if timeout is None else time.monotonic() + timeout + 5
        while True:
            drained = False
            while channel.recv_ready():
                out += channel.recv(65536)
                drained = True
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(65536)
                drained = True
            if channel.exit_status_ready() and not channel.recv_ready() \
                    and not channel.recv_stderr_ready():
                break
            if deadline is not None and time.monotonic() > deadline:
                raise SSHError(self.node.name, f"no exit status within {timeout:g} s", command)
            if not drained:
                time.sleep(0.01)
        return ExecResult(channel.recv_exit_status(), out.decode(errors="replace"),
                          err.decode(errors="replace"))

    # -- files ------------------------------------------------------------------------
    def _sftp_client(self) -> paramiko.SFTPClient:
        self._transport()
        with self._lock:
            if self._sftp is None:
                self._sftp = self._client.open_sftp()
                # a lost link must end a transfer too, not leave it waiting on TCP
                self._sftp.get_channel().settimeout(SFTP_TIMEOUT_SECONDS)
            return self._sftp

    @contextmanager
    def _sftp_errors(self, what: str) -> Iterator[None]:
        """SSHError naming `what`; a timed-out or broken session is dropped, not reused."""
        try:
            yield
        except (OSError, paramiko.SSHException) as e:
            if isinstance(e, (socket.timeout, paramiko.SSHException)):
                with self._lock:
                    self._drop_locked()
            raise SSHError(self.node.name, f"{what} failed: {e}") from None

    def upload(self, local_path, remote_path) -> None:
        with self._sftp_errors(f"upload {local_path} -> {remote_path}"):
            self._sftp_client().put(str(local_path), str(remote_path))

    def download(self, remote_path, local_path) -> None:
        Path(local_path).parent.mkdir(parents=True, exist_ok=True)
        with self._sftp_errors(f"download {remote_path} -> {local_path}"):
            self._sftp_client().get(str(remote_path), str(local_path))

    def write_file(self, remote_path: str, content: str) -> None:
        """Writes a small text file atomically (temp + rename) on the node."""
        tmp = f"{remote_path}.tmp"
        with self._sftp_errors(f"writing {remote_path}"):
            sftp = self._sftp_client()
            with sftp.open(tmp, "w") as f:
                f.write(content.encode())
            sftp.posix_rename(tmp, remote_path)

    def read_file(self, remote_path: str) -> str:
        with self._sftp_errors(f"reading {remote_path}"):
            with self._sftp_client().open(remote_path, "r") as f:
                return f.read().decode(errors="replace")

    # -- daemons ----------------------------------------------------------------------
    def start_daemon(self, command: str, pid_file: str, log_file: str,
                     env: dict | None = None) -> int:
        """Starts `command` detached (own session, survives the SSH connection), its
        output appended to `log_file`, its pid in `pid_file`. Returns the pid."""
        if self.pid_alive(pid_file):
            raise SSHError(self.node.name, f"a daemon is already running with pid file "
                           f"{pid_file}", command)
        pf = shlex.quote(pid_file)
        # the start time beside the pid tells our process from a later one reusing its pid
        inner = (f"echo $$ > {pf}; {_start_time('$$')} > {pf}.start; "
                 f"{_env_prefix(env)}exec {command}")
        script = (f"mkdir -p {shlex.quote(str(Path(pid_file).parent))} "
                  f"{shlex.quote(str(Path(log_file).parent))} && rm -f {pf} {pf}.start && "
                  f"(setsid nohup sh -c {shlex.quote(inner)} >> {shlex.quote(log_file)} 2>&1 "
                  f"< /dev/null &) && "
                  f"for i in $(seq 100); do [ -s {shlex.quote(pid_file)} ] && break; sleep 0.05; "
                  f"done; cat {shlex.quote(pid_file)}")
        result = self.exec(script, timeout=30)
        try:
            return int(result.stdout.strip())
        except ValueError:
            raise SSHError(self.node.name, f"daemon did not write its pid file {pid_file}",
                           command, result) from None

    def signal(self, pid_file: str, sig: str, group: bool = False) -> bool:
        """Sends `sig` (e.g. "TERM", "KILL", "STOP", "CONT") to the pid in `pid_file`,
        or with `group` to its whole process group (a daemon that forks workers, such
        as PostgreSQL: start_daemon makes it a group leader). False if there is no pid
        file or no such process."""
        target = "-- -$pid" if group else "$pid"
        result = self.exec(f"{_our_pid(pid_file)} && kill -s {shlex.quote(sig)} {target} "
                           "2>/dev/null", timeout=15, check=False)
        return result.exit_code == 0

    def pid_alive(self, pid_file: str) -> bool:
        """Whether the process in `pid_file` exists (a stopped process counts, a zombie not)."""
        return self.process_state(pid_file) not in (None, "Z", "X")

    def process_state(self, pid_file: str) -> str | None:
        """The process's state letter from /proc (R, S, D, T = stopped, Z, ...), or None."""
        result = self.exec(f"{_our_pid(pid_file)} && awk '/^State:/ {{print $2}}' "
                           "/proc/$pid/status 2>/dev/null", timeout=15, check=False)
        state = result.stdout.strip()
        return state or None

    def exited_pid(self, pid_file: str) -> int | None:
        """The pid in `pid_file` if that process has exited (gone, or a zombie with the
        recorded start time); None if it runs, or if its pid now belongs to another."""
        pf = shlex.quote(pid_file)
        ours_dead = (f"[ \"$(awk '/^State:/ {{print $2}}' /proc/$pid/status)\" = Z ] && "
                     f"{{ [ ! -s {pf}.start ] || [ \"$({_start_time('$pid')})\" = "
                     f"\"$(cat {pf}.start)\" ]; }}")
        result = self.exec(f"pid=$(cat {pf} 2>/dev/null) && [ -n \"$pid\" ] && "
                           f"{{ [ ! -e /proc/$pid ] || {{ {ours_dead}; }}; }} && echo $pid",
                           timeout=15, check=False)
        out = result.stdout.strip()
        return int(out) if result.exit_code == 0 and out.isdigit() else None

    def wait_exit(self, pid_file: str, timeout: float) -> bool:
        """Polls until the process in `pid_file` is gone; True if it exited in time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.pid_alive(pid_file):
                return True
            time.sleep(0.2)
        return not self.pid_alive(pid_file)


class SSHPool:
    """One NodeSession per inventory node, opened on first use."""

    def __init__(self, inventory: Inventory, insecure_host_keys: bool = False,
                 connect_timeout: float = 10) -> None:
        self.inventory = inventory
        self._sessions = {n.name: NodeSession(n, insecure_host_keys, connect_timeout)
                          for n in inventory.nodes}

    def __getitem__(self, node_name: str) -> NodeSession:
        try:
            return self._sessions[node_name]
        except KeyError:
            raise KeyError(f"cluster {self.inventory.name} has no node {node_name!r}") from None

    def __iter__(self):
        return iter(self._sessions.values())

    def run_on(self, nodes: Iterable[str], fn: Callable[[NodeSession], T]) -> dict[str, T]:
        """Runs fn(session) on each node in parallel. If any fail, raises SSHError naming
        every failed node (after all have finished, so none is left half-done)."""
        nodes = list(nodes)
        if not nodes:
            return {}
        with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
            futures = {name: pool.submit(fn, self[name]) for name in nodes}
        results, errors = {}, {}
        for name, future in futures.items():
            try:
                results[name] = future.result()
            except Exception as e:  # noqa: BLE001 - reported together below
                errors[name] = e
        if errors:
            first = next(iter(errors.values()))
            if len(errors) == 1:
                raise first
            text = "; ".join(f"{e}" for e in errors.values())
            raise SSHError(",".join(errors), f"failed on {len(errors)} nodes: {text}") from first
        return results

    def close(self) -> None:
        for session in self._sessions.values():
            session.close()


def _start_time(pid: str) -> str:
    """Shell printing a process's start time (field 22 of /proc/<pid>/stat; the command
    name before it may contain spaces, so count from its closing parenthesis)."""
    return f"awk '{{sub(/.*\\) /, \"\"); print $20}}' /proc/{pid}/stat"


def _our_pid(pid_file: str) -> str:
    """Shell setting $pid to the process in pid_file, failing if there is none or if
    the pid now belongs to another process (start time differs from the one recorded), or
    the process has exited and only its zombie is left."""
    pf = shlex.quote(pid_file)
    same_process = f"[ \"$({_start_time('$pid')})\" = \"$(cat {pf}.start)\" ]"
    not_zombie = "[ \"$(awk '/^State:/ {print $2}' /proc/$pid/status)\" != Z ]"
    return (f"pid=$(cat {pf} 2>/dev/null) && [ -n \"$pid\" ] && [ -r /proc/$pid/stat ] && "
            f"{not_zombie} && {{ [ ! -s {pf}.start ] || {same_process}; }}")


def _env_prefix(env: dict | None) -> str:
    # sshd usually refuses to set client environment variables, so export them inline
    if not env:
        return ""
    return "export " + " ".join(f"{k}={shlex.quote(str(v))}" for k, v in env.items()) + "; "


def _shorten(command: str, limit: int = 300) -> str:
    return command if len(command) <= limit else command[:limit] + " ..."
