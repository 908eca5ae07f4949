"""From the anomalies found to a verdict: valid true / false / "unknown".

Queue rules follow Jepsen's Kafka analysis:
- int-send-skip and G0 (and its -process/-realtime variants) are normal in
  Kafka's transactional model (no write locks, interleaved batches): reported,
  allowed.
- poll-skip and nonmonotonic-poll are expected once a consumer subscribes
  (rebalances move partitions between consumers): allowed when the history
  used subscribe.
- G1c cycles that need a ww edge are allowed for the same reason as G0; a
  G1c made only of wr edges is bad. The cycle search reports the wr-only ones
  as `G1c` and the rest as `G1c` too, but counts the wr-only cycles in
  `stats.cycles.g1c_wr_only`; the verdict uses that.
- `unseen` needs final reads to mean anything: when no poll ran after the
  last send was acknowledged, unseen alone gives "unknown", not false.
- No ok operation at all (empty history, everything failed): "unknown".
Everything else is bad. `allow` moves types into the allowed set, `forbid`
out of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

QUEUE_ALLOWED = frozenset({"int-send-skip", "G0", "G0-process", "G0-realtime"})
SUBSCRIBE_ALLOWED = frozenset({"poll-skip", "nonmonotonic-poll"})
G1C_TYPES = ("G1c", "G1c-process", "G1c-realtime")


@dataclass
class Evidence:
    """What the verdict depends on besides the anomaly types."""
    used_subscribe: bool = False
    any_ok: bool = True
    final_reads: bool = True
    wr_only_g1c: dict[str, int] = field(default_factory=dict)  # type -> count of wr-only cycles


def allowed_types(evidence: Evidence, allow=(), forbid=()) -> set[str]:
    allowed = set(QUEUE_ALLOWED)
    if evidence.used_subscribe:
        allowed |= SUBSCRIBE_ALLOWED
    for kind in G1C_TYPES:
        if not evidence.wr_only_g1c.get(kind):
            allowed.add(kind)
    return (allowed | set(allow)) - set(forbid)


def verdict(found: list[str], evidence: Evidence, allow=(), forbid=()) -> tuple[bool | str, list[str]]:
    """(valid, bad anomaly types)."""
    allowed = allowed_types(evidence, allow, forbid)
    bad = sorted(t for t in found if t not in allowed)
    if not evidence.any_ok:
        return "unknown", bad
    if bad == ["unseen"] and not evidence.final_reads:
        return "unknown", bad
    return (not bad), bad


def apply_overrides(results: dict, allow=(), forbid=()) -> dict:
    """--allow/--forbid on a checker's results that decided validity by its
    own rules (list-append: the consistency model)."""
    if not allow and not forbid:
        return results
    found = set(results.get("anomaly_types", ()))
    bad = (set(results.get("bad_anomaly_types", ())) | (found & set(forbid))) - set(allow)
    results["bad_anomaly_types"] = sorted(bad)
    if results.get("valid") != "unknown":
        results["valid"] = not bad
    return results
