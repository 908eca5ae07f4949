"""What the soak samples on the control node (benchmarks/soak.py): a process tree's
memory, file descriptors and threads from /proc, a growing file's size and lines,
and how those figures moved after warm-up."""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def load_average() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def children_of(pid: int) -> list[int]:
    """Every descendant of `pid`, from each process's parent in /proc/*/stat."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = _parent(entry)
            if parent is not None:
                parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _parent(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):  # gone meanwhile
        return None


def process_figures(pid: int) -> dict | None:
    """One process's name, RSS (MiB), open fds and threads; None if it is gone."""
    proc = Path(f"/proc/{pid}")
    try:
        status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
        fds = len(os.listdir(proc / "fd"))
    except OSError:
        return None
    return {"pid": pid, "name": status["Name"].strip(), "rss_mib": round(int(status["VmRSS"].split()[0]) / 1024, 1),
            "fds": fds, "threads": int(status["Threads"]),
            # what they are, so a figure that grows says where to look
            "fd_kinds": fd_kinds(proc), "thread_names": thread_names(proc)}


def fd_kinds(proc: Path) -> dict[str, int]:
    """Open descriptors by kind: socket, pipe, anon_inode:[eventfd], or a file's directory."""
    kinds: Counter[str] = Counter()
    for fd in _list(proc / "fd"):
        try:
            target = os.readlink(proc / "fd" / fd)
        except OSError:
            continue
        kinds[re.sub(r"\[\d+\]$", "", target) if ":" in target else os.path.dirname(target)] += 1
    return dict(kinds.most_common())


def thread_names(proc: Path) -> dict[str, int]:
    """Threads by their kernel name with digits dropped (librdkafka's `rdk:broker3`,
    Python's threads all show the process's name)."""
    names: Counter[str] = Counter()
    for tid in _list(proc / "task"):
        try:
            names[re.sub(r"\d+", "N", (proc / "task" / tid / "comm").read_text().strip())] += 1
        except OSError:
            continue
    return dict(names.most_common())


def _list(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def sample_tree(pid: int) -> dict:
    """The test process and its descendants, each, and their totals."""
    processes = [p for p in map(process_figures, [pid, *children_of(pid)]) if p is not None]
    return {"processes": processes,
            "rss_mib": round(sum(p["rss_mib"] for p in processes), 1),
            "fds": sum(p["fds"] for p in processes),
            "threads": sum(p["threads"] for p in processes)}


class HistoryCounter:
    """A growing file's size and line count, reading only what was added since the last call."""

    def __init__(self, path: Path):
        self.path = path
        self._offset = 0
        self._lines = 0

    def read(self) -> dict:
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            while chunk := f.read(1 << 20):
                self._lines += chunk.count(b"\n")
                self._offset += len(chunk)
        return {"history_mib": round(self._offset / 2**20, 2), "history_lines": self._lines}


def summarise(samples: list[dict], warm_up_minute: float, main_ends_minute: float) -> dict:
    """Each figure at the warm-up reference, at the last main-phase sample and at its
    highest, and its least-squares slope per hour over the main phase after warm-up.
    The main phase ends at its time limit: after it the phase still reads `main` while
    the workers wind down and close their clients, which is not steady state."""
    main = [s for s in samples if s.get("phase") == "main" and warm_up_minute <= s["minute"] <= main_ends_minute]
    if len(main) < 2:
        return {"note": f"fewer than 2 main-phase samples after minute {warm_up_minute}"}
    summary = {"reference_minute": main[0]["minute"], "last_main_minute": main[-1]["minute"]}
    for figure in ("rss_mib", "fds", "threads"):
        values = [s[figure] for s in main]
        summary[figure] = {"at_reference": values[0], "at_last": values[-1], "max": max(values),
                           "slope_per_hour": round(slope([s["minute"] for s in main], values) * 60, 2)}
    summary["load_1min"] = {"min": min(s["load"][0] for s in samples), "max": max(s["load"][0] for s in samples)}
    return summary


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys against xs."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0
