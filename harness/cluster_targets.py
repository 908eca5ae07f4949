"""Which cluster a command or the watchdog acts on: a run's (from its test.json), an
inventory of real machines, or a local cluster by name. No CLI here: a cluster that
cannot be named is a TargetError, which `logtrial cluster` turns into its exit code
and the watchdog into a line of its record."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from clusters.nodes.local import LocalCluster


class TargetError(ValueError):
    """The cluster asked for cannot be found; says which and why."""


@dataclass
class Target:
    """One cluster a command acts on."""
    label: str                       # how the output names it
    inventory_path: str
    local: LocalCluster | None = None


def run_target(run_dir: str | Path) -> Target:
    """The cluster a run used, as its test.json records it."""
    test_json = Path(run_dir) / "test.json"
    try:
        where = json.loads(test_json.read_text()).get("cluster")
    except (OSError, ValueError) as e:
        raise TargetError(f"{test_json}: cannot read the run's record ({e})") from None
    if not where:
        raise TargetError(f"{test_json}: the run recorded no cluster (bootstrap servers only, or a run "
                          "from before runs recorded their cluster)")
    if "inventory" in where:
        return Target(f"inventory {where['inventory']}", where["inventory"])
    local = LocalCluster(where["local"], where.get("state_root"))
    if not local.inventory_path.exists():
        raise TargetError(f"the local cluster {local.name!r} that {run_dir} used no longer exists")
    return Target(f"cluster {local.name}", str(local.inventory_path), local)


def named_target(name: str) -> Target:
    """A local cluster by name."""
    local = LocalCluster(name)
    if not local.inventory_path.exists():
        raise TargetError(f"no local cluster {name!r} (no {local.inventory_path}); "
                          f"start one with `logtrial cluster up --name {name}`")
    return Target(f"cluster {name}", str(local.inventory_path), local)
