"""A campaign's table: the runs of a matrix with a seeds axis, summed per cell (a
combination of the other axes), as docs/findings.md reports the late-batch and
producer-state campaigns. Read from each run's results.json and forensics.json, so
the table of a store can be made again, and the tables of several stores summed into
one (`logtrial campaign STORE...`); written beside the matrix as campaign.json and
campaign.md."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from checkers.verdict.faults import VERDICTS
from results.matrix_report import MatrixRun

# the anomaly types a campaign counts (docs/findings.md's columns)
# unseen: acknowledged and never read, not even by the final reads: what a power loss costs
# idempotent-duplicate: a retried batch appended twice after the broker forgot its producer
COUNTED = ("lost-write", "unseen", "G1a", "partial-txn-read", "duplicate", "idempotent-duplicate",
           "inconsistent-offsets")
CAMPAIGN_JSON = "campaign.json"
CAMPAIGN_MD = "campaign.md"


@dataclass
class CellTotals:
    cell: str
    runs: int = 0
    checked: int = 0            # runs with a verdict
    hit: int = 0                # runs with a lost write or an aborted read
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTED, 0))
    committed_txns: int = 0
    lost_at_committed: int = 0  # lost writes whose offset holds a record of a committed batch
    lost_at_aborted: int = 0    # ... of an aborted batch
    seeds_hit: list[int] = field(default_factory=list)
    verdicts: dict[str, int] = field(default_factory=dict)         # verdict -> runs
    producer_errors: dict[str, int] = field(default_factory=dict)  # error as the client named it -> count
    out_of_order_sequence: int = 0                                 # OutOfOrderSequence errors seen

    def add(self, other: "CellTotals") -> None:
        """`other`'s runs and counts added to these (the same cell, in another store)."""
        for name in ("runs", "checked", "hit", "committed_txns", "lost_at_committed", "lost_at_aborted",
                     "out_of_order_sequence"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.counts, other.counts), (self.verdicts, other.verdicts),
                             (self.producer_errors, other.producer_errors)):
            for key, n in theirs.items():
                mine[key] = mine.get(key, 0) + n
        self.seeds_hit = sorted(self.seeds_hit + other.seeds_hit)


def merged(tables: list[list[CellTotals]]) -> list[CellTotals]:
    """Several stores' tables as one: each cell's totals summed, cells in first-seen order."""
    cells: dict[str, CellTotals] = {}
    for table in tables:
        for totals in table:
            cells.setdefault(totals.cell, CellTotals(totals.cell)).add(totals)
    return list(cells.values())


def cell_key(run: MatrixRun) -> str:
    """The run's label without its attempt and seed: the cell it sums into."""
    return run.label.split(" #")[0]


def add_run(totals: CellTotals, run: MatrixRun, run_dir: Path | None) -> None:
    totals.runs += 1
    results = _read_json(run_dir / "results.json") if run_dir else None
    verdict = run_verdict(results)
    totals.verdicts[verdict] = totals.verdicts.get(verdict, 0) + 1
    if verdict == "unknown":
        return
    totals.checked += 1
    anomalies = results.get("anomalies", {})
    counts = {name: anomalies.get(name, {}).get("count", 0) for name in COUNTED}
    for name, n in counts.items():
        totals.counts[name] += n
    if counts["lost-write"] or counts["unseen"] or counts["G1a"]:
        totals.hit += 1
        if run.seed is not None:
            totals.seeds_hit.append(run.seed)
    stats = results.get("stats", {})
    totals.committed_txns += stats.get("by_f", {}).get("txn", {}).get("ok", 0)
    for error, n in stats.get("producer_errors", {}).items():
        totals.producer_errors[error] = totals.producer_errors.get(error, 0) + n
    totals.out_of_order_sequence += stats.get("out_of_order_sequence", {}).get("total", 0)
    fates = [(t.get("at_offset") or {}).get("fate") for t in (_read_json(run_dir / "forensics.json") or [])]
    totals.lost_at_committed += fates.count("COMMIT")
    totals.lost_at_aborted += fates.count("ABORT")


def run_verdict(results: dict | None) -> str:
    """valid, invalid, expected-under-faults or unknown (no results.json: unknown): the
    faults' verdict when faults declared themselves, else the words for `valid`."""
    if not results:
        return "unknown"
    return (results.get("faults") or {}).get("verdict") or VERDICTS.get(results.get("valid"), "unknown")


def totals_by_cell(runs: list[MatrixRun], store: Path) -> list[CellTotals]:
    cells: dict[str, CellTotals] = {}
    for run in runs:
        key = cell_key(run)
        totals = cells.setdefault(key, CellTotals(key))
        add_run(totals, run, store / run.summary.rel if run.summary else None)
    return list(cells.values())


def markdown(cells: list[CellTotals]) -> str:
    lines = ["| cell | runs checked | runs with a lost or unseen write or an aborted read | "
             + " | ".join(f"`{name}`" for name in COUNTED)
             + " | lost writes whose offset holds a committed / aborted record | committed txns"
             " | verdicts | OutOfOrderSequence | producer errors |",
             "|---" * (len(COUNTED) + 8) + "|"]
    for c in cells:
        lines.append(f"| {c.cell} | {c.checked} (of {c.runs}) | {c.hit} | "
                     + " | ".join(str(c.counts[name]) for name in COUNTED)
                     + f" | {c.lost_at_committed} / {c.lost_at_aborted} | {c.committed_txns}"
                     f" | {_tally(c.verdicts)} | {c.out_of_order_sequence} | {_tally(c.producer_errors)} |")
    return "\n".join(lines)


def _tally(counts: dict[str, int]) -> str:
    """`name n` pairs, the most frequent first; `none` for none."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name} {n}" for name, n in ranked) or "none"


def campaign_table(runs: list[MatrixRun], store: Path) -> str:
    """The per-cell table, also written to the store as campaign.md and campaign.json."""
    cells = totals_by_cell(runs, store)
    table = markdown(cells)
    store.mkdir(parents=True, exist_ok=True)
    (store / CAMPAIGN_MD).write_text(table + "\n")
    (store / CAMPAIGN_JSON).write_text(json.dumps([asdict(c) for c in cells], indent=2) + "\n")
    return table


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
