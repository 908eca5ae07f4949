"""What every fault kind has in common.

A fault is planned (pure: from the node names and a seeded rng to JSON params, so a
schedule is reproducible and can be written down), then started with those params
and later stopped. Each strike reports, as the history value, where it struck; a
node on which the command failed is listed under "errors" and the run goes on.

What a strike leaves behind must be found and undone from the nodes alone (the
process that struck may have died): a fault kind that leaves such traces declares
how, as NodeTraces or ClusterTraces, and nemesis/heal.py runs them all.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

from clusters.cluster import Cluster
from clusters.nodes.ssh import NodeSession

from nemesis import targets as targeting


class Fault(ABC):
    name: str          # the --nemesis name
    stop_f: str        # history f of the stop action

    @abstractmethod
    def plan(self, nodes: Sequence[str], target_specs: Sequence[str],
             rng: random.Random) -> dict:
        """Pure: the params of the next start (JSON-serialisable)."""

    def start_f(self, params: dict) -> str:
        """History f of the start action with these params."""
        return self.name

    @abstractmethod
    def start(self, cluster, params: dict) -> dict:
        """Strikes; returns the history value (params plus what happened)."""

    @abstractmethod
    def stop(self, cluster) -> dict:
        """Undoes the last start; returns the history value."""

    def heal(self, cluster) -> None:
        """Undoes what only this object remembers (nemesis/heal.py undoes the traces on
        the nodes), and forgets what was struck."""


@dataclass(frozen=True)
class NodeTraces:
    """How a fault kind finds and undoes what it leaves on one node. `undo` returns
    what it did ("n1: ..." lines), `left` what is still there; both idempotent.
    Network traces are undone before the others: a broker that a trace's undo restarts
    (clock) must be able to rejoin."""
    undo: Callable[[Cluster, NodeSession], list[str]]
    left: Callable[[Cluster, NodeSession], list[str]]
    network: bool = False


@dataclass(frozen=True)
class ClusterTraces:
    """How a fault kind finds and undoes what it leaves on the cluster as a whole,
    once every broker serves again. `left` is {node: [problem]}."""
    undo: Callable[[Cluster], list[str]]
    left: Callable[[Cluster], dict[str, list[str]]]


def strike(nodes: Sequence[str], action: Callable[[str], object]) -> dict[str, str]:
    """Runs action(node) on every node in parallel; returns {node: error} for failures."""
    nodes = list(nodes)
    if not nodes:
        return {}
    errors: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
        futures = {node: pool.submit(action, node) for node in nodes}
    for node, future in futures.items():
        try:
            future.result()
        except Exception as e:  # noqa: BLE001 - reported in the history, the run goes on
            errors[node] = f"{type(e).__name__}: {e}"
    return errors


def with_errors(value: dict, errors: dict[str, str]) -> dict:
    if errors:
        value = {**value, "errors": errors}
    return value


class ProcessFault(Fault):
    """A fault that strikes brokers chosen by --db-targets (pause, kill, clock)."""

    def __init__(self, resolve_role: Callable[[str], list[str]]) -> None:
        self.resolve_role = resolve_role
        self.struck: list[str] = []

    def plan_targets(self, nodes: Sequence[str], target_specs: Sequence[str],
                     rng: random.Random) -> dict:
        spec = rng.choice(list(target_specs))
        return {"target": spec, "nodes": targeting.choose(spec, nodes, rng)}

    def plan(self, nodes: Sequence[str], target_specs: Sequence[str],
             rng: random.Random) -> dict:
        return self.plan_targets(nodes, target_specs, rng)

    def nodes_for(self, params: dict) -> list[str]:
        """The planned nodes, or the current holders of the planned role."""
        if params.get("nodes") is not None:
            return list(params["nodes"])
        return self.resolve_role(params["target"])

    def start_on_nodes(self, cluster, params: dict, action: Callable[[str], object]) -> dict:
        try:
            nodes = self.nodes_for(params)
        except Exception as e:  # noqa: BLE001 - a role nobody holds: report it, go on
            return {**params, "nodes": [], "errors": {"*": f"{type(e).__name__}: {e}"}}
        self.struck = nodes
        return with_errors({**params, "nodes": nodes}, strike(nodes, action))

    def stop_on_struck(self, action: Callable[[str], object]) -> dict:
        nodes, self.struck = self.struck, []
        return with_errors({"nodes": nodes}, strike(nodes, action))

    def heal(self, cluster) -> None:
        self.struck = []
