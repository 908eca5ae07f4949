"""One streaming pass over a history, gathering what the report plots.

Memory stays bounded however long the history: latencies and lags are kept as
fixed-size uniform reservoir samples (so plots and per-bucket quantiles are
unbiased estimates), throughput as exact per-second counts, faults as windows.
"""
from __future__ import annotations

import bisect
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from results.faults import FaultWindows
from checkers.history.stream import BadLines, Line, event_time, events

NS = 1e9
RESERVOIR_SIZE = 20_000
THROUGHPUT_BUCKET_S = 1.0


class Reservoir:
    """Uniform sample of at most `size` items from a stream (Algorithm R)."""

    def __init__(self, size: int, rng: random.Random):
        self.size, self.rng, self.seen, self.items = size, rng, 0, []

    def add(self, item: Any) -> None:
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(item)
            return
        slot = self.rng.randrange(self.seen)
        if slot < self.size:
            self.items[slot] = item


class SendFrontier:
    """Per key, the acknowledged sends whose offset beat every earlier one, in
    completion order: the earliest acknowledged send above offset o is the first
    frontier entry above o, so a poll's lag is one bisect away."""

    def __init__(self) -> None:
        self.offsets: dict[Any, list[int]] = defaultdict(list)
        self.times: dict[Any, list[float]] = defaultdict(list)

    def add(self, key: Any, offset: int, time_s: float) -> None:
        offsets = self.offsets[key]
        if not offsets or offset > offsets[-1]:
            offsets.append(offset)
            self.times[key].append(time_s)

    def lag(self, key: Any, highest_polled: int, poll_start_s: float) -> float:
        """How long before the poll began a newer acknowledged value existed."""
        offsets = self.offsets.get(key)
        if not offsets:
            return 0.0
        i = bisect.bisect_right(offsets, highest_polled)
        if i == len(offsets) or self.times[key][i] > poll_start_s:
            return 0.0
        return poll_start_s - self.times[key][i]


@dataclass
class Timeline:
    latencies: dict[tuple[str, str], Reservoir]          # (f, type) -> (time_s, latency_ms)
    throughput: dict[tuple[str, str], dict[int, int]]    # (f, type) -> bucket -> completions
    lags: Reservoir                                       # (time_s, lag_s)
    faults: FaultWindows
    bad_lines: BadLines
    end_s: float = 0.0
    events: int = 0
    unfinished: int = 0                                   # invokes never completed
    op_counts: dict[str, int] = field(default_factory=dict)  # completion type -> count
    phases: list = field(default_factory=list)            # results.plots.PhaseSpan, from test.json


def micro_ops(value: Any) -> list[list[Any]]:
    if not isinstance(value, list):
        return []
    return [m for m in value if isinstance(m, list) and m and isinstance(m[0], str)]


def record_sends_and_lags(value: Any, time_s: float, start_s: float, frontier: SendFrontier, lags: Reservoir) -> None:
    """Queue workload only: acknowledged sends feed the frontier, polls yield lags."""
    for micro in micro_ops(value):
        if micro[0] == "send" and len(micro) >= 3 and isinstance(micro[2], list) and micro[2]:
            if isinstance(micro[2][0], int):
                frontier.add(str(micro[1]), micro[2][0], time_s)
        elif micro[0] == "poll" and len(micro) >= 2 and isinstance(micro[1], dict):
            for key, pairs in micro[1].items():
                offsets = [p[0] for p in pairs if isinstance(p, list) and p and isinstance(p[0], int)]
                if offsets:
                    lags.add((time_s, frontier.lag(str(key), max(offsets), start_s)))


class TimelineBuilder:
    """Fed every history line in order (see checkers/history/stream.py)."""

    def __init__(self, reservoir_size: int = RESERVOIR_SIZE, seed: int = 0):
        rng = random.Random(seed)
        self.timeline = Timeline(
            latencies=defaultdict(lambda: Reservoir(reservoir_size, rng)),
            throughput=defaultdict(lambda: defaultdict(int)),
            lags=Reservoir(reservoir_size, rng),
            faults=FaultWindows(),
            bad_lines=BadLines(),
        )
        self.pending: dict[Any, tuple[float, str]] = {}  # process -> (invoke time_s, f)
        self.frontier = SendFrontier()
        self.counts: dict[str, int] = defaultdict(int)

    def feed(self, line: Line) -> None:
        timeline, event = self.timeline, line.event
        timeline.events += 1
        time = event_time(event)
        if time is None:
            return
        time_s = time / NS
        timeline.end_s = max(timeline.end_s, time_s)
        process, kind, f = event.get("process"), str(event.get("type")), str(event.get("f"))
        if process == "nemesis":
            timeline.faults.add(f, time_s)
        elif kind == "invoke":
            self.pending[process] = (time_s, f)
        elif process in self.pending:
            self.complete(process, kind, time_s, event.get("value"))

    def complete(self, process: Any, kind: str, time_s: float, value: Any) -> None:
        start_s, f = self.pending.pop(process)
        self.counts[kind] += 1
        self.timeline.latencies[(f, kind)].add((start_s, (time_s - start_s) * 1e3))
        self.timeline.throughput[(f, kind)][int(time_s // THROUGHPUT_BUCKET_S)] += 1
        if kind == "ok":
            record_sends_and_lags(value, time_s, start_s, self.frontier, self.timeline.lags)

    def finish(self) -> Timeline:
        self.timeline.unfinished = len(self.pending)
        self.timeline.op_counts = dict(self.counts)
        self.timeline.faults.close_all(self.timeline.end_s)
        return self.timeline


def read_timeline(history: Path, reservoir_size: int = RESERVOIR_SIZE, seed: int = 0) -> Timeline:
    builder = TimelineBuilder(reservoir_size, seed)
    for line in events(history, builder.timeline.bad_lines):
        builder.feed(line)
    return builder.finish()
