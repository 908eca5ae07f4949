"""tansu, built once from crates.io into the cache, and its PostgreSQL schema.

`cargo install tansu --version 0.6.0 --features postgres --locked`, with a light
release profile (PROFILE: optimisation level 1 and 256 codegen units instead of 3
and 16), into <cache>/tansu-<version>-<key>/bin/tansu, where <key> is a digest of
the features and the profile: a build with other flags goes into a
directory of its own and is never taken for this one. `--locked` is needed:
resolved afresh today, two versions of deadpool meet and `PoolError` does not
convert; the crate's own lock file builds. The build takes EXPECTED_BUILD
(docs/cluster.md), on first use (`--db tansu`) or by `make tansu`; afterwards the
cached binary is reused. Concurrent callers take a file lock, and a build writes
its log to <cache>/build-logs/<build dir>.log and its exit code beside it (.rc).

The PostgreSQL schema is derived from the DDL the built crate ships
(clusters/tansu/schema.py) into <build dir>/postgres-schema.sql.

Usage: python3 -m clusters.tansu.install   (Makefile: `make tansu`)
Standard library only: it runs before the venv exists.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from clusters.kafka.versions import cache_root
from clusters.system_kind import InstallError
from clusters.tansu.schema import SchemaError, postgres_schema, storage_crate_dir

TANSU_VERSION = "0.6.0"
FEATURES = "postgres"
SCHEMA_FILE = "postgres-schema.sql"
POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")  # Debian's postgresql-15
# cargo's release profile made light (CARGO_PROFILE_RELEASE_*; part of the key): the
# default (opt-level 3, 16 codegen units; the crate sets no profile of its own) took
# 29 min on 2 cores, and the tests and faults need a broker that serves, not its best
# speed (docs/benchmarks.md, "tansu"). LTO, debug info and incremental are off in the
# default too: stated so that the key says so
PROFILE = {"CARGO_PROFILE_RELEASE_OPT_LEVEL": "1", "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "256",
           "CARGO_PROFILE_RELEASE_LTO": "false", "CARGO_PROFILE_RELEASE_DEBUG": "0",
           "CARGO_PROFILE_RELEASE_INCREMENTAL": "false"}
EXPECTED_BUILD = "about 29 min on 2 cores"


class TansuInstallError(InstallError):
    """tansu could not be built or its schema derived; says where the log is."""


def build_key() -> str:
    """What the build's flags make of it, as a short digest: features and profile."""
    flags = " ".join([f"--features={FEATURES}", "--locked", *sorted(f"{k}={v}" for k, v in PROFILE.items())])
    return hashlib.sha256(flags.encode()).hexdigest()[:10]


def build_dir(version: str = TANSU_VERSION) -> Path:
    return cache_root() / f"tansu-{version}-{build_key()}"


def binary(version: str = TANSU_VERSION) -> Path:
    return build_dir(version) / "bin" / "tansu"


def schema_path(version: str = TANSU_VERSION) -> Path:
    return build_dir(version) / SCHEMA_FILE


def log_path(version: str = TANSU_VERSION) -> Path:
    return cache_root() / "build-logs" / f"{build_dir(version).name}.log"


def cargo_home() -> Path:
    return Path(os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")))


def is_installed(version: str = TANSU_VERSION) -> bool:
    return os.access(binary(version), os.X_OK) and schema_path(version).is_file()


def ensure_installed(version: str = TANSU_VERSION, say=print) -> Path:
    """The tansu binary, built first if missing, and its schema derived again (a few
    milliseconds; a schema from an older translation is never used)."""
    build_dir(version).mkdir(parents=True, exist_ok=True)
    with open(build_dir(version).parent / f".tansu-{version}.lock", "w") as lock:
        _lock(lock, version, say)
        if not os.access(binary(version), os.X_OK):  # another process may have built it meanwhile
            _build(version, say)
        write_schema(version)
    return binary(version)


def _lock(lock, version: str, say) -> None:
    """The build's lock; if another process holds it (a build under way), says so first."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        if not os.access(binary(version), os.X_OK):
            say(f"tansu {version}: another process is building it ({EXPECTED_BUILD}); waiting; "
                f"log {log_path(version)}")
        fcntl.flock(lock, fcntl.LOCK_EX)


def write_schema(version: str = TANSU_VERSION) -> Path:
    """Derives the PostgreSQL DDL from the sources cargo unpacked for the build."""
    try:
        ddl = postgres_schema(storage_crate_dir(cargo_home(), version))
    except SchemaError as e:
        raise TansuInstallError(str(e)) from None
    tmp = schema_path(version).with_suffix(".tmp")
    tmp.write_text(ddl)
    os.replace(tmp, schema_path(version))
    return schema_path(version)


def _build(version: str, say) -> None:
    cargo = shutil.which("cargo") or str(cargo_home() / "bin" / "cargo")
    if not os.access(cargo, os.X_OK):
        raise TansuInstallError("cargo not found (install Rust: rustup or Debian's cargo) to build tansu")
    log = log_path(version)
    log.parent.mkdir(parents=True, exist_ok=True)
    say(f"tansu {version}: building it once with cargo install ({EXPECTED_BUILD}); log {log}")
    started = time.monotonic()
    with open(log, "w") as out:
        result = subprocess.run(["nice", cargo, "install", "tansu", "--version", version, "--features", FEATURES,
                                 "--locked", "--root", str(build_dir(version))], stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **PROFILE})
    log.with_suffix(".rc").write_text(f"{result.returncode}\n")
    if result.returncode != 0 or not os.access(binary(version), os.X_OK):
        raise TansuInstallError(f"cargo install tansu {version} failed (exit {result.returncode}); see {log}")
    say(f"tansu {version}: built in {time.monotonic() - started:.0f} s")


def main(argv: list[str]) -> int:
    try:
        cached = os.access(binary(), os.X_OK)
        ensure_installed()
        if cached:
            print(f"tansu {TANSU_VERSION}: cached in {build_dir()} (schema derived again)")
    except TansuInstallError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
