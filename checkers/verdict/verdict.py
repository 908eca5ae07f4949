"""From the anomaly types found to a verdict: valid true / false / "unknown".

The one place that decides, for every workload, from the declarations in
checkers/verdict/taxonomy.py:

- checked against a consistency model (list-append): a type is bad when the
  model forbids it (checkers/verdict/consistency.proscribed);
- otherwise (queue): a type is bad when its declaration says so; poll-skip and
  nonmonotonic-poll are excused once a consumer subscribed (rebalances move
  partitions); a G1c cycle is bad only when some G1c cycle uses no ww edge
  (Kafka has no write locks, so ww-ordered cycles are expected, as G0 is);
- a type the taxonomy does not know is bad: a checker never lets an anomaly
  it cannot judge pass;
- `allow` moves types out of the bad set, `forbid` into it;
- "unknown" when nothing bad was found but the history cannot vouch for
  anything: no ok operation at all; (list-append) no dependency edge at all,
  so no cycle could have been seen (Elle's empty-transaction-graph); or
  (queue) `unseen` is the only bad type and no poll ran after the last
  acknowledged send.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from checkers.verdict import consistency
from checkers.verdict.taxonomy import TYPES

G1C_TYPES = ("G1c", "G1c-process", "G1c-realtime")


@dataclass
class Evidence:
    """What the verdict depends on besides the anomaly types."""
    any_ok: bool = True
    used_subscribe: bool = False
    final_reads: bool = True
    wr_only_g1c: dict[str, int] = field(default_factory=dict)  # type -> count of wr-only cycles
    empty_graph: bool = False      # list-append: no dependency at all (Elle's empty-transaction-graph)


def is_bad(name: str, model: str | None, evidence: Evidence) -> bool:
    declared = TYPES.get(name)
    if declared is None:
        return True
    if model is not None:
        return name in consistency.proscribed(model)
    if declared.when_subscribed_ok and evidence.used_subscribe:
        return False
    if name in G1C_TYPES:
        return bool(evidence.wr_only_g1c.get(name))
    return declared.bad


def verdict(found: Iterable[str], evidence: Evidence | None = None, model: str | None = None,
            allow: Iterable[str] = (), forbid: Iterable[str] = ()) -> tuple[bool | str, list[str]]:
    """(valid, sorted bad anomaly types). With a consistency `model`, a type is
    bad when the model forbids it (list-append); without, when its declaration
    says so (queue)."""
    evidence = evidence or Evidence()
    found = set(found)
    bad = {t for t in found if is_bad(t, model, evidence)}
    bad = sorted((bad | (found & set(forbid))) - set(allow))
    if bad:
        if bad == ["unseen"] and not evidence.final_reads:
            return "unknown", bad
        return False, bad
    return (True if evidence.any_ok and not evidence.empty_graph else "unknown"), bad
