"""The kafkajs program's modules: installed once per lock file by `npm ci` (from the
npm registry, as package-lock.json pins them, integrity hashes checked) into
`<cache root>/kafkajs-client/<lock digest>/node_modules`, which the program finds
through NODE_PATH. The program's own sources run from src/: changing them installs
nothing again. `python -m workloads.kafkajs_client.install` installs ahead of a run;
otherwise the first run that asks does."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from clusters.kafka.versions import cache_root

SOURCES = Path(__file__).resolve().parent / "src"
PROGRAM = SOURCES / "main.js"
LOCK_FILES = ("package.json", "package-lock.json")
MARKER = Path("node_modules") / "kafkajs" / "package.json"  # there once installed whole


class KafkajsInstallError(RuntimeError):
    pass


def lock_digest() -> str:
    digest = hashlib.sha256()
    for name in LOCK_FILES:
        digest.update(name.encode() + b"\0" + (SOURCES / name).read_bytes())
    return digest.hexdigest()[:16]


def install_dir() -> Path:
    return cache_root() / "kafkajs-client" / lock_digest()


def install_state() -> tuple[bool, str]:
    """(installed, what doctor says): the modules for the current lock file are in the cache."""
    path = install_dir()
    return (True, str(path)) if (path / MARKER).exists() else \
        (False, "not installed: installed on first use, or `make clients`")


def ensure_installed() -> Path:
    """The node_modules directory for the current lock file, installed unless cached."""
    dest = install_dir()
    if (dest / MARKER).exists():
        return dest / "node_modules"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}-"))  # renamed into place: never half
    try:
        for name in LOCK_FILES:
            shutil.copy(SOURCES / name, tmp / name)
        _npm_ci(tmp, dest.parent / f"{dest.name}.install.log")
        os.rename(tmp, dest)
    except OSError:
        if not (dest / MARKER).exists():  # else another process won the race: the same modules
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest / "node_modules"


def _npm_ci(where: Path, log: Path) -> None:
    # --ignore-scripts: nothing the registry sends runs here; kafkajs has no install step
    command = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--omit=dev"]
    try:
        with log.open("w") as out:
            result = subprocess.run(command, cwd=where, stdout=out, stderr=subprocess.STDOUT)
    except FileNotFoundError:
        raise KafkajsInstallError("the kafkajs client needs Node's npm (`npm` is not on PATH)") from None
    if result.returncode != 0:
        raise KafkajsInstallError(f"npm ci of the kafkajs client failed (exit {result.returncode}); "
                                  f"see {log}:\n{log.read_text()[-2000:]}")


def command() -> list[str]:
    """The program's command line, its modules installed first if needed."""
    modules = ensure_installed()
    node = shutil.which("node")
    if node is None:
        raise KafkajsInstallError("the kafkajs client needs Node (`node` is not on PATH)")
    return ["env", f"NODE_PATH={modules}", node, str(PROGRAM)]


if __name__ == "__main__":
    print(f"kafkajs client: {ensure_installed()}")
