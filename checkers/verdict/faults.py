"""Which faults ran, and whether they explain what was found: the verdict
"expected under the faults that ran".

The checkers know the faults only from the history (they do not import
nemesis/): each start event a logtrial nemesis writes names its kind
(`value.fault`) and says why the strike may lose acknowledged data, or null
when the system must lose nothing under it (`value.may_lose_data`;
docs/history-format.md, "Nemesis events").

The rule (`judge`): a run that `verdict()` found invalid is *expected under
the faults that ran* when

1. every anomaly type that makes it invalid is a data-loss type (taxonomy
   `data_loss`: its evidence is only records known to exist missing from
   reads, which a deleted record accounts for), and
2. some strike that may lose data was recorded before the history's client
   operations ended (`reads_end`: the queue's `stats.end_time`, the last
   completion), so reads that missed the records could have run after it.
   The event is written once the strike returned: if it precedes the end,
   so did the strike.

A strike that also declares `rewrites_offsets` (its loss cuts a log's
acknowledged tail, whose offsets the next records take: power) explains the
taxonomy's `tail_cut` types as well, by the same rule: one offset seen with
two values is that loss seen from both sides, and a consumer reset back to the
log's start is how a client answers a position past the log's new end.

That is all it claims: that faults able to delete acknowledged records struck
before the reads that found records missing, and that nothing a deletion
cannot make was found. It does not trace each missing record to a strike. Any
other bad type (a duplicate, a G1c cycle, ...) keeps the run condemned, as
does a run whose faults all must lose nothing. `valid` stays false either
way: the history did lose acknowledged data, and a consumer that knows only
`valid` keeps treating the run as failed (docs/checkers.md, "Faults that may
lose data").
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from checkers.verdict.taxonomy import TYPES

EXPECTED = "expected-under-faults"      # the verdict state this module adds
VERDICTS = {True: "valid", False: "invalid", "unknown": "unknown"}


@dataclass(frozen=True)
class Strike:
    """One declared fault start, as the history recorded it."""
    index: int
    time: int
    fault: str                  # the --nemesis name
    f: str
    may_lose_data: str | None   # why it may lose acknowledged data; None: it must not
    rewrites_offsets: bool = False  # its loss may cut a log's tail whose offsets are written again


def strikes(events: Iterable[dict]) -> list[Strike]:
    """The declared starts among nemesis events, in their order."""
    return [s for s in map(_strike, events) if s is not None]


def _strike(e: dict) -> Strike | None:
    """An event whose declaration is not a string kind and a string-or-null
    reason, or without an int index and time, says nothing: None."""
    value = e.get("value")
    if not isinstance(value, dict):
        return None
    fault, why = value.get("fault"), value.get("may_lose_data", 0)
    placed = all(type(e.get(k)) is int for k in ("index", "time")) and isinstance(e.get("f"), str)
    if not (placed and isinstance(fault, str) and (why is None or isinstance(why, str))):
        return None
    return Strike(e["index"], e["time"], fault, e["f"], why, why is not None and value.get("rewrites_offsets") is True)


def loses_data(name: str) -> bool:
    """Does a deleted record account for anomalies of this type? (Unknown types: no.)"""
    declared = TYPES.get(name)
    return declared is not None and declared.data_loss


def cut_tail_explains(name: str) -> bool:
    """Does a cut log tail account for anomalies of this type? (Unknown types: no.)"""
    declared = TYPES.get(name)
    return declared is not None and declared.tail_cut


def in_force(struck: Sequence[Strike]) -> list[dict]:
    """One entry per fault kind that struck, by name: its start fs, how many
    strikes, and why those that may lose data may ({f: why}, empty if none)."""
    kinds: dict[str, dict] = {}
    for s in struck:
        kind = kinds.setdefault(s.fault, {"fault": s.fault, "f": set(), "strikes": 0, "may_lose_data": {}})
        kind["f"].add(s.f)
        kind["strikes"] += 1
        if s.may_lose_data is not None:
            kind["may_lose_data"].setdefault(s.f, s.may_lose_data)
    return [{**kind, "f": sorted(kind["f"])} for _, kind in sorted(kinds.items())]


def judge(valid: bool | str, bad: Sequence[str], struck: Sequence[Strike], reads_end: int | None) -> dict:
    """results.json's `faults` (docs/history-format.md): the faults in force and
    whether they explain the bad anomaly types, by the rule above."""
    losing = [s for s in struck if s.may_lose_data is not None]
    first = min(losing, key=lambda s: (s.time, s.index)) if losing else None
    before = first is not None and reads_end is not None and first.time < reads_end
    rewriting = sorted({s.fault for s in losing if s.rewrites_offsets and reads_end is not None
                        and s.time < reads_end})
    explained = sorted(t for t in bad if before and (loses_data(t) or rewriting and cut_tail_explains(t)))
    unexplained = sorted(set(bad) - set(explained))
    section = {
        "verdict": EXPECTED if valid is False and explained and not unexplained else VERDICTS.get(valid, "unknown"),
        "in_force": in_force(struck),
        "may_lose_data": sorted({s.fault for s in losing}),
        "first_loss_strike": {"index": first.index, "time": first.time, "fault": first.fault, "f": first.f}
        if first else None,
        "reads_end": reads_end,
        "struck_before_reads_end": before,
        "explained": explained,
        "unexplained": unexplained,
    }
    if rewriting:   # only then: the section of every other history stays as it was
        section["rewrites_offsets"] = rewriting
    return {**section, "explanation": explanation(section)}


def explanation(section: dict) -> str:
    """The plain words: which faults ran, which may lose data, what they explain."""
    words = [f"Faults that ran: {_names([k['fault'] for k in section['in_force']])}.", _losing(section),
             _outcome(section)]
    return " ".join(words)


def _losing(section: dict) -> str:
    losing, first = section["may_lose_data"], section["first_loss_strike"]
    if not losing:
        return "None of them may lose acknowledged data."
    if section["struck_before_reads_end"]:
        return (f"Of these, {_names(losing)} may lose acknowledged data; the first such strike "
                f"({first['f']}, event {first['index']}) came before the last operation ended.")
    return (f"Of these, {_names(losing)} may lose acknowledged data, but no such strike came before "
            f"the last operation ended.")


def _outcome(section: dict) -> str:
    explained, unexplained = section["explained"], section["unexplained"]
    if section["verdict"] == EXPECTED:
        what = "acknowledged data missing from reads"
        if any(cut_tail_explains(t) and not loses_data(t) for t in explained):
            what += (f", or what follows when {_names(section['rewrites_offsets'])} cut a log's "
                     f"acknowledged tail (its offsets written again, consumers reset to its start)")
        return (f"Expected under the faults that ran: every anomaly that makes the run invalid "
                f"({_names(explained)}) is {what}, which {_names(section['may_lose_data'])} can "
                f"cause. The checker does not trace each missing record to a strike.")
    if section["verdict"] == "valid":
        return "Nothing made the run invalid."
    if not unexplained:
        return "The verdict is unknown; the faults do not change it."
    if not section["struck_before_reads_end"]:
        return f"Not explained by the faults that ran: the run is invalid ({_names(unexplained)})."
    also = (f" {_names(explained)} alone would be expected under {_names(section['may_lose_data'])}."
            if explained else "")
    return (f"Not explained by the faults that ran: {_names(unexplained)} "
            f"{'is' if len(unexplained) == 1 else 'are'} not acknowledged data missing from reads, "
            f"so the run is invalid.{also}")


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"
