"""The SSH layer against a node's real sshd (the shared cluster's n1)."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import time

import pytest

from clusters.nodes.inventory import Inventory
from clusters.nodes.ssh import HostKeyError, NodeSession, SSHError, SSHPool

pytestmark = pytest.mark.cluster


@pytest.fixture
def n1(cluster) -> NodeSession:
    return cluster.ssh["n1"]


@pytest.fixture
def scratch(n1) -> str:
    path = f"{n1.node.home}/ssh-test"
    n1.exec(f"rm -rf {path} && mkdir -p {path}")
    yield path
    n1.exec(f"rm -rf {path}")


def test_exec_returns_exit_code_stdout_stderr_and_runs_in_the_node_namespace(n1):
    result = n1.exec("echo out; echo err >&2; hostname -I; exit 3", check=False)
    assert result.exit_code == 3
    assert result.stdout.split()[0] == "out" and n1.node.host in result.stdout.split()
    assert result.stderr.strip() == "err"


def test_failing_command_raises_naming_node_and_command(n1):
    with pytest.raises(SSHError) as caught:
        n1.exec("ls /no/such/dir")
    assert caught.value.node == "n1" and caught.value.command == "ls /no/such/dir"
    assert "node n1" in str(caught.value) and "/no/such/dir" in str(caught.value)
    assert caught.value.result.exit_code != 0


def test_env_is_passed(n1):
    assert n1.exec("echo \"$A-$B\"", env={"A": "x y", "B": "$HOME"}).stdout.strip() == "x y-$HOME"


def test_timeout_raises_and_kills_the_command_on_the_node(n1, scratch):
    marker = f"{scratch}/slept"
    with pytest.raises(SSHError, match="timed out"):
        n1.exec(f"sleep 30; touch {marker}", timeout=1)
    time.sleep(3)  # the node-side `timeout -k 2` has killed it by now
    assert n1.exec(f"test -e {marker}", check=False).exit_code == 1
    assert n1.exec("echo still-usable").stdout.strip() == "still-usable"


def test_upload_download_round_trip(n1, scratch, tmp_path):
    data = os.urandom(300_000)
    src, back = tmp_path / "src.bin", tmp_path / "back" / "copy.bin"
    src.write_bytes(data)
    n1.upload(src, f"{scratch}/remote.bin")
    digest = n1.exec(f"sha256sum {scratch}/remote.bin").stdout.split()[0]
    assert digest == hashlib.sha256(data).hexdigest()
    n1.download(f"{scratch}/remote.bin", back)
    assert back.read_bytes() == data
    with pytest.raises(SSHError, match="node n1.*download"):
        n1.download(f"{scratch}/missing", tmp_path / "x")


def test_daemon_pid_file_and_signals(n1, scratch):
    pid_file, log_file = f"{scratch}/d.pid", f"{scratch}/logs/d.log"
    pid = n1.start_daemon("sh -c 'echo started; echo $LT_VAR; exec sleep 300'", pid_file,
                          log_file, env={"LT_VAR": "from-env"})
    assert int(n1.exec(f"cat {pid_file}").stdout) == pid
    assert n1.pid_alive(pid_file)
    with pytest.raises(SSHError, match="already running"):
        n1.start_daemon("sleep 300", pid_file, log_file)
    assert n1.signal(pid_file, "STOP") and n1.process_state(pid_file) == "T"
    assert n1.signal(pid_file, "CONT") and n1.process_state(pid_file) != "T"
    # it outlives the SSH connection that started it
    n1.close()
    assert n1.pid_alive(pid_file)
    assert n1.signal(pid_file, "TERM")
    assert n1.wait_exit(pid_file, 10)
    assert not n1.signal(pid_file, "TERM")  # nothing left to signal
    assert n1.exec(f"cat {log_file}").stdout.split() == ["started", "from-env"]


def test_a_reused_pid_is_not_signalled(n1, scratch):
    """A pid file whose process died must not reach whichever process reuses the pid."""
    old, other = f"{scratch}/old.pid", f"{scratch}/other.pid"
    n1.start_daemon("sleep 300", old, f"{scratch}/old.log")
    assert n1.signal(old, "KILL") and n1.wait_exit(old, 10)
    other_pid = n1.start_daemon("sleep 300", other, f"{scratch}/other.log")
    n1.exec(f"echo {other_pid} > {old}")  # as if the pid had been reused
    assert not n1.signal(old, "KILL")
    assert not n1.pid_alive(old)
    assert n1.pid_alive(other)
    assert n1.signal(other, "KILL")


def test_reconnects_after_the_connection_drops(n1):
    n1.exec("true")
    n1._client.get_transport().close()  # as a partition or sshd restart would
    assert n1.exec("echo back").stdout.strip() == "back"


def test_run_on_runs_everywhere_and_names_failed_nodes(cluster):
    hosts = cluster.ssh.run_on(cluster.nodes, lambda s: s.exec("hostname -I").stdout.split()[0])
    assert hosts == {n.name: n.host for n in cluster.inventory.nodes}
    with pytest.raises(SSHError) as caught:
        cluster.ssh.run_on(["n1", "n2"], lambda s: s.exec("false"))
    assert "n1" in str(caught.value) and "n2" in str(caught.value)


def session_for(cluster, **changes) -> NodeSession:
    return NodeSession(dataclasses.replace(cluster.inventory.node("n1"), **changes),
                       connect_timeout=10)


def test_wrong_host_key_is_rejected(cluster):
    wrong = "SHA256:" + "B" * 43
    with pytest.raises(HostKeyError) as caught:
        session_for(cluster, host_key=wrong).exec("true")
    assert caught.value.node == "n1" and wrong in str(caught.value)


def test_unknown_host_key_needs_insecure_flag(cluster):
    with pytest.raises(HostKeyError, match="insecure-host-keys"):
        session_for(cluster, host_key=None).exec("true")
    node = dataclasses.replace(cluster.inventory.node("n1"), host_key=None)
    pool = SSHPool(Inventory("x", (node,)), insecure_host_keys=True)
    assert pool["n1"].exec("echo ok").stdout.strip() == "ok"
    pool.close()


def test_unreachable_host_fails_fast_naming_the_node(cluster):
    net = cluster.inventory.node("n1").host.rsplit(".", 1)[0]
    session = session_for(cluster, name="ghost", host=f"{net}.250")  # nobody has this address
    started = time.monotonic()
    with pytest.raises(SSHError) as caught:
        session.exec("true")
    assert caught.value.node == "ghost" and "cannot reach" in str(caught.value)
    assert time.monotonic() - started < 15  # connect_timeout is 10 s; slack for a loaded box


def test_wrong_client_key_is_rejected(cluster, tmp_path):
    key = tmp_path / "other_key"
    os.system(f"ssh-keygen -q -t ed25519 -N '' -f {key}")
    with pytest.raises(SSHError, match="node n1: authentication"):
        session_for(cluster, key_file=str(key)).exec("true")
