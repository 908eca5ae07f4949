"""The pinned kafka-python, installed on first use into the client cache
(`<cache root>/clients/kafka-python-<version>/`, by `pip install --target`) and
imported from there. It is not a dependency of logtrial: each client under test
stays pinned and apart from the harness's own venv. The cache directory goes on
sys.path only while the package is imported; its own later imports of its
submodules go through the package's __path__."""
from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

from clusters.kafka.versions import cache_root

PACKAGE = "kafka-python"
VERSION = "3.0.12"  # the newest 3.0.x on PyPI when it was pinned
_lock = threading.Lock()


class ClientInstallError(RuntimeError):
    pass


def install_dir() -> Path:
    return cache_root() / "clients" / f"{PACKAGE}-{VERSION}"


def _installed(path: Path) -> bool:
    return (path / "kafka" / "version.py").exists()


def install_state() -> tuple[bool, str]:
    """(installed, what doctor says) for the pinned version."""
    path = install_dir()
    return (True, str(path)) if _installed(path) else (False, "not installed: installed on first use, or `make clients`")


def ensure_installed() -> Path:
    """The pinned package's directory, installed first if it is not there. pip
    installs into a temporary directory that is renamed into place: never half
    installed, and two processes racing install the same files."""
    dest = install_dir()
    if _installed(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}-")
    try:
        result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                 "--no-deps", "--target", tmp, f"{PACKAGE}=={VERSION}"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise ClientInstallError(f"pip could not install {PACKAGE}=={VERSION}:\n{result.stderr}")
        os.rename(tmp, dest)
    except OSError:
        if not _installed(dest):  # else another process won the race: the same files
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def load() -> ModuleType:
    """The pinned `kafka` package (installing it first if needed). Refuses another
    `kafka` already imported from elsewhere: the run would test that one."""
    path = ensure_installed()
    with _lock:
        kafka = sys.modules.get("kafka")
        if kafka is None:
            sys.path.insert(0, str(path))
            try:
                kafka = importlib.import_module("kafka")
                for module in ("kafka.errors", "kafka.structs", "kafka.consumer.subscription_state"):
                    importlib.import_module(module)
            finally:
                sys.path.remove(str(path))
    if not Path(kafka.__file__).resolve().is_relative_to(path.resolve()):
        raise ClientInstallError(f"another kafka package is imported already ({kafka.__file__}), not the "
                                 f"pinned {PACKAGE} {VERSION} in {path}")
    if kafka.__version__ != VERSION:
        raise ClientInstallError(f"{path} holds kafka-python {kafka.__version__}, not {VERSION}")
    return kafka


if __name__ == "__main__":
    print(f"{PACKAGE} {load().__version__}: {install_dir()}")
