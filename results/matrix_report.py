"""What `logtrial test-all` says about a matrix of runs: a summary table for the
terminal and JUnit XML for CI (one testcase per run; a bad anomaly type is a
failure, an unknown or incomplete verdict or a harness crash is an error)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from common import exit_codes
from results.runs import RunSummary


@dataclass
class MatrixRun:
    """One cell of the matrix, once run."""

    workload: str
    nemesis: str                   # "none", "partition", "partition+pause"
    txn: bool
    attempt: int                   # 1..test-count
    summary: RunSummary | None     # None when the harness failed before a run dir existed
    exit_code: int
    error: str | None = None
    kafka_version: str | None = None  # the version axis of test-all, when given
    quorum: str | None = None         # its quorum axis ("static"/"dynamic"), when given
    client: str | None = None         # its client axis ("librdkafka"/"java"), when given
    db: str | None = None             # its system axis ("kafka"/"tansu"), when given
    txn_version: int | None = None    # its transaction.version axis, when given
    seed: int | None = None           # its seeds axis, when given

    @property
    def label(self) -> str:
        axes = f"db={self.db} " if self.db else ""
        axes += f"kafka={self.kafka_version} " if self.kafka_version else ""
        axes += f"quorum={self.quorum} " if self.quorum else ""
        axes += f"tv={self.txn_version} " if self.txn_version is not None else ""
        axes += f"client={self.client} " if self.client else ""
        seed = f" seed={self.seed}" if self.seed is not None else ""
        return f"{axes}{self.workload} nemesis={self.nemesis} txn={'on' if self.txn else 'off'} #{self.attempt}{seed}"

    @property
    def verdict(self) -> str:
        return self.summary.verdict if self.summary else "error"


def exit_code(runs: list[MatrixRun]) -> int:
    """0 only if every run is valid; otherwise the worst outcome's code."""
    codes = {verdict_code(r) for r in runs}
    for worst in (exit_codes.INTERRUPTED, exit_codes.HARNESS_ERROR, exit_codes.INVALID, exit_codes.UNKNOWN):
        if worst in codes:
            return worst
    return exit_codes.VALID


def verdict_code(run: MatrixRun) -> int:
    if run.exit_code == exit_codes.INTERRUPTED:
        return exit_codes.INTERRUPTED
    return {"valid": exit_codes.VALID, "invalid": exit_codes.INVALID, "unknown": exit_codes.UNKNOWN,
            "incomplete": exit_codes.UNKNOWN}.get(run.verdict, exit_codes.HARNESS_ERROR)


def verdict_words(run: MatrixRun) -> str:
    """The verdict, with the faults that explain an invalid run when they do."""
    if run.summary and run.summary.expected_under:
        return f"{run.verdict} (expected under {'+'.join(run.summary.expected_under)})"
    return run.verdict


def summary_table(runs: list[MatrixRun]) -> str:
    headers = ["#", "workload", "nemesis", "txn", "verdict", "bad anomalies", "duration", "run dir"]
    rows = [[str(i), r.workload, r.nemesis, "on" if r.txn else "off", verdict_words(r),
             ", ".join(r.summary.bad_anomaly_types) if r.summary else (r.error or "")[:60],
             f"{r.summary.duration_s:.0f}s" if r.summary and r.summary.duration_s is not None else "-",
             r.summary.rel if r.summary else "-"] for i, r in enumerate(runs, 1)]
    # a client, quorum or version axis: compare them side by side
    for header, value in (("seed", lambda r: r.seed), ("client", lambda r: r.client), ("tv", lambda r: r.txn_version),
                          ("quorum", lambda r: r.quorum), ("kafka", lambda r: r.kafka_version), ("db", lambda r: r.db)):
        if any(value(r) is not None for r in runs):
            headers.insert(1, header)
            for row, run in zip(rows, runs):
                row.insert(1, "-" if value(run) is None else str(value(run)))
    widths = [max(len(str(row[c])) for row in [headers] + rows) for c in range(len(headers))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [headers] + rows]
    counts = {v: sum(r.verdict == v for r in runs) for v in ("valid", "invalid", "unknown", "incomplete", "error")}
    total = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return "\n".join(lines + [f"{len(runs)} runs: {total}"])


def junit_xml(runs: list[MatrixRun], suite: str = "logtrial test-all") -> bytes:
    failures = sum(r.verdict == "invalid" for r in runs)
    errors = sum(r.verdict not in ("valid", "invalid") for r in runs)
    duration = sum(r.summary.duration_s or 0 for r in runs if r.summary)
    root = ET.Element("testsuite", name=suite, tests=str(len(runs)), failures=str(failures), errors=str(errors),
                      time=f"{duration:.3f}")
    for run in runs:
        case = ET.SubElement(root, "testcase", classname=f"logtrial.{run.workload}", name=run.label,
                             time=f"{(run.summary.duration_s or 0) if run.summary else 0:.3f}")
        add_outcome(case, run)
        if run.summary:
            ET.SubElement(case, "system-out").text = f"run dir: {run.summary.rel}\nverdict: {run.verdict}"
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def add_outcome(case: ET.Element, run: MatrixRun) -> None:
    summary = run.summary
    if run.verdict == "invalid":
        bad = ", ".join(summary.bad_anomaly_types) or "invalid"
        if summary.expected_under:
            bad += f" (expected under {', '.join(summary.expected_under)})"
        ET.SubElement(case, "failure", message=bad, type="invalid").text = (
            f"anomalies: {', '.join(summary.anomaly_types)}\nbad: {bad}\nreport: {summary.rel}/report.html")
    elif run.verdict in ("unknown", "incomplete"):
        why = "; ".join(summary.problems + ([summary.note] if summary.note else [])) or f"verdict {run.verdict}"
        ET.SubElement(case, "error", message=f"{run.verdict}: {why}"[:500], type=run.verdict).text = why
    elif run.verdict == "error":
        ET.SubElement(case, "error", message=(run.error or "harness error")[:500], type="harness-error").text = run.error


def write_junit(runs: list[MatrixRun], path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(junit_xml(runs))
    return path
