"""When each fault starts and stops: a pure function of the options and the seed.

Every fault kind has its own timeline, drawn from its own rng (seeded with the seed
and the kind's name, so adding a kind leaves the others' timelines unchanged):
wait 0.5-1.5 x interval, start, hold 0.5-1.5 x interval, stop, and again. The
timelines are merged, so kinds overlap. What each start strikes is planned here
too (nodes, partition shape, clock offsets), except roles (controller, leader),
which only the running cluster can name.

`load_schedule` reads the schedule back out of an earlier run's history, with the
nodes actually struck, so a run can be replayed fault for fault.
"""
from __future__ import annotations

import heapq
import itertools
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from nemesis.kind import FAULT_KEY, MAY_LOSE_DATA_KEY, START, STOP, FaultContext
from nemesis.registry import BY_NAME, F_NAMES, make_faults

# value keys that report what happened rather than what was planned (and the kind's
# declaration, which a replay writes afresh)
RESULT_KEYS = frozenset({"at", "errors", "observed_ms", "clients_cut_from",
                         "original", "skipped", "lagging", "broker_id", "kraft_version",
                         "node", "leader", "voters", "mechanisms", "hold_ms", "dropped",
                         FAULT_KEY, MAY_LOSE_DATA_KEY})


class ScheduleError(ValueError):
    """A replayed history that cannot be turned into a schedule; names file and line."""


@dataclass(frozen=True)
class Step:
    at: float                      # seconds after the nemesis started
    fault: str                     # "partition"
    action: str                    # START or STOP
    params: dict | None = field(default=None, compare=True)  # what a start strikes

    def to_dict(self) -> dict:
        return {"at": self.at, "fault": self.fault, "action": self.action,
                "params": self.params}


def _timeline(kind: str, nodes: Sequence[str], interval: float, seed: int,
              target_specs: Sequence[str], partition_shapes: Sequence[str] | None
              ) -> Iterator[Step]:
    fault = make_faults([kind], FaultContext(partition_shapes=partition_shapes))[kind]
    rng = random.Random(f"{seed}/{kind}")
    t = 0.0
    while True:
        t += rng.uniform(0.5, 1.5) * interval
        yield Step(round(t, 3), kind, START, fault.plan(nodes, target_specs, rng))
        t += rng.uniform(0.5, 1.5) * interval
        yield Step(round(t, 3), kind, STOP)


def timelines(kinds: Sequence[str], nodes: Sequence[str], interval: float, seed: int,
              target_specs: Sequence[str], partition_shapes: Sequence[str] | None = None
              ) -> dict[str, Iterator[Step]]:
    """Each kind's endless timeline (what the nemesis runs, one thread per kind)."""
    return {kind: _timeline(kind, sorted(nodes), interval, seed, target_specs, partition_shapes)
            for kind in sorted(kinds)}


def iter_schedule(kinds: Sequence[str], nodes: Sequence[str], interval: float, seed: int,
                  target_specs: Sequence[str],
                  partition_shapes: Sequence[str] | None = None) -> Iterator[Step]:
    """The endless schedule, in time order."""
    per_kind = timelines(kinds, nodes, interval, seed, target_specs, partition_shapes)
    return heapq.merge(*per_kind.values(), key=lambda step: step.at)


def build_schedule(kinds: Sequence[str], nodes: Sequence[str], interval: float, seed: int,
                   target_specs: Sequence[str], duration: float,
                   partition_shapes: Sequence[str] | None = None) -> list[Step]:
    """The steps that fall within the first `duration` seconds."""
    steps = iter_schedule(kinds, nodes, interval, seed, target_specs, partition_shapes)
    return list(itertools.takewhile(lambda step: step.at < duration, steps))


# -- replay ----------------------------------------------------------------------------------
def load_schedule(history_path: str | Path) -> list[Step]:
    """The fault schedule recorded in a history.jsonl (nemesis events), in time order."""
    path = Path(history_path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ScheduleError(f"{path}: cannot read the history to replay: {e.strerror}") from None
    steps = []
    for number, line in enumerate(lines, start=1):
        event = _parse_line(path, number, line, is_last=number == len(lines))
        if event is not None and event.get("process") == "nemesis" and event.get("f") in F_NAMES:
            steps.append(_step_from_event(path, number, event))
    if not steps:
        raise ScheduleError(f"{path}: no nemesis events to replay "
                            f"(expected f in {', '.join(F_NAMES)})")
    return sorted(steps, key=lambda step: step.at)


def _parse_line(path: Path, number: int, line: str, is_last: bool) -> dict | None:
    if not line.strip():
        return None
    try:
        event = json.loads(line)
    except json.JSONDecodeError as e:
        if is_last:
            return None  # a torn final write: the recording run died mid-line
        raise ScheduleError(f"{path}:{number}: not a JSON object: {e}") from None
    if not isinstance(event, dict):
        raise ScheduleError(f"{path}:{number}: not a JSON object")
    return event


def _step_from_event(path: Path, number: int, event: dict) -> Step:
    fault, action = F_NAMES[event["f"]]
    value = event.get("value")
    at = value.get("at") if isinstance(value, dict) else None
    if at is None:
        if not isinstance(event.get("time"), int):
            raise ScheduleError(f"{path}:{number}: nemesis event {event['f']!r} has neither "
                                "value.at nor an integer time")
        at = event["time"] / 1e9
    if action == STOP:
        return Step(float(at), fault, STOP)
    if not isinstance(value, dict):
        raise ScheduleError(f"{path}:{number}: nemesis event {event['f']!r} has no value "
                            "saying where it struck")
    params = {k: v for k, v in value.items() if k not in RESULT_KEYS}
    _check_params(path, number, event["f"], fault, params)
    return Step(float(at), fault, START, params)


def _check_params(path: Path, number: int, f: str, fault: str, params: dict) -> None:
    missing = [k for k in BY_NAME[fault].params if k not in params]
    if missing:
        raise ScheduleError(f"{path}:{number}: nemesis event {f!r} lacks "
                            f"{', '.join(missing)} in its value")
