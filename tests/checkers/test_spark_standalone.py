"""The same check through a real standalone Spark master + worker on
127.0.0.1 (`--spark-master spark://...`) gives the same results as local
mode. Master and worker are started from pyspark's spark-class and stopped
by their pids."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest

from checkers.api import check_history
from tests.checkers.test_queue_anomalies import planted_history

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited {proc.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"port {port} not open after {timeout}s: {log.read_text()[-2000:]}")


def _start(args: list[str], log: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([str(SPARK_CLASS), *args], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    """By pid (its own process group, started above), never by name."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    work = tmp_path_factory.mktemp("spark-standalone")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_HOME": str(SPARK_CLASS.parent.parent),
           "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(work / "worker"),
           "SPARK_LOG_DIR": str(work)}
    port, worker_port = _free_port(), _free_port()
    master = _start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                     "--webui-port", str(_free_port())], work / "master.log", env)
    worker = None
    try:
        _wait_for_port(port, master, work / "master.log")
        worker = _start(["org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                         "--host", "127.0.0.1", "--port", str(worker_port), "--webui-port", str(_free_port()),
                         "--cores", "1", "--memory", "1g"], work / "worker.log", env)
        _wait_for_port(worker_port, worker, work / "worker.log")
        yield f"spark://127.0.0.1:{port}", env
    finally:
        for proc in (worker, master):
            if proc is not None:
                _stop(proc)


def _comparable(results: dict) -> dict:
    return {k: results[k] for k in ("valid", "anomaly_types", "bad_anomaly_types", "anomalies", "series")}


def test_standalone_cluster_gives_the_same_results_as_local(spark, standalone, tmp_path):
    master, env = standalone
    history = planted_history().write(tmp_path / "history.jsonl")
    local = check_history(history, out_dir=tmp_path / "local")
    # a separate driver process: the test session's own SparkSession stays local
    run = subprocess.run([sys.executable, "-m", "harness.cli", "check", str(history), "--out",
                          str(tmp_path / "remote"), "--spark-master", master],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 1, run.stderr[-3000:]
    remote = json.loads((tmp_path / "remote" / "results.json").read_text())
    assert remote["checker"]["spark_master"] == master
    assert _comparable(remote) == _comparable(local)
