"""A Python client under test, pinned and installed on first use into its own
corner of the client cache (`<cache root>/clients/<name>-<version>/`, by `pip
install --target`) and imported from there: kafka-python's and aiokafka's. Neither
is a dependency of logtrial, so each client stays pinned and apart from the
harness's venv and from the other. The directory goes on sys.path only while the
package is imported; its own later imports of its submodules go through the
package's __path__. A dependency the harness had already imported (typing
extensions, say) is not imported again: the client shares that copy."""
from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

from clusters.kafka.versions import cache_root
from workloads.base import Client

_lock = threading.Lock()


class ClientInstallError(RuntimeError):
    pass


@dataclass(frozen=True)
class PinnedPackage:
    name: str                            # on PyPI
    version: str
    module: str                          # the top-level package it is imported as
    marker: str                          # a file that is there once it is installed whole
    requirements: tuple[str, ...] = ()   # its own dependencies, each pinned (name==version)
    submodules: tuple[str, ...] = ()     # imported while its directory is on sys.path

    def install_dir(self) -> Path:
        return cache_root() / "clients" / f"{self.name}-{self.version}"

    def _installed(self, path: Path) -> bool:
        return (path / self.marker).exists()

    def install_state(self) -> tuple[bool, str]:
        """(installed, what doctor says) for the pinned version."""
        path = self.install_dir()
        if self._installed(path):
            return True, str(path)
        return False, "not installed: installed on first use, or `make clients`"

    def ensure_installed(self) -> Path:
        """The pinned package's directory, installed first if it is not there. pip
        installs into a temporary directory that is renamed into place: never half
        installed, and two processes racing install the same files."""
        dest = self.install_dir()
        if self._installed(dest):
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}-")
        pins = [f"{self.name}=={self.version}", *self.requirements]
        try:
            # --no-deps: the requirements are the whole set, pinned here, not pip's choice
            result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                     "--no-deps", "--target", tmp, *pins], capture_output=True, text=True)
            if result.returncode != 0:
                raise ClientInstallError(f"pip could not install {' '.join(pins)}:\n{result.stderr}")
            os.rename(tmp, dest)
        except OSError:
            if not self._installed(dest):  # else another process won the race: the same files
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return dest

    def load(self) -> ModuleType:
        """The pinned package (installing it first if needed). Refuses the same
        package already imported from elsewhere: the run would test that one."""
        path = self.ensure_installed()
        with _lock:
            package = sys.modules.get(self.module)
            if package is None:
                sys.path.insert(0, str(path))
                try:
                    package = importlib.import_module(self.module)
                    for module in self.submodules:
                        importlib.import_module(module)
                finally:
                    sys.path.remove(str(path))
        if not Path(package.__file__).resolve().is_relative_to(path.resolve()):
            raise ClientInstallError(f"another {self.module} package is imported already ({package.__file__}), "
                                     f"not the pinned {self.name} {self.version} in {path}")
        if package.__version__ != self.version:
            raise ClientInstallError(f"{path} holds {self.name} {package.__version__}, not {self.version}")
        return package

    def main(self) -> None:
        """`python -m` of a client's install module: installs it, says where."""
        print(f"{self.name} {self.load().__version__}: {self.install_dir()}")


class PythonClients:
    """The run's clients of a pinned Python package (a ClientKind's factory): in the
    worker processes, as librdkafka's are, so nothing to start or stop beside them.
    Opening it installs and imports the package, before any work starts;
    `queue_client` gives the client's class, imported only then."""

    def __init__(self, pinned: PinnedPackage, queue_client: Callable[[], type]):
        pinned.load()
        self.pinned = pinned
        self._queue_client = queue_client

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        return self._queue_client()(workload, process, final)

    def versions(self) -> dict[str, str]:
        return {self.pinned.name.replace("-", "_"): self.pinned.version}

    def close(self) -> None:
        pass
