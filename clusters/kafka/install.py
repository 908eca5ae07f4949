"""Assembles one Kafka version's jars from Maven Central into the cache, once.

The version's pom template (clusters/kafka/pom.xml for 4.x, pom-3.xml for 3.x) is
rendered for the version and `mvn dependency:copy-dependencies` fills
<cache>/kafka-<version>/libs. `.complete` holds the rendered pom's sha256: a cache is
used only if it was assembled from exactly that pom, and editing a template
re-assembles it. Concurrent callers (test workers, several nodes) take a file lock.

Usage: python3 -m clusters.kafka.install [VERSION]   (scripts/install-kafka.sh)
Standard library only: it runs before the venv exists.
"""
from __future__ import annotations

import fcntl
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

from clusters.kafka.versions import DEFAULT_VERSION, KafkaRelease, KafkaVersionError, resolve

MARKER = ".complete"
VERSION_PROPERTY = re.compile(r"<kafka\.version>[^<]*</kafka\.version>")


class KafkaInstallError(RuntimeError):
    """Maven could not assemble a version's jars; names the version."""


def render_pom(release: KafkaRelease) -> str:
    template = release.pom_template.read_text(encoding="utf-8")
    return VERSION_PROPERTY.sub(f"<kafka.version>{release.version}</kafka.version>", template, count=1)


def is_installed(release: KafkaRelease) -> bool:
    marker = release.cache_dir / MARKER
    want = hashlib.sha256(render_pom(release).encode()).hexdigest()
    return marker.exists() and marker.read_text().strip() == want and \
        (release.libs_dir / release.broker_jar).exists()


def ensure_installed(release: KafkaRelease, say=print) -> Path:
    """The version's libs dir, assembled first if missing or stale."""
    if is_installed(release):
        return release.libs_dir
    release.cache_dir.mkdir(parents=True, exist_ok=True)
    with open(release.cache_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_installed(release):  # another process may have done it meanwhile
            _assemble(release, say)
    return release.libs_dir


def _assemble(release: KafkaRelease, say) -> None:
    cache, pom_text = release.cache_dir, render_pom(release)
    say(f"kafka {release.version}: assembling from Maven Central into {cache}")
    pom = cache / "pom.xml"
    pom.write_text(pom_text, encoding="utf-8")
    # assemble beside the cache and swap it in, so brokers already running keep their jars
    fresh, old = cache / "libs.new", cache / "libs.old"
    shutil.rmtree(fresh, ignore_errors=True)
    result = subprocess.run(["mvn", "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
                             f"-DoutputDirectory={fresh}", "-DincludeScope=runtime"],
                            capture_output=True, text=True)
    if result.returncode != 0 or not (fresh / release.broker_jar).exists():
        output = (result.stdout + result.stderr).strip()[-1500:]
        raise KafkaInstallError(f"cannot assemble Kafka {release.version} from Maven Central "
                                f"(mvn exit {result.returncode}):\n{output}")
    shutil.rmtree(old, ignore_errors=True)
    if release.libs_dir.exists():
        release.libs_dir.rename(old)
    fresh.rename(release.libs_dir)
    shutil.rmtree(old, ignore_errors=True)
    (cache / MARKER).write_text(hashlib.sha256(pom_text.encode()).hexdigest() + "\n")
    say(f"kafka {release.version}: ready")


def main(argv: list[str]) -> int:
    version = argv[0] if argv else DEFAULT_VERSION
    try:
        release = resolve(version)
        if is_installed(release):
            print(f"kafka {version}: cached in {release.cache_dir}")
            return 0
        ensure_installed(release)
    except (KafkaVersionError, KafkaInstallError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
