"""report.html for one run directory.

`write_report(run_dir)` reads test.json and results.json (either may be missing
or corrupt), streams history.jsonl once (plots, offset diagrams and history
excerpts are all gathered in that single pass), and writes a self-contained
report.html beside them. Nothing in the run dir can make it raise: what cannot
be read is listed under "Problems".
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from checkers.verdict.faults import EXPECTED
from checkers.verdict.taxonomy import words_for
from results.cycle_svg import cycle_svg
from results.excerpts import MAX_REFERENCES, ExcerptCollector
from checkers.history.stream import events
from results.html import badge, esc, fmt_seconds, generic, href, page, table, tags
from results.offsets import OffsetCollector, diagram_svg, focus_windows
from results.plots import PhaseSpan, all_plots, phase_spans
from results.runs import RunSummary, read_results_json, read_run, read_test_json, system_label
from results.timeline import Timeline, TimelineBuilder

MAX_EXAMPLES_SHOWN = 5
MAX_NODE_FILES = 200
RUN_FILE_LINKS = ("history.jsonl", "results.json", "test.json", "logtrial.log")
EXAMPLE_FIELDS_SHOWN = {"key", "offsets", "values", "ops", "explanation", "cycle", "steps", "keys"}
OP_COLUMNS = ("index", "process", "time", "f", "type")  # time shown in seconds


def anomalies_of(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    anomalies = results.get("anomalies")
    if not isinstance(anomalies, dict):
        return {}
    return {str(k): v if isinstance(v, dict) else {"details": v} for k, v in anomalies.items()}


def shown_examples(body: dict[str, Any]) -> list[Any]:
    examples = body.get("examples")
    return examples[:MAX_EXAMPLES_SHOWN] if isinstance(examples, list) else []


def referenced_indices(value: Any, found: set[int]) -> set[int]:
    """Every op index named anywhere inside an example (ops, cycle ops, ...)."""
    if isinstance(value, dict):
        if isinstance(value.get("index"), int) and not isinstance(value.get("index"), bool):
            found.add(value["index"])
        for child in value.values():
            referenced_indices(child, found)
    elif isinstance(value, list):
        for child in value:
            referenced_indices(child, found)
    return found


def all_references(results: dict[str, Any]) -> set[int]:
    found: set[int] = set()
    for body in anomalies_of(results).values():
        for example in shown_examples(body):
            referenced_indices(example, found)
    return set(sorted(found)[:MAX_REFERENCES])


class HistoryPass:
    """The one streaming pass over the history that feeds every collector."""

    def __init__(self, results: dict[str, Any]):
        references = all_references(results)
        self.timeline = TimelineBuilder()
        self.excerpts = ExcerptCollector(references)
        self.offsets = OffsetCollector(focus_windows(results), references)

    def run(self, history: Path) -> Timeline:
        if history.is_file():
            for line in events(history, self.timeline.timeline.bad_lines):
                self.timeline.feed(line)
                self.excerpts.feed(line)
                self.offsets.feed(line)
        return self.timeline.finish()


# ---- sections -------------------------------------------------------------------------------


def verdict_reason(summary: RunSummary, results: dict[str, Any]) -> str:
    bad = summary.bad_anomaly_types
    if summary.verdict == "invalid" and bad:
        return f"made invalid by {tags(bad, bad)}"
    if summary.verdict == "incomplete":
        return "the run did not finish or was not checked (see Problems)"
    found = f"anomalies found: {tags(summary.anomaly_types, bad)}" if summary.anomaly_types else "no anomalies found"
    if summary.verdict == "unknown":
        reason = summary.note or "the checker could not decide"
        return f"{esc(reason)}; {found}"
    return found


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def fault_row(kind: dict[str, Any]) -> list[str]:
    """One fault kind in force: its start fs, each saying whether it may lose data and why."""
    losing = kind.get("may_lose_data") if isinstance(kind.get("may_lose_data"), dict) else {}
    starts = "<br>".join(
        f"<code>{esc(f)}</code> " + (f"may lose data: {esc(losing[f])}" if f in losing else "must lose nothing")
        for f in _strings(kind.get("f")))
    return [f"<b>{esc(kind.get('fault', '?'))}</b>", esc(kind.get("strikes", "?")), starts]


def faults_section(results: dict[str, Any]) -> str:
    """Beside the verdict: which faults ran, which may lose data, and whether they explain
    what was found (results.json `faults`; a run checked before it existed has none)."""
    section = results.get("faults")
    if not isinstance(section, dict):
        return ""
    expected = badge(EXPECTED) + " " if section.get("verdict") == EXPECTED else ""
    in_force = section.get("in_force")
    kinds = [k for k in in_force if isinstance(k, dict)] if isinstance(in_force, list) else []
    return (f"<div id=faults><p>{expected}<span id=faults-why>{esc(section.get('explanation', ''))}</span></p>"
            + table(["fault", "strikes", "starts"], [fault_row(k) for k in kinds]) + "</div>")


def header_section(summary: RunSummary, results: dict[str, Any], run_dir: Path) -> str:
    why = verdict_reason(summary, results)
    links = " ".join(f"<a href='{href(name)}'>{esc(name)}</a>" for name in RUN_FILE_LINKS if (run_dir / name).exists())
    return (f"<h1>{esc(summary.name)} <span class=muted>{esc(summary.timestamp)}</span></h1>"
            f"<p id=verdict>{badge(summary.verdict, 'verdict')} <span id=verdict-why>{why}</span></p>"
            + faults_section(results) +
            f"<p class=muted>{esc(system_label(summary.kafka)) + ' · ' if summary.kafka else ''}"
            f"workload {esc(summary.workload or '?')} · nemesis {esc(', '.join(summary.nemesis) or 'none')}"
            f" · duration {fmt_seconds(summary.duration_s)} · {esc(summary.ops if summary.ops is not None else '?')} ops"
            f" · status {esc(summary.status)}</p><nav class=links>{links}</nav>")


def problems_section(summary: RunSummary, results: dict[str, Any], timeline: Timeline) -> str:
    problems = list(summary.problems)
    if results.get("not_checked"):
        problems.append(f"results.json: not checked: {results['not_checked']}")
    if timeline.bad_lines.count:
        problems.append(f"history.jsonl: {timeline.bad_lines.count} unreadable line(s): "
                        + "; ".join(timeline.bad_lines.examples))
    if timeline.unfinished:
        problems.append(f"history.jsonl: {timeline.unfinished} operation(s) invoked but never completed (count as info)")
    if not problems:
        return ""
    return "<h2 id=problems>Problems</h2><ul>" + "".join(f"<li>{esc(p)}</li>" for p in problems) + "</ul>"


def settings_section(test: dict[str, Any]) -> str:
    if not test:
        return "<h2 id=settings>Settings</h2><p class=muted>No readable test.json.</p>"
    scalars = [[esc(k), f"<code>{esc(v)}</code>"] for k, v in test.items() if not isinstance(v, (dict, list))]
    nested = "".join(f"<h3>{esc(k)}</h3>{generic(v)}" for k, v in test.items() if isinstance(v, (dict, list)))
    return "<h2 id=settings>Settings and versions</h2>" + table(["field", "value"], scalars) + nested


def op_cell(op: dict[str, Any], column: str) -> str:
    value = op.get(column, "")
    if column == "time" and isinstance(value, int):  # history times are ns since the test started
        return f"<span title='{value} ns'>{value / 1e9:.3f} s</span>"
    return esc(value)


def ops_table(ops: list[Any]) -> str:
    """One row per op; the usual columns first, then whatever else the checker gave."""
    ops = [op if isinstance(op, dict) else {"value": op} for op in ops]
    extra = sorted({k for op in ops for k in op if k not in OP_COLUMNS}, key=lambda k: (k != "value", k))
    rows = []
    for op in ops:
        index = op.get("index")
        link = f"<a href='#h{index}'>{esc(index)}</a>" if isinstance(index, int) else esc(index)
        rows.append([link] + [op_cell(op, c) for c in OP_COLUMNS[1:] + tuple(extra)])
    return table(list(OP_COLUMNS) + extra, rows)


def cycle_block(example: dict[str, Any]) -> str:
    cycle = example.get("cycle")
    if not isinstance(cycle, list) or not cycle:
        return ""
    steps = example.get("steps")
    steps_html = ("<ol>" + "".join(f"<li>{esc(s) if isinstance(s, str) else generic(s)}</li>" for s in steps) + "</ol>"
                  if isinstance(steps, list) and steps else "")
    whys = "".join(f"<li><code>{esc(e.get('edge', '?'))}</code> {esc(e.get('why', ''))}</li>"
                   for e in cycle if isinstance(e, dict) and e.get("why"))
    return (f"<div class=scroll>{cycle_svg(cycle)}</div>" + steps_html
            + (f"<ul class=edges>{whys}</ul>" if whys else ""))


def example_block(example: Any) -> str:
    if not isinstance(example, dict):
        return f"<div class=example>{generic(example)}</div>"
    parts = []
    if example.get("explanation"):
        parts.append(f"<p class=explanation>{esc(example['explanation'])}</p>")
    facts = [(name, example[name]) for name in ("key", "keys", "offsets", "values") if name in example]
    if facts:
        parts.append("<p>" + " · ".join(f"{name} <code>{esc(value)}</code>" for name, value in facts) + "</p>")
    if isinstance(example.get("ops"), list) and example["ops"]:
        parts.append(ops_table(example["ops"]))
    parts.append(cycle_block(example))
    rest = {k: v for k, v in example.items() if k not in EXAMPLE_FIELDS_SHOWN}
    if rest:
        parts.append(generic(rest))
    return "<div class=example>" + "".join(parts) + "</div>"


def anomaly_section(name: str, body: dict[str, Any], bad: bool) -> str:
    count = body.get("count", len(body.get("examples") or []) if isinstance(body.get("examples"), list) else "?")
    examples = shown_examples(body)
    total = len(body["examples"]) if isinstance(body.get("examples"), list) else 0
    words = words_for(name)
    rest = {k: v for k, v in body.items() if k not in ("count", "examples")}
    return (f"<section class=anomaly id='anomaly-{esc(name)}' data-type='{esc(name)}'>"
            f"<h3>{esc(name)} {tags(['makes the run invalid'], ['makes the run invalid']) if bad else ''}"
            f" <span class=muted>× {esc(count)}</span></h3>"
            + (f"<p>{esc(words)}</p>" if words else "")
            + "".join(example_block(e) for e in examples)
            + (f"<p class=muted>{total - len(examples)} more example(s) in results.json.</p>" if total > len(examples) else "")
            + (generic(rest) if rest else "") + "</section>")


def anomalies_section(results: dict[str, Any]) -> str:
    anomalies = anomalies_of(results)
    if not results:
        return "<h2 id=anomalies>Anomalies</h2><p class=muted>No readable results.json: the run was not checked.</p>"
    if not anomalies:
        return "<h2 id=anomalies>Anomalies</h2><p>None found.</p>"
    bad = {str(t) for t in results.get("bad_anomaly_types") or [] if isinstance(t, str)}
    ordered = sorted(anomalies, key=lambda t: (t not in bad, t))
    return "<h2 id=anomalies>Anomalies</h2>" + "".join(anomaly_section(t, anomalies[t], t in bad) for t in ordered)


def offsets_section(collector: OffsetCollector) -> str:
    drawn = [f for f in collector.focus.values() if f.rows]
    if not drawn:
        return ""
    blocks = "".join(
        f"<h3>key {esc(f.key)} <span class=muted>offsets {f.lo}–{f.hi}; {esc(', '.join(f.anomaly_types))}</span></h3>"
        f"<div class=scroll>{diagram_svg(f)}</div>" for f in drawn)
    return ("<h2 id=offsets>Offsets by key</h2><p class=muted>One row per operation in history order, one column "
            "per offset; colour = value. Red outline: an offset holding different values. Orange outline: a value "
            "at more than one offset. Bold rows are in the examples above.</p>" + blocks)


def plots_section(timeline: Timeline, results: dict[str, Any], phases: list[PhaseSpan] = ()) -> str:
    plots = all_plots(timeline, results, phases)
    if not plots:
        return "<h2 id=plots>Plots</h2><p class=muted>No operations to plot.</p>"
    return "<h2 id=plots>Plots</h2>" + "".join(
        f"<div class=plot><h3>{esc(p.title)}</h3><img alt='{esc(p.title)}' src='{p.data_uri}'>"
        f"<p class=muted>{esc(p.caption)}</p></div>" for p in plots)


def stats_section(results: dict[str, Any], timeline: Timeline) -> str:
    counted = {"events": timeline.events, **{f"{k} completions": v for k, v in sorted(timeline.op_counts.items())}}
    known = {"valid", "anomaly_types", "bad_anomaly_types", "anomalies", "stats", "series", "not_checked", "faults"}
    other = {k: v for k, v in results.items() if k not in known}
    stats = results.get("stats")
    return ("<h2 id=stats>Statistics</h2>" + generic(counted)
            + (f"<h3>Checker</h3>{generic(stats)}" if isinstance(stats, dict) and stats else "")
            + (f"<h3>Other results</h3>{generic(other)}" if other else ""))


def excerpts_section(collector: ExcerptCollector) -> str:
    blocks = collector.blocks()
    if not blocks:
        return ""
    rendered = []
    for block in blocks:
        lines = "".join(
            f"<span class='line{' ref' if e.referenced else ''}' id='h{e.index}'>"
            f"<span class=muted>{e.line_no:>7} </span>{esc(e.text)}</span>" for e in block)
        rendered.append(f"<pre class=history>{lines}</pre>")
    return ("<h2 id=history>History excerpts</h2><p class=muted>The lines of <a href='history.jsonl'>history.jsonl</a> "
            "around every operation the examples name (line numbers on the left; highlighted: the operation).</p>"
            + "".join(rendered))


def node_files(run_dir: Path) -> list[str]:
    nodes = run_dir / "nodes"
    found: list[str] = []
    for root, dirs, files in os.walk(nodes):
        dirs.sort()
        for name in sorted(files):
            found.append(os.path.relpath(os.path.join(root, name), run_dir))
            if len(found) >= MAX_NODE_FILES:
                return found
    return found


def logs_section(run_dir: Path) -> str:
    files = node_files(run_dir)
    if not files:
        return "<h2 id=logs>Node logs</h2><p class=muted>None collected.</p>"
    return "<h2 id=logs>Node logs</h2><ul>" + "".join(f"<li><a href='{href(f)}'>{esc(f)}</a></li>" for f in files) + "</ul>"


def build_report(run_dir: Path) -> str:
    run_dir = Path(run_dir)
    summary = read_run(run_dir)
    test, _ = read_test_json(run_dir)
    results, _ = read_results_json(run_dir)
    history_pass = HistoryPass(results)
    timeline = history_pass.run(run_dir / "history.jsonl")
    body = "".join([
        header_section(summary, results, run_dir),
        problems_section(summary, results, timeline),
        anomalies_section(results),
        offsets_section(history_pass.offsets),
        plots_section(timeline, results, phase_spans(test)),
        settings_section(test),
        stats_section(results, timeline),
        excerpts_section(history_pass.excerpts),
        logs_section(run_dir),
    ])
    return page(f"logtrial {summary.name} {summary.timestamp}: {summary.verdict}", body)


def write_report(run_dir: Path) -> Path:
    """Build report.html in the run dir (atomically) and return its path."""
    run_dir = Path(run_dir)
    target = run_dir / "report.html"
    temporary = run_dir / ".report.html.tmp"
    temporary.write_text(build_report(run_dir), encoding="utf-8")
    os.replace(temporary, target)
    return target
