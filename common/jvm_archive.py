"""Class-data-sharing (CDS) archives: a JVM's loaded classes dumped once, then
mapped by every later JVM with the same Java and class path instead of being
read, parsed and verified again. A Kafka broker started in 1.2 s on 1.5 CPU-s
with one, against 2.5 s on 3.0 CPU-s without (docs/benchmarks.md, "Cluster"); the Spark
driver's start-up CPU fell by about 40 %.

An archive is an optimisation only: a JVM given one that does not match its
Java or class path runs without it (its warnings silenced), and a failed
build leaves no archive behind, so nothing ever depends on one existing.
Standard library only: the Kafka install runs before the venv exists.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

# the JVM reports an archive it cannot use on stdout; that is not our output
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# LOGTRIAL_CLASS_ARCHIVES=off: start every JVM without one (benchmarks' reference)
SWITCH = "LOGTRIAL_CLASS_ARCHIVES"


def enabled() -> bool:
    return os.environ.get(SWITCH, "on") != "off"


@functools.lru_cache(maxsize=1)
def _java_version() -> str:
    try:
        return subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired):
        return "no java here"   # an archive is then never found, nor built


def java_key(*parts: str) -> str:
    """A short id of this machine's `java` and whatever else the archive depends on."""
    return hashlib.sha256("\n".join([_java_version(), *parts]).encode()).hexdigest()[:16]


def use_options(archive: Path) -> str:
    """JVM options that map `archive`, or "" if there is none (a missing
    archive file would also switch off the JDK's own base archive)."""
    return f"-XX:SharedArchiveFile={archive} {QUIET}" if enabled() and archive.is_file() else ""


def use_options_shell(archive: str) -> str:
    """The same, decided where the command runs (a node's shell)."""
    if not enabled():
        return ""
    quoted = shlex.quote(archive)
    return f"$(test -r {quoted} && echo -XX:SharedArchiveFile={quoted} {QUIET})"


def dump_option(partial: Path) -> str:
    """Makes a JVM write the classes it loaded to `partial` when it exits normally."""
    return f"-XX:ArchiveClassesAtExit={partial} {QUIET}"


def partial_path(archive: Path) -> Path:
    """Where a build dumps first; only a complete dump is renamed to `archive`."""
    return archive.with_name(f"{archive.name}.{os.getpid()}.partial")


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether process `pid` (not our child) ended within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.2)
    return False


def ensure(archive: Path, build: Callable[[Path], str | None], name: str, say=print) -> Path | None:
    """`archive`, built first if missing: `build(partial)` makes a JVM dump to
    `partial` and returns what went wrong, or None. One build at a time (file
    lock); a published archive replaces its stale siblings (another Java's,
    other jars'). None if it cannot be built: the JVMs then start without one."""
    if archive.is_file():
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(archive.parent / ".archive-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if archive.is_file():
            return archive
        say(f"{name}: building the class archive (once; its JVMs then start faster)")
        partial = partial_path(archive)
        problem = build(partial)
        if problem is None and publish(partial, archive):
            stem = archive.name.rsplit("-", 1)[0]
            for stale in archive.parent.glob(f"{stem}-*.jsa"):
                if stale != archive:
                    stale.unlink(missing_ok=True)
            return archive
        partial.unlink(missing_ok=True)
        say(f"{name}: no class archive ({problem or 'the JVM wrote none'}); its JVMs start without one")
        return None


def publish(partial: Path, archive: Path) -> bool:
    """Renames a finished dump into place (atomic: a JVM never maps half a file)."""
    if not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        return False
    os.replace(partial, archive)
    return True
