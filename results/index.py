"""The index of all runs in a store: cached summaries, filters, paging, trend chart.

The same page is served by `logtrial serve` (filtered and paged on the server)
and written as static HTML by `logtrial index` (every row on one page, filtered
in the browser by a few lines of inline script), for CI artifacts.

Summaries are cached in `<store>/.logtrial-index.json`, keyed by run dir and a
signature of its files (size + mtime), so listing thousands of runs costs a few
stats per run instead of reading every results.json and history.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

from results.html import VERDICT_COLOURS, badge, esc, fmt_seconds, href, page, tags
from results.runs import RUN_FILES, VERDICTS, RunSummary, read_run, run_dirs, sort_newest_first, system_label

CACHE_FILE = ".logtrial-index.json"
PAGE_SIZE = 50
TREND_BUCKETS = 40
SIGNED_FILES = RUN_FILES + ("report.html",)


def signature(run_dir: Path) -> list[Any]:
    """Changes whenever a file the summary depends on changes."""
    sig: list[Any] = []
    for name in SIGNED_FILES:
        try:
            stat = os.stat(run_dir / name)
            sig.append([stat.st_size, stat.st_mtime_ns])
        except OSError:
            sig.append(None)
    return sig


class SummaryCache:
    """Run summaries of one store, re-read only for runs whose files changed."""

    def __init__(self, store: Path):
        self.store = Path(store)
        self.entries: dict[str, dict[str, Any]] = self.load()

    def load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads((self.store / CACHE_FILE).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}  # no cache or a damaged one: rebuild it

    def save(self) -> None:
        temporary = self.store / (CACHE_FILE + ".tmp")
        try:
            temporary.write_text(json.dumps(self.entries), encoding="utf-8")
            os.replace(temporary, self.store / CACHE_FILE)
        except OSError:
            pass  # a read-only store still lists, just without a cache

    def summaries(self) -> list[RunSummary]:
        fresh: dict[str, dict[str, Any]] = {}
        changed = False
        for run_dir in run_dirs(self.store):
            rel = str(run_dir.relative_to(self.store))
            sig = signature(run_dir)
            cached = self.entries.get(rel)
            if not (isinstance(cached, dict) and cached.get("sig") == sig):
                cached = {"sig": sig, "summary": read_run(run_dir, self.store).to_json()}
                changed = True
            fresh[rel] = cached
        changed = changed or fresh.keys() != self.entries.keys()
        self.entries = fresh
        if changed:
            self.save()
        return sort_newest_first([self.from_cache(rel, e) for rel, e in fresh.items()])

    def from_cache(self, rel: str, entry: dict[str, Any]) -> RunSummary:
        try:
            return RunSummary.from_json(entry["summary"])
        except (KeyError, TypeError):  # a cache written by another version
            return read_run(self.store / rel, self.store)


@dataclass
class Filters:
    verdict: str = ""
    workload: str = ""
    nemesis: str = ""

    @classmethod
    def from_query(cls, query: dict[str, list[str]]) -> "Filters":
        return cls(**{name: (query.get(name) or [""])[0] for name in ("verdict", "workload", "nemesis")})

    def matches(self, run: RunSummary) -> bool:
        return ((not self.verdict or run.verdict == self.verdict)
                and (not self.workload or (run.workload or "") == self.workload)
                and (not self.nemesis or self.nemesis in (run.nemesis or ["none"])))

    def query(self, **changes: Any) -> str:
        params = {k: v for k, v in {**self.__dict__, **changes}.items() if v not in ("", None)}
        return "?" + urlencode(params) if params else "?"


@dataclass
class Links:
    """Where the index points: served pages use absolute URLs, the static file relative ones."""

    run: Callable[[RunSummary], str]
    zip: Callable[[RunSummary], str] | None = None


def served_links() -> Links:
    def run(s: RunSummary) -> str:
        return f"/runs/{s.rel}/report.html" if s.has_report else f"/runs/{s.rel}/"
    return Links(run=run, zip=lambda s: f"/zip/{s.rel}")


def static_links() -> Links:
    return Links(run=lambda s: f"{s.rel}/report.html" if s.has_report else f"{s.rel}/")


def trend_svg(runs: list[RunSummary]) -> str:
    """Stacked bars of verdicts over time (runs bucketed by start time)."""
    times = [(datetime.fromisoformat(r.started).timestamp(), r.verdict) for r in runs if r.started]
    if not times:
        return ""
    lo, hi = min(t for t, _ in times), max(t for t, _ in times)
    span = max(hi - lo, 1.0)
    counts = [dict.fromkeys(VERDICTS, 0) for _ in range(TREND_BUCKETS)]
    for t, verdict in times:
        counts[min(int((t - lo) / span * TREND_BUCKETS), TREND_BUCKETS - 1)][verdict] += 1
    tallest = max(sum(c.values()) for c in counts)
    width, height, bar = 800, 120, 800 / TREND_BUCKETS
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' id=trend width='{width}' height='{height + 30}'>"]
    for i, bucket in enumerate(counts):
        y = height
        for verdict in VERDICTS:
            h = bucket[verdict] / tallest * (height - 10)
            if h:
                y -= h
                parts.append(f"<rect x='{i * bar + 1:.1f}' y='{y:.1f}' width='{bar - 2:.1f}' height='{h:.1f}' "
                             f"fill='{VERDICT_COLOURS[verdict]}'><title>{bucket[verdict]} {verdict}</title></rect>")
    first = datetime.fromtimestamp(lo, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    last = datetime.fromtimestamp(hi, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<text x='0' y='{height + 20}' font-size='11'>{esc(first)}</text>"
                 f"<text x='{width}' y='{height + 20}' font-size='11' text-anchor='end'>{esc(last)}</text></svg>")
    return "".join(parts)


def select(name: str, current: str, options: list[str]) -> str:
    choices = "".join(f"<option value='{esc(o)}'{' selected' if o == current else ''}>{esc(o)}</option>" for o in options)
    return f"<label>{name} <select name={name}><option value=''>all</option>{choices}</select></label> "


def filter_form(runs: list[RunSummary], filters: Filters) -> str:
    workloads = sorted({r.workload for r in runs if r.workload})
    nemeses = sorted({n for r in runs for n in (r.nemesis or ["none"])})
    return ("<form id=filters method=get>" + select("verdict", filters.verdict, list(VERDICTS))
            + select("workload", filters.workload, workloads) + select("nemesis", filters.nemesis, nemeses)
            + "<button type=submit>filter</button></form>")


def run_row(run: RunSummary, links: Links) -> list[str]:
    zip_link = f" <a href='{href(links.zip(run))}'>zip</a>" if links.zip else ""
    notes = run.problems + ([run.note] if run.note else [])
    problems = (f" <span class=muted title='{esc('; '.join(notes))}'>{esc(notes[0][:60])}</span>" if notes else "")
    return [f"<a class=run href='{href(links.run(run))}'>{esc(run.name)}</a>"
            f"<br><span class=muted>{esc(run.timestamp)}</span>{zip_link}",
            esc((run.started or run.timestamp).replace("T", " ")[:19]),
            badge(run.verdict) + expected_note(run) + problems,
            tags(run.anomaly_types, run.bad_anomaly_types),
            esc(run.workload or "?") + (f"<br><span class=muted>{esc(system_label(run.kafka))}</span>" if run.kafka else ""),
            esc(", ".join(run.nemesis) or "none"),
            fmt_seconds(run.duration_s), esc(run.ops if run.ops is not None else "?")]


def expected_note(run: RunSummary) -> str:
    """Beside an invalid badge: the faults that explain it, when they do."""
    if not run.expected_under:
        return ""
    return (f"<br><span class=expected title='only acknowledged data missing from reads, which these faults "
            f"may delete'>expected under {esc(', '.join(run.expected_under))}</span>")


def row_attrs(run: RunSummary) -> str:
    return (f"data-verdict='{esc(run.verdict)}' data-workload='{esc(run.workload or '')}' "
            f"data-nemesis='{esc(' '.join(run.nemesis or ['none']))}'")


HEADERS = ["run", "started", "verdict", "anomalies", "workload", "nemesis", "duration", "ops"]

STATIC_FILTER_SCRIPT = """
document.getElementById('filters').addEventListener('submit', function (e) {
  e.preventDefault();
  var f = new FormData(e.target), shown = 0;
  document.querySelectorAll('#runs tbody tr').forEach(function (row) {
    var ok = (!f.get('verdict') || row.dataset.verdict === f.get('verdict'))
      && (!f.get('workload') || f.get('workload') === row.dataset.workload)
      && (!f.get('nemesis') || row.dataset.nemesis.split(' ').indexOf(f.get('nemesis')) >= 0);
    row.style.display = ok ? '' : 'none'; if (ok) shown++;
  });
  document.getElementById('shown').textContent = shown;
});
"""


def runs_table(runs: list[RunSummary], links: Links) -> str:
    rows = "".join(f"<tr {row_attrs(r)}>" + "".join(f"<td>{c}</td>" for c in run_row(r, links)) + "</tr>" for r in runs)
    head = "".join(f"<th>{h}</th>" for h in HEADERS)
    return f"<table id=runs><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def verdict_counts(runs: list[RunSummary]) -> str:
    counts = {v: sum(r.verdict == v for r in runs) for v in VERDICTS}
    return " ".join(f"{badge(v)} {n}" for v, n in counts.items() if n)


def pager(filters: Filters, page_no: int, pages: int) -> str:
    if pages <= 1:
        return ""
    prev = f"<a href='{href(filters.query(page=page_no - 1))}'>← newer</a>" if page_no > 1 else ""
    nxt = f"<a href='{href(filters.query(page=page_no + 1))}'>older →</a>" if page_no < pages else ""
    return f"<p class=pager>{prev} page {page_no} of {pages} {nxt}</p>"


def render_index(runs: list[RunSummary], filters: Filters, links: Links, page_no: int = 1,
                 page_size: int | None = PAGE_SIZE) -> str:
    """The index page. With page_size None every matching run is on one page (static mode)."""
    matching = [r for r in runs if filters.matches(r)]
    pages = max(1, -(-len(matching) // page_size)) if page_size else 1
    page_no = min(max(page_no, 1), pages)
    shown = matching[(page_no - 1) * page_size: page_no * page_size] if page_size else matching
    body = (f"<h1>logtrial runs</h1><p>{len(runs)} runs: {verdict_counts(runs)}</p>"
            f"<h2>Verdicts over time</h2>{trend_svg(matching)}"
            f"<h2>Runs</h2>{filter_form(runs, filters)}"
            f"<p class=muted><span id=shown>{len(matching)}</span> matching, newest first</p>"
            + pager(filters, page_no, pages) + runs_table(shown, links) + pager(filters, page_no, pages))
    return page("logtrial runs", body, script="" if page_size else STATIC_FILTER_SCRIPT)


def write_static_index(store: Path, out: Path | None = None) -> Path:
    """`logtrial index`: the whole index as one static page (default: <store>/index.html)."""
    store = Path(store)
    out = Path(out) if out else store / "index.html"
    runs = SummaryCache(store).summaries()
    links = static_links()
    if out.resolve().parent != store.resolve():  # links must stay right from wherever the page lives
        prefix = os.path.relpath(store.resolve(), out.resolve().parent)
        links = Links(run=lambda s: f"{prefix}/{static_links().run(s)}")
    out.write_text(render_index(runs, Filters(), links, page_size=None), encoding="utf-8")
    return out
