"""`logtrial doctor`: what logtrial needs on the control node, and what is missing."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import click

from checkers.spark.archive import archive_file as spark_archive
from common import exit_codes
from clusters.nodes.faketime import LIBRARY as FAKETIME_LIB
from clusters.nodes.faketime import faketime_env
from clusters.kafka.archive import archive_file as kafka_archive
from clusters.kafka.config import DEFAULT_JVM_OPTS, KAFKA_VERSION, kafka_cache_dir
from clusters.kafka.install import is_installed
from clusters.kafka.versions import KRAFT, RELEASE_PATTERN, KafkaRelease, cache_root, resolve, version_tuple
from clusters.nodes.inventory import InventoryError
from clusters.systems import KINDS
from harness.commands.cluster import fail, insecure_option, inventory_option
from harness.commands.doctor_check import Check
from harness.commands.doctor_nodes import check_nodes
from workloads.client_kinds import CLIENT_KINDS

# command -> Debian package that provides it
SYSTEM_TOOLS = {
    "ip": "iproute2", "iptables": "iptables", "sshd": "openssh-server",
    "ssh-keygen": "openssh-client", "timeout": "coreutils", "setsid": "util-linux",
    "java": "openjdk-17-jre-headless", "faketime": "faketime",
}
# javac: only --client java needs it (its server is compiled on first use)
OPTIONAL_TOOLS = {"tc": "iproute2", "mvn": "maven", "chromium": "chromium", "javac": "openjdk-17-jdk-headless"}
PYTHON_MODULES = ["paramiko", "confluent_kafka", "yaml", "click", "pyspark", "networkx",
                  "matplotlib", "pandas", "pyarrow", "scipy"]


def find_tool(name: str) -> str | None:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def check_tools() -> list[Check]:
    checks = []
    for tools, required in ((SYSTEM_TOOLS, True), (OPTIONAL_TOOLS, False)):
        for tool, package in tools.items():
            path = find_tool(tool)
            checks.append(Check(tool, bool(path), path or f"missing (apt install {package})",
                                required))
    return checks


def check_java() -> Check:
    if not find_tool("java"):
        return Check("java >= 17", False, "java missing")
    out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', out)
    major = int(match.group(1)) if match else 0
    return Check("java >= 17", major >= 17, out.splitlines()[0] if out else "no output")


def check_faketime_jvm() -> Check:
    """The brokers run under libfaketime: a JVM must start under it and see the offset."""
    if not os.path.exists(FAKETIME_LIB):
        return Check("libfaketime", False, f"{FAKETIME_LIB} missing (apt install libfaketime)")
    with tempfile.NamedTemporaryFile("w", suffix=".rc") as rc:
        rc.write("+0\n")
        rc.flush()
        env = {**os.environ, **faketime_env(rc.name)}
        try:
            proc = subprocess.run(["java", "-Xmx32m", "-version"], env=env, capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return Check("JVM under libfaketime", False, str(e))
    return Check("JVM under libfaketime", proc.returncode == 0,
                 "starts" if proc.returncode == 0 else proc.stderr.strip()[-200:])


def check_kafka_cache() -> Check:
    libs = kafka_cache_dir() / "libs"
    jar = libs / f"kafka_2.13-{KAFKA_VERSION}.jar"
    complete = (kafka_cache_dir() / ".complete").exists()
    ok = jar.exists() and complete
    return Check(f"kafka {KAFKA_VERSION} jars", ok,
                 str(libs) if ok else f"{libs} incomplete (run `make kafka`)")


def check_other_versions() -> Check:
    """Other Kafka versions are fetched on first use; say which are already here."""
    versions = [d.name.removeprefix("kafka-") for d in cache_root().glob("kafka-*") if d.is_dir()]
    cached = [v for v in sorted(filter(RELEASE_PATTERN.match, versions), key=version_tuple)
              if is_installed(KafkaRelease(v, KRAFT))]  # the jars do not depend on the mode
    return Check("kafka versions cached", True, ", ".join(cached) or "none", required=False)


def check_system_builds() -> list[Check]:
    """What the other systems under test need built (tansu: on first use of --db tansu,
    or `make tansu`); runs of the default system need none of it."""
    return [Check(f"{kind.name} build", *kind.install_state(), required=False)
            for kind in KINDS.values() if kind.install_state is not None]


def check_client_builds() -> list[Check]:
    """What each client under test builds or installs once (librdkafka comes with the venv)."""
    return [Check(f"client {kind.name}", *kind.install_state(), required=False)
            for kind in CLIENT_KINDS.values() if kind.install_state is not None]


# the kafkajs client's toolchain: Node runs its program, npm installs its modules
NODE_TOOLS = {"node": "nodejs", "npm": "npm"}


def check_node() -> list[Check]:
    """Node and npm with their versions: only --client kafkajs needs them."""
    checks = []
    for tool, package in NODE_TOOLS.items():
        path = find_tool(tool)
        if path is None:
            checks.append(Check(f"{tool} (kafkajs)", False, f"missing (apt install {package})", required=False))
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        checks.append(Check(f"{tool} (kafkajs)", out.returncode == 0, f"{out.stdout.strip()} ({path})",
                            required=False))
    return checks


def check_class_archives() -> list[Check]:
    """The JVMs' class-data-sharing archives: optional, they only make start-up cheaper."""
    found = [("class archive: brokers", kafka_archive(resolve(), DEFAULT_JVM_OPTS))]
    if importlib.util.find_spec("pyspark") is not None:
        found.append(("class archive: spark", spark_archive()))
    return [Check(what, path.is_file(), str(path) if path.is_file() else "none (make archives)",
                  required=False) for what, path in found]


def check_python() -> list[Check]:
    return [Check(f"python: {m}", importlib.util.find_spec(m) is not None,
                  "importable" if importlib.util.find_spec(m) else "missing (make venv)")
            for m in PYTHON_MODULES]


def check_root() -> Check:
    root = os.geteuid() == 0
    return Check("root", root, "yes" if root else
                 "local clusters need root (network namespaces, sshd, iptables)")


def run_checks() -> list[Check]:
    return [check_root(), *check_tools(), check_java(), check_faketime_jvm(),
            check_kafka_cache(), check_other_versions(), *check_system_builds(), *check_client_builds(), *check_node(), *check_python(), *check_class_archives()]


def print_checks(checks: list[Check], indent: str = "  ") -> list[str]:
    """Prints one line per check; returns what is required and missing."""
    for c in checks:
        mark = "ok  " if c.ok else ("MISS" if c.required else "opt ")
        click.echo(f"{indent}[{mark}] {c.what:26} {c.detail}")
    return [c.what for c in checks if c.required and not c.ok]


@click.command()
@inventory_option
@insecure_option
def doctor(inventory_path: str | None, insecure_host_keys: bool) -> None:
    """Report which system tools, libraries and Python packages are present or missing,
    on the control node and, with --inventory, on every node of that inventory."""
    missing = print_checks(run_checks())
    if inventory_path is not None:
        try:
            nodes = check_nodes(inventory_path, insecure_host_keys)
        except InventoryError as e:
            fail(str(e), exit_codes.BAD_INPUT)
        for node, checks in nodes.items():
            click.echo(f"node {node}:")
            missing += [f"{what} on {node}" for what in print_checks(checks, "    ")]
    if missing:
        click.echo(f"missing: {', '.join(missing)} (`make install` installs them on the control "
                   f"node; a node's own packages are for its owner to install)", err=True)
        sys.exit(exit_codes.HARNESS_ERROR)
    click.echo("everything logtrial needs is here")
