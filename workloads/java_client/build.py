"""The Java client's classes: compiled once per (source, Kafka version) into the jar
cache, against that release's kafka-clients jar (the broker distribution holds it:
clusters/kafka/install.py fetches it with the broker's jars). `make install` builds
the default version's (`python -m workloads.java_client.build`); any other is built
on first use. A second call finds the classes and returns at once."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from clusters.kafka.install import ensure_installed
from clusters.kafka.versions import KafkaRelease, cache_root, resolve

SOURCES = Path(__file__).resolve().parent / "src"
MAIN_CLASS = "logtrial.Server"
# what kafka-clients needs at run time beside itself (compression codecs, logging API)
RUNTIME_JARS = ("lz4-java-", "snappy-java-", "zstd-jni-", "slf4j-api-")


class JavaClientBuildError(RuntimeError):
    pass


def _source_files() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def source_digest() -> str:
    digest = hashlib.sha256()
    for path in _source_files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def clients_jar(release: KafkaRelease) -> Path:
    """The release's kafka-clients jar, fetched with the broker's jars if not yet here."""
    jar = release.libs_dir / f"kafka-clients-{release.version}.jar"
    if not jar.exists():
        ensure_installed(release, say=lambda line: None)
    if not jar.exists():
        raise JavaClientBuildError(f"no {jar.name} in {release.libs_dir}")
    return jar


def classes_dir(release: KafkaRelease) -> Path:
    return cache_root() / "java-client" / f"{source_digest()}-kafka-{release.version}"


def classpath(release: KafkaRelease) -> str:
    """The compiled server and the release's client jars, compiling first if needed."""
    built = build(release)
    libs = sorted(p for p in release.libs_dir.glob("*.jar") if p.name.startswith(RUNTIME_JARS))
    return os.pathsep.join([str(built), str(clients_jar(release)), *map(str, libs)])


def install_state() -> tuple[bool, str]:
    """(built, what doctor says) for the default Kafka's kafka-clients; other versions
    compile on first use."""
    dest = classes_dir(resolve(None))
    return ((True, str(dest)) if (dest / "logtrial" / "Server.class").exists()
            else (False, "not compiled: compiled on first use, or `make clients`"))


def build(release: KafkaRelease) -> Path:
    """Compiles the server for `release` unless its classes are cached; their directory."""
    dest = classes_dir(release)
    if (dest / "logtrial" / "Server.class").exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=dest.parent)  # renamed into place: never half-built
    try:
        result = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", tmp, "-cp",
                                 str(clients_jar(release)), *map(str, _source_files())],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise JavaClientBuildError(f"javac failed for Kafka {release.version}:\n{result.stderr}")
        os.rename(tmp, dest)
    except OSError:
        if not dest.exists():  # else another process won the race: its classes are the same
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


if __name__ == "__main__":
    version = sys.argv[1] if len(sys.argv) > 1 else None
    print(f"java client: {build(resolve(version))}")
