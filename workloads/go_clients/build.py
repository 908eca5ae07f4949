"""The Go clients' program (franz-go and Sarama in one binary): built once per source
digest into the cache by `go build`, its modules fetched through Go's module proxy
into Go's module cache as go.sum pins them. `python -m workloads.go_clients.build`
builds it ahead of a run; otherwise the first run that asks for it does. A second
call finds the binary and returns at once."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from clusters.kafka.versions import cache_root

SOURCES = Path(__file__).resolve().parent / "src"
BINARY = "go-clients"


class GoBuildError(RuntimeError):
    pass


def _source_files() -> list[Path]:
    return sorted([SOURCES / "go.mod", SOURCES / "go.sum", *SOURCES.glob("*.go")])


def source_digest() -> str:
    digest = hashlib.sha256()
    for path in _source_files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build_dir() -> Path:
    return cache_root() / "go-clients" / source_digest()


def install_state() -> tuple[bool, str]:
    """(built, what doctor says): the program for the current sources is in the cache."""
    path = build_dir() / BINARY
    return (True, str(path)) if path.exists() else (False, "not built: built on first use, or `make clients`")


def build() -> Path:
    """The program for the current sources, built unless cached; its path."""
    dest = build_dir()
    if (dest / BINARY).exists():
        return dest / BINARY
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent))  # renamed into place: never half-built
    try:
        _go_build(tmp / BINARY, dest.parent / f"{dest.name}.build.log")
        os.rename(tmp, dest)
    except OSError:
        if not (dest / BINARY).exists():  # else another process won the race: its binary is the same
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest / BINARY


def _go_build(output: Path, log: Path) -> None:
    # read-only modules: the sources may sit in an installed package nobody may write
    env = {**os.environ, "GOFLAGS": "-mod=readonly -buildvcs=false"}
    try:
        with log.open("w") as out:
            result = subprocess.run(["go", "build", "-trimpath", "-o", str(output), "."], cwd=SOURCES, env=env,
                                    stdout=out, stderr=subprocess.STDOUT)
    except FileNotFoundError:
        raise GoBuildError("the Go clients (franz-go, Sarama) need Go (`go` is not on PATH)") from None
    if result.returncode != 0:
        raise GoBuildError(f"go build of the Go clients' program failed (exit {result.returncode}); "
                                f"see {log}:\n{log.read_text()[-2000:]}")


if __name__ == "__main__":
    print(f"Go clients (franz-go, Sarama): {build()}")
