"""Reading run directories, robustly.

A run directory is `store/<test-name>/<YYYYmmddTHHMMSS>/` (docs/architecture.md).
Anything in it may be missing, half-written or corrupt: a run killed mid-way, a
disk that filled up, a hand-edited file. Reading never raises on such a run; it
yields a summary whose verdict is `incomplete` and whose `problems` say what is
wrong and in which file.

The writing side (creating run dirs, `store/latest`) belongs to results/store.py.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from checkers.verdict.faults import EXPECTED

RUN_FILES = ("test.json", "results.json", "history.jsonl")
VERDICTS = ("valid", "invalid", "unknown", "incomplete")
TIMESTAMP_FORMAT = "%Y%m%dT%H%M%S"
UNFINISHED_STATUSES = ("running", "incomplete")


@dataclass
class RunSummary:
    """What the index needs to know about one run, cheap to cache as JSON."""

    rel: str                      # "queue/20261121T082000", relative to the store
    name: str
    timestamp: str                # the run dir's name
    started: str | None           # ISO 8601, UTC
    status: str                   # test.json status, or "missing"
    verdict: str                  # one of VERDICTS
    anomaly_types: list[str] = field(default_factory=list)
    bad_anomaly_types: list[str] = field(default_factory=list)
    workload: str | None = None
    nemesis: list[str] = field(default_factory=list)
    txn: bool | None = None
    duration_s: float | None = None
    ops: int | None = None
    has_report: bool = False
    problems: list[str] = field(default_factory=list)
    note: str | None = None       # why a verdict is unknown, when results.json says
    kafka: str | None = None      # "3.0.0 zk": the release the run tested (test.json "kafka")
    # an invalid run the faults that ran explain (results.json "faults"): those that may lose data
    expected_under: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RunSummary":
        return cls(**data)


def read_json_file(path: Path) -> tuple[Any, str | None]:
    """(data, None) or (None, problem) — never raises for missing or corrupt files."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except FileNotFoundError:
        return None, f"{path.name}: missing"
    except (OSError, UnicodeDecodeError) as e:
        return None, f"{path.name}: unreadable ({e})"
    except json.JSONDecodeError as e:
        return None, f"{path.name}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})"


def read_test_json(run_dir: Path) -> tuple[dict[str, Any], str | None]:
    data, problem = read_json_file(run_dir / "test.json")
    if data is not None and not isinstance(data, dict):
        return {}, "test.json: not a JSON object"
    return data or {}, problem


def read_results_json(run_dir: Path) -> tuple[dict[str, Any], str | None]:
    data, problem = read_json_file(run_dir / "results.json")
    if data is not None and not isinstance(data, dict):
        return {}, "results.json: not a JSON object"
    return data or {}, problem


def verdict_of(results: dict[str, Any], status: str) -> str:
    """valid / invalid / unknown from results.json; incomplete when there is none
    or the run did not finish."""
    if not results or "valid" not in results:
        return "incomplete"
    if status in UNFINISHED_STATUSES:
        return "incomplete"
    valid = results.get("valid")
    if valid is True:
        return "valid"
    if valid is False:
        return "invalid"
    return "unknown"


def unknown_reason(results: dict[str, Any]) -> str | None:
    reason = first_present(results, "not_checked", "unknown_reason")
    return str(reason) if reason is not None else None


def first_present(data: dict[str, Any], *names: str) -> Any:
    for name in names:
        if data.get(name) is not None:
            return data[name]
    return None


def option(test: dict[str, Any], *names: str) -> Any:
    """A setting from test.json, at the top level or under "options"."""
    found = first_present(test, *names)
    if found is None and isinstance(test.get("options"), dict):
        found = first_present(test["options"], *names)
    return found


def parse_time(value: Any) -> datetime | None:
    """ISO 8601 strings, epoch seconds, or the run dir's timestamp format."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1e9 if value > 1e14 else value  # ns or s since the epoch
        return datetime.fromtimestamp(seconds, tz=timezone.utc)
    if not isinstance(value, str):
        return None
    for parse in (datetime.fromisoformat, lambda s: datetime.strptime(s, TIMESTAMP_FORMAT)):
        try:
            parsed = parse(value.replace("Z", "+00:00"))
        except ValueError:
            continue
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
    return None


def as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part for part in value.replace(",", " ").split() if part]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def count_invocations(history: Path) -> int | None:
    """Operations invoked, counted on bytes so a big history costs one quick scan."""
    count = 0
    try:
        with open(history, "rb") as f:
            while chunk := f.read(1 << 20):
                count += chunk.count(b'"invoke"')
    except OSError:
        return None
    return count


def ops_count(test: dict[str, Any], results: dict[str, Any], history: Path) -> int | None:
    """The checker's count, else the runner's completion counts, else a scan of the history."""
    stats = results.get("stats") if isinstance(results.get("stats"), dict) else {}
    for name in ("ops", "op_count", "operations", "invocations"):
        if isinstance(stats.get(name), int):
            return stats[name]
    counts = test.get("counts")
    if isinstance(counts, dict) and counts and all(isinstance(v, int) for v in counts.values()):
        return sum(counts.values())
    return count_invocations(history) if history.exists() else None


def duration_of(test: dict[str, Any]) -> float | None:
    start = parse_time(first_present(test, "start_time", "started", "start"))
    end = parse_time(first_present(test, "end_time", "ended", "end"))
    if start and end:
        return max(0.0, (end - start).total_seconds())
    seconds = first_present(test, "duration_s", "duration")
    return float(seconds) if isinstance(seconds, (int, float)) else None


def read_run(run_dir: Path, store: Path | None = None) -> RunSummary:
    """Summarise one run directory; never raises for anything inside it."""
    run_dir = Path(run_dir)
    test, test_problem = read_test_json(run_dir)
    results, results_problem = read_results_json(run_dir)
    problems = [p for p in (test_problem, results_problem) if p]
    status = str(test.get("status") or ("missing" if test_problem else "unknown"))
    verdict = verdict_of(results, status)
    if verdict == "incomplete" and status == "running":
        problems.append("test.json: status is still 'running' (the run is under way or was killed)")
    started = parse_time(first_present(test, "start_time", "started", "start")) or parse_time(run_dir.name)
    rel = str(run_dir.relative_to(store)) if store else run_dir.name
    return RunSummary(
        rel=rel,
        name=str(test.get("name") or run_dir.parent.name),
        timestamp=run_dir.name,
        started=started.isoformat() if started else None,
        status=status,
        verdict=verdict,
        anomaly_types=as_list(results.get("anomaly_types")),
        bad_anomaly_types=as_list(results.get("bad_anomaly_types")),
        workload=option(test, "workload"),
        nemesis=as_list(option(test, "nemesis", "nemeses")),
        txn=option(test, "txn"),
        duration_s=duration_of(test),
        ops=ops_count(test, results, run_dir / "history.jsonl"),
        has_report=(run_dir / "report.html").is_file(),
        problems=problems,
        note=unknown_reason(results),
        kafka=release_of(test),
        expected_under=expected_under(results),
    )


def expected_under(results: dict[str, Any]) -> list[str]:
    """The faults that may lose data, when they explain why the run is invalid
    (checkers/verdict/faults.py); [] otherwise, and for runs checked before."""
    faults = results.get("faults") if isinstance(results, dict) else None
    if not isinstance(faults, dict) or faults.get("verdict") != EXPECTED:
        return []
    return as_list(faults.get("may_lose_data"))


def release_of(test: dict) -> str | None:
    """"3.0.0 zk" from test.json's "kafka" (a Kafka release; absent before versions were
    recorded), or "tansu 0.6.0" from its "db" for a system without Kafka's releases."""
    kafka, db = test.get("kafka"), test.get("db")
    if isinstance(kafka, dict) and kafka.get("version"):
        return " ".join(str(kafka[k]) for k in ("version", "mode") if kafka.get(k))
    if isinstance(db, dict) and db.get("system"):
        return f"{db['system']} {db.get('version', '?')}"
    return None


def system_label(release: str) -> str:
    """A run's release as pages show it: "kafka 3.0.0 zk", "tansu 0.6.0"."""
    return f"kafka {release}" if release[:1].isdigit() else release


def looks_like_run_dir(path: Path) -> bool:
    if any((path / name).exists() for name in RUN_FILES):
        return True
    try:
        datetime.strptime(path.name, TIMESTAMP_FORMAT)
        return True
    except ValueError:
        return False


def run_dirs(store: Path) -> list[Path]:
    """Every `<test-name>/<timestamp>/` under the store (not `latest`, not hidden),
    only real directories inside the store."""
    store = Path(store)
    found = []
    for test_entry in scandir_sorted(store):
        if test_entry.name.startswith(".") or test_entry.is_symlink() or not test_entry.is_dir():
            continue
        for run_entry in scandir_sorted(Path(test_entry.path)):
            path = Path(run_entry.path)
            if run_entry.name.startswith(".") or run_entry.is_symlink() or not run_entry.is_dir():
                continue
            if looks_like_run_dir(path):
                found.append(path)
    return found


def scandir_sorted(path: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def sort_newest_first(summaries: list[RunSummary]) -> list[RunSummary]:
    return sorted(summaries, key=lambda s: (s.started or "", s.timestamp, s.rel), reverse=True)


def list_runs(store: Path) -> list[RunSummary]:
    """All runs in the store, newest first (uncached; see results/index_cache.py)."""
    store = Path(store)
    return sort_newest_first([read_run(d, store) for d in run_dirs(store)])
