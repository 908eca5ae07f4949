"""logtrial installed as a user installs it (a wheel, not an editable checkout) still
runs: what it reads beside its modules (the Java client's sources, Kafka's pom and
log4j templates, the Spark properties) is package data, or this run fails.

The wheel goes into a fresh venv, without its dependencies: they come from the
project's venv through a path file, so the test does not download pyspark again,
and the project's editable finder stays out (a path file's paths are not site
directories, so their own .pth files are never read)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the installed logtrial only: no PYTHONPATH leading back to the checkout
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def build_wheel(out: Path) -> Path:
    """The checkout as it is, built from a copy: setuptools builds in the source tree,
    and its build/ would be left in the checkout."""
    source = out.parent / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "store", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = out.glob("logtrial-*.whl")
    return wheel


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A venv whose only logtrial is the wheel's; its python. The dependencies' path
    file comes after the install: through it pip would see the checkout's editable
    logtrial as installed already."""
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                                str(wheel)], capture_output=True, text=True, timeout=300, env=ENV)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.mark.cluster
@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_runs_the_java_client(healed_cluster, tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    python = fresh_venv(tmp_path / "venv", wheel)
    where = subprocess.run([str(python), "-c", "import workloads.java_client.build as b; print(b.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60, env=ENV)
    assert where.stdout.startswith(str(tmp_path / "venv")), where.stdout + where.stderr  # not the checkout
    store = tmp_path / "store"
    run = subprocess.run([str(tmp_path / "venv" / "bin" / "logtrial"), "test", "--nodes-file",
                          str(healed_cluster.inventory.path), "--leave-db-running", "--client", "java",
                          "--store", str(store), "--time-limit", "10", "--rate", "10", "--concurrency", "2",
                          "--recovery-time", "0", "--final-time-limit", "30", "--engine", "local", "--no-report"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, env=ENV)
    output = run.stdout + run.stderr
    [record] = [json.loads(p.read_text()) for p in store.glob("*/*/test.json")]
    assert record["status"] == "complete", output
    assert record["versions"]["kafka_clients"], record["versions"]
    events = [json.loads(line) for line in next(store.glob("*/*/history.jsonl")).read_text().splitlines()]
    # an op the Java client completed (at load 60-100 an assign took 23 s, so a send may not
    # have fit in the run: then the verdict is unknown, never invalid)
    assert any(e["type"] == "ok" for e in events), output
    assert record["valid"] is True or (record["valid"] == "unknown"
                                       and not any(e["type"] == "ok" and e["f"] == "send" for e in events)), output
