"""A client under test is one ClientKind, listed in the registry
(workloads/client_kinds.py) and made from its own package's entry module: adding a
client is that package plus its line there. So every kind says how a run and the
findings' probes drive it, and no module outside the registry branches on a
client's name: not the runner, not the probes (harness/probes/)."""
from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import pytest

from tests.architecture.name_scan import PACKAGES, ROOT, branches_outside
from tests.architecture.test_systems import _imported
from workloads.bridge.kind import Bridge
from workloads.client_kinds import CLIENT_KINDS, CLIENT_NAMES, ClientKind
from workloads.registry import WORKLOAD_NAMES
from workloads.settings import DEFAULT_CLIENT

REGISTRY = ROOT / "workloads" / "client_kinds.py"


def entry_module(kind: ClientKind) -> Path:
    """The module that defines what the registry's line for `kind` names: its bridge,
    or its run's factory."""
    made = kind.bridge if kind.bridge is not None else kind.open
    if kind.bridge is None:
        return Path(inspect.getfile(made)).resolve()
    owners = [m for m in list(sys.modules.values())
              if getattr(m, "__file__", None) and any(v is made for v in vars(m).values())
              and Path(m.__file__).resolve() != REGISTRY]
    assert len(owners) == 1, owners
    return Path(owners[0].__file__).resolve()


@pytest.mark.parametrize("name", CLIENT_NAMES)
def test_each_kind_says_how_a_run_and_a_probe_drive_it(name):
    kind = CLIENT_KINDS[name]
    assert kind.name == name and callable(kind.open) and set(kind.workloads) <= set(WORKLOAD_NAMES)
    assert not (kind.bridge and kind.timed), "a client runs in child processes or in this one, not both"
    if kind.bridge is not None:
        assert isinstance(kind.bridge, Bridge)
        assert all(callable(getattr(kind.bridge.config, f)) for f in ("producer_config", "consumer_config",
                                                                      "lookup_config"))
        module, cls = kind.bridge.queue_client.split(":")
        assert inspect.isclass(getattr(importlib.import_module(module), cls))
    elif kind.timed is not None:
        timed = importlib.import_module(kind.timed).TimedProducer
        assert all(callable(getattr(timed, step)) for step in ("begin", "send", "end", "close"))
    else:
        assert name == DEFAULT_CLIENT, "only the default client is driven by the probes' own code"
    if kind.install_state is not None:
        ready, detail = kind.install_state()
        assert isinstance(ready, bool) and isinstance(detail, str) and detail


def test_each_kinds_entry_module_is_imported_by_the_registry_alone():
    modules = {name: entry_module(kind) for name, kind in CLIENT_KINDS.items() if name != DEFAULT_CLIENT}
    assert REGISTRY not in modules.values()
    dotted = {".".join(m.relative_to(ROOT).with_suffix("").parts) for m in modules.values()}
    importers = {path.relative_to(ROOT).as_posix() for package in PACKAGES for path in (ROOT / package).rglob("*.py")
                 if dotted & _imported(path)}
    assert importers == {"workloads/client_kinds.py"}


def test_no_module_outside_the_registry_branches_on_a_clients_name():
    assert branches_outside({REGISTRY}, CLIENT_NAMES) == []
