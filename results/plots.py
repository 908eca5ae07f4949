"""Matplotlib plots for the report, as inline PNG data URIs.

Every plot over time shades the fault windows by kind, so a latency spike or a
throughput drop can be read against the fault that caused it. Figures are built
with the object API (no pyplot state), so reports can be built from threads.
"""
from __future__ import annotations

import base64
import dataclasses
import io
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from results.timeline import THROUGHPUT_BUCKET_S, Timeline

TYPE_COLOURS = {"ok": "#2e9c48", "fail": "#d1342f", "info": "#e8a33d"}
FAULT_COLOURS = ["#8da0cb", "#fc8d62", "#66c2a5", "#e78ac3", "#a6d854", "#ffd92f", "#b3b3b3"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINE_STYLES = ["-", "--", ":", "-."]
QUANTILES = (0.5, 0.95, 0.99, 1.0)
QUANTILE_BUCKETS = 40
LAYOUT = {"left": 0.07, "right": 0.80, "bottom": 0.14, "top": 0.96}


@dataclass
class Plot:
    title: str
    data_uri: str
    caption: str


def new_axes(ylabel: str) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(10, 3.6), dpi=90)
    axes = figure.add_subplot()
    axes.set_xlabel("time since test start (s)")
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)
    return figure, axes


def shade_faults(axes: Axes, timeline: Timeline) -> list[Patch]:
    """Shade each fault window (and mark the run's phases); returns legend
    handles, one per kind."""
    mark_phases(axes, timeline.phases, timeline.end_s)
    kinds = timeline.faults.kinds()
    colours = {kind: FAULT_COLOURS[i % len(FAULT_COLOURS)] for i, kind in enumerate(kinds)}
    for kind, start, end in timeline.faults.windows:
        axes.axvspan(start, max(end, start + 1e-3), color=colours[kind], alpha=0.18, lw=0)
    handles: list[Any] = [Patch(color=colours[kind], alpha=0.35, label=f"fault: {kind}") for kind in kinds]
    for i, (_, time_s) in enumerate(timeline.faults.instants):
        line = axes.axvline(time_s, color="#777", lw=0.6, ls=":", label="other nemesis event")
        if i == 0:
            handles.append(line)
    return handles


@dataclass(frozen=True)
class PhaseSpan:
    name: str
    start_s: float
    end_s: float | None  # None: until the end of the plot


# phases worth marking: after "main" the load stops on purpose, which must not
# read like an outage caused by the last fault; "open" (the clients made before the
# clock, harness/client_open.py) has no ops, so it must not read as setup either
MARKED_PHASES = ("setup", "open", "main", "heal", "recover", "final")


def phase_spans(test_json: dict[str, Any] | None) -> list[PhaseSpan]:
    """The run's phases from test.json ("phases": [{"phase", "time_s"}, ...])."""
    marks = [(p.get("phase"), p.get("time_s")) for p in (test_json or {}).get("phases", [])
             if isinstance(p, dict) and isinstance(p.get("time_s"), (int, float))]
    if marks and marks[0][0] != "setup":
        marks.insert(0, ("setup", 0.0))  # the runner starts in setup, with the history's clock
    spans = []
    for i, (name, start) in enumerate(marks):
        end = marks[i + 1][1] if i + 1 < len(marks) else None
        if name in MARKED_PHASES:
            spans.append(PhaseSpan(str(name), float(start), end))
    return spans


PHASE_FONT_PT = 7
PHASE_ROW_PT = 10  # a label that would run into the one before drops this far, inside the plot


def phase_label_rows(phases: list[PhaseSpan], end_s: float, axes_width_pt: float) -> list[int]:
    """The row of each phase's label: 0 above the plot, 1, 2... below its top edge. A
    label goes in the first row where it clears the labels already there (heal and
    recover are often a second apart, their labels one over the other)."""
    scale = axes_width_pt / max(end_s, 1e-3)  # points per second
    row_ends: list[float] = []  # where each row's last label ends, in points
    rows = []
    for span in phases:
        start = span.start_s * scale
        width = (len(span.name) + 1) * PHASE_FONT_PT * 0.62  # a generous average glyph width
        row = next((r for r, end in enumerate(row_ends) if start >= end), len(row_ends))
        if row == len(row_ends):
            row_ends.append(0.0)
        row_ends[row] = start + width
        rows.append(row)
    return rows


def mark_phases(axes: Axes, phases: list[PhaseSpan], end_s: float) -> None:
    """Alternate light bands behind the data, each labelled at the top, in rows so that
    no two labels overlap."""
    rows = phase_label_rows(phases, end_s, axes_width_points(axes))
    for i, (span, row) in enumerate(zip(phases, rows)):
        end = span.end_s if span.end_s is not None else end_s
        if i % 2:
            axes.axvspan(span.start_s, max(end, span.start_s + 1e-3), color="#000", alpha=0.04, lw=0, zorder=0)
        if span.start_s > 0:
            axes.axvline(span.start_s, color="#444", lw=0.8, ls="--", zorder=1)
        axes.annotate(f" {span.name}", (span.start_s, 1.0), xycoords=axes.get_xaxis_transform(),
                      xytext=(0, -PHASE_ROW_PT * row), textcoords="offset points", va="bottom", ha="left",
                      fontsize=PHASE_FONT_PT, color="#444", annotation_clip=False)


def axes_width_points(axes: Axes) -> float:
    """The plot's width once finish() has laid it out."""
    return axes.figure.get_figwidth() * 72 * (LAYOUT["right"] - LAYOUT["left"])


def finish(figure: Figure, axes: Axes, handles: list[Any], timeline: Timeline, end_s: float | None = None) -> str:
    axes.set_xlim(0, max(end_s if end_s is not None else timeline.end_s, 1e-3))
    if handles:
        axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    figure.subplots_adjust(**LAYOUT)  # fixed: tight_layout costs a draw
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def latency_scatter(timeline: Timeline) -> Plot | None:
    if not timeline.latencies:
        return None
    figure, axes = new_axes("latency (ms)")
    handles = []
    fs = sorted({f for f, _ in timeline.latencies})
    for (f, kind), reservoir in sorted(timeline.latencies.items()):
        points = np.array(reservoir.items, dtype=float).reshape(-1, 2)
        marker = MARKERS[fs.index(f) % len(MARKERS)]
        handles.append(axes.scatter(points[:, 0], points[:, 1], s=6, marker=marker, alpha=0.55, linewidths=0,
                                    color=TYPE_COLOURS.get(kind, "#555"), label=f"{f} {kind}"))
    axes.set_yscale("log")
    handles += shade_faults(axes, timeline)
    sampled = sum(len(r.items) for r in timeline.latencies.values())
    total = sum(r.seen for r in timeline.latencies.values())
    return Plot("Latency over time", finish(figure, axes, handles, timeline),
                f"Each point is one operation, at its invocation time, coloured by outcome. "
                f"{sampled} of {total} operations shown (uniform sample).")


def bucket_quantiles(points: np.ndarray, end_s: float) -> tuple[np.ndarray, dict[float, np.ndarray]]:
    edges = np.linspace(0, max(end_s, 1e-3), QUANTILE_BUCKETS + 1)
    which = np.clip(np.digitize(points[:, 0], edges) - 1, 0, QUANTILE_BUCKETS - 1)
    centres = (edges[:-1] + edges[1:]) / 2
    values = {q: np.full(QUANTILE_BUCKETS, np.nan) for q in QUANTILES}  # NaN: a gap, not a line across it
    for bucket in range(QUANTILE_BUCKETS):
        latencies = points[which == bucket, 1]
        if latencies.size:
            for q in QUANTILES:
                values[q][bucket] = np.quantile(latencies, q)
    return centres, values


def latency_quantiles(timeline: Timeline) -> Plot | None:
    by_f: dict[str, list] = {}
    for (f, _), reservoir in timeline.latencies.items():
        by_f.setdefault(f, []).extend(reservoir.items)
    if not by_f:
        return None
    figure, axes = new_axes("latency (ms)")
    handles = []
    for i, (f, items) in enumerate(sorted(by_f.items())):
        centres, values = bucket_quantiles(np.array(items, dtype=float).reshape(-1, 2), timeline.end_s)
        for q, style in zip(QUANTILES, LINE_STYLES):
            (line,) = axes.plot(centres, values[q], style, color=f"C{i}", lw=1.2, label=f"{f} p{q * 100:g}")
            handles.append(line)
    axes.set_yscale("log")
    handles += shade_faults(axes, timeline)
    return Plot("Latency quantiles", finish(figure, axes, handles, timeline),
                f"Quantiles of latency per operation type over {QUANTILE_BUCKETS} time buckets, all outcomes.")


def throughput(timeline: Timeline) -> Plot | None:
    if not timeline.throughput:
        return None
    figure, axes = new_axes("completions per second")
    handles = []
    buckets = np.arange(0, int(timeline.end_s // THROUGHPUT_BUCKET_S) + 1)
    fs = sorted({f for f, _ in timeline.throughput})
    for (f, kind), counts in sorted(timeline.throughput.items()):
        rates = np.array([counts.get(int(b), 0) for b in buckets]) / THROUGHPUT_BUCKET_S
        (line,) = axes.plot(buckets * THROUGHPUT_BUCKET_S, rates, lw=1.1, label=f"{f} {kind}",
                            color=TYPE_COLOURS.get(kind, "#555"), ls=LINE_STYLES[fs.index(f) % len(LINE_STYLES)])
        handles.append(line)
    handles += shade_faults(axes, timeline)
    return Plot("Throughput", finish(figure, axes, handles, timeline),
                "Operations completed per second, by type and outcome.")


def realtime_lag(timeline: Timeline) -> Plot | None:
    if not timeline.lags.items:
        return None
    figure, axes = new_axes("lag (s)")
    points = np.array(timeline.lags.items, dtype=float).reshape(-1, 2)
    handles = [axes.scatter(points[:, 0], points[:, 1], s=5, alpha=0.5, linewidths=0, color="#3465a4", label="poll")]
    handles += shade_faults(axes, timeline)
    return Plot("Realtime lag", finish(figure, axes, handles, timeline),
                "For each key a poll read: how long before the poll began an acknowledged send had "
                "already written past the highest offset the poll saw (0 = up to date).")


def unseen_series(results: dict[str, Any]) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    series = results.get("series") if isinstance(results.get("series"), dict) else {}
    unseen = series.get("unseen") if isinstance(series.get("unseen"), dict) else {}
    times, keys = unseen.get("times"), unseen.get("keys")
    if not isinstance(times, list) or not times or not isinstance(keys, dict):
        return None
    try:
        seconds = np.array(times, dtype=float) / 1e9
        counts = {str(k): np.array(v, dtype=float) for k, v in keys.items() if isinstance(v, list) and len(v) == len(times)}
    except (TypeError, ValueError):
        return None
    return (seconds, counts) if counts else None


# the state at the end of the history, held past its last event over this share of
# the plot: the final reads take a fraction of a second at the very end of a run,
# inside its last bucket or two, so a drop they make must not be a sliver at the edge
END_TAIL = 0.04
UNSEEN_SHOWN = 12


def unseen_steps(seconds: np.ndarray, counts: dict[str, np.ndarray],
                 end_s: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """x and each key's y for a step drawing (step="post") of the series: each count
    (taken at the end of its time bucket) over the whole bucket, and the last count
    over the tail after the end of the history (`end_s`, or the last bucket's end).
    Drawn from sample to sample instead, a drop inside the last bucket (every send
    first read by the final reads) was a slope one bucket wide at the plot's edge,
    and the plot seemed to end where the last but one bucket did."""
    end = max(end_s, float(seconds.max()))
    x = np.concatenate(([0.0], seconds[:-1], [end, end + END_TAIL * max(end, 1e-3)]))
    return x, {k: np.concatenate((c, c[-1:], c[-1:])) for k, c in counts.items()}


def checked_unseen(results: dict[str, Any]) -> int | None:
    """The checker's count of `unseen` anomalies (0 when it found none), or None
    when results.json holds no anomalies."""
    anomalies = results.get("anomalies")
    if not isinstance(anomalies, dict):
        return None
    found = anomalies.get("unseen")
    count = found.get("count") if isinstance(found, dict) else 0
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def draw_unseen(axes: Axes, x: np.ndarray, ys: dict[str, np.ndarray]) -> list[Any]:
    """unseen_steps' series stacked by key (the UNSEEN_SHOWN highest peaks, the
    rest as one band), with the end of the history marked and its total written
    there; returns legend handles."""
    keys = sorted(ys, key=lambda k: -ys[k].max())
    shown, rest = keys[:UNSEEN_SHOWN], keys[UNSEEN_SHOWN:]
    stacks = [ys[k] for k in shown] + ([sum(ys[k] for k in rest)] if rest else [])
    labels = [f"key {k}" for k in shown] + ([f"{len(rest)} other keys"] if rest else [])
    handles, below = [], np.zeros(len(x))
    for i, (y, label) in enumerate(zip(stacks, labels)):
        handles.append(axes.fill_between(x, below, below + y, step="post", alpha=0.8, lw=0, color=f"C{i % 10}",
                                         label=label))
        below = below + y
    axes.axvline(x[-2], color="#444", lw=0.8, ls=":")
    axes.annotate(f" end: {below[-1]:g}", (x[-2], below[-1]), xytext=(0, 2), textcoords="offset points",
                  va="bottom", ha="left", fontsize=PHASE_FONT_PT, color="#444")
    return handles


def unseen_caption(at_end: float, checked: int | None) -> str:
    """What the plot shows, and its end against the checker's `unseen` count."""
    text = ("Acknowledged messages no ok poll had returned yet, stacked by key, each count as at the end of its "
            f"time bucket. Right of the dotted line, what was still unseen when the history ended: {at_end:g}")
    if checked is None:
        return text + "."
    if checked == at_end:
        return text + ", the checker's unseen count."
    return text + f" on the keys shown, of the checker's {checked} unseen on every key."


def unseen(results: dict[str, Any], timeline: Timeline) -> Plot | None:
    series = unseen_series(results)
    if series is None:
        return None
    x, ys = unseen_steps(*series, timeline.end_s)
    figure, axes = new_axes("unseen messages")
    handles = draw_unseen(axes, x, ys) + shade_faults(axes, timeline)
    at_end = float(sum(y[-1] for y in ys.values()))
    return Plot("Unseen messages", finish(figure, axes, handles, timeline, float(x[-1])),
                unseen_caption(at_end, checked_unseen(results)))


def all_plots(timeline: Timeline, results: dict[str, Any], phases: list[PhaseSpan] = ()) -> list[Plot]:
    """Every plot over time, with the run's phases marked (see mark_phases)."""
    timeline = dataclasses.replace(timeline, phases=list(phases))
    made = [latency_scatter(timeline), latency_quantiles(timeline), throughput(timeline),
            unseen(results, timeline), realtime_lag(timeline)]
    return [plot for plot in made if plot is not None]
