"""Synthetic list-append histories from a simulated database with optional
faults, streamed to history.jsonl (docs/history-format.md).

    python -m benchmarks.gen_list_append OUT.jsonl --ops 100000 --processes 8 \
        --keys 16 --fault-rate 0.001 --seed 1

Processes invoke txns of 1-4 micro-ops; a txn takes effect atomically when it
completes; reads see the current lists unless a fault strikes (stale read,
aborted write visible, duplicate, reordered pair, own append dropped, lost
append, a later own append read early). ~10% of txns fail, ~5% end as info (their process retires). A key
takes at most --writes-per-key appends and is then replaced by a fresh one,
so lists stay short, as in Elle's generator. Also used by the property tests
(tests/checkers/test_list_append_property.py) with small sizes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections import defaultdict
from collections.abc import Iterator

FAULTS = ("stale", "aborted-visible", "duplicate", "reorder", "drop-own", "lost", "future")


class KeyPool:
    """`size` live keys; one that took `max_writes` appends is retired."""

    def __init__(self, keys: list, max_writes: int | None, fresh: Iterator):
        self.live, self.max_writes, self.fresh = list(keys), max_writes, fresh
        self.writes: dict = defaultdict(int)

    def pick(self, rng: random.Random):
        return rng.choice(self.live)

    def wrote(self, key) -> None:
        self.writes[key] += 1
        if self.max_writes and self.writes[key] >= self.max_writes and key in self.live:
            self.live[self.live.index(key)] = next(self.fresh)


def _apply(rng, db, mops, outcome, fault_rate):
    """Run a txn against `db`; returns the completion value."""
    fault = rng.choice(FAULTS) if rng.random() < fault_rate else None
    commits = outcome == "ok" or (outcome == "info" and rng.random() < 0.5) \
        or (outcome == "fail" and fault == "aborted-visible")
    view: dict = {}
    done = []
    for pos, (f, k, v) in enumerate(mops):
        if k not in view:
            view[k] = list(db.get(k, ()))
        if f == "append":
            view[k].append(v)
            if commits and fault != "lost":
                db[k].append(v)
            done.append([f, k, v])
            continue
        seen = list(view[k])
        if fault == "stale" and seen:
            seen = seen[:rng.randrange(len(seen))]
        elif fault == "duplicate" and seen:
            seen.append(rng.choice(seen))
        elif fault == "reorder" and len(seen) > 1:
            i = rng.randrange(len(seen) - 1)
            seen[i], seen[i + 1] = seen[i + 1], seen[i]
        elif fault == "drop-own" and seen:
            seen = seen[:-1]
        elif fault == "future":
            seen += [v2 for f2, k2, v2 in mops[pos + 1:] if f2 == "append" and k2 == k][:1]
        done.append([f, k, seen])
    return done if outcome == "ok" else [[f, k, None if f == "r" else v] for f, k, v in mops]


def simulate(rng: random.Random, n_txns: int, keys: list, processes: list[int], values,
             fault_rate: float, max_writes_per_key: int | None = None,
             outcomes=(0.85, 0.1, 0.05), fresh_keys: Iterator | None = None) -> Iterator[dict]:
    """Events (without index/time) of a history of `n_txns` txns."""
    db: dict = defaultdict(list)
    pool = KeyPool(keys, max_writes_per_key,
                   fresh_keys or itertools.count(max(keys) + 1 if keys else 0))
    free, busy, started = list(processes), {}, 0
    next_process = max(processes) + 1
    while started < n_txns or busy:
        if free and started < n_txns and (not busy or rng.random() < 0.5):
            p = free.pop(rng.randrange(len(free)))
            mops = []
            for _ in range(rng.randint(1, 3)):
                k = pool.pick(rng)
                if rng.random() < 0.5:
                    mops.append(["append", k, next(values)])
                    pool.wrote(k)
                else:
                    mops.append(["r", k, None])
            busy[p] = mops
            started += 1
            yield {"type": "invoke", "process": p, "f": "txn", "value": [list(m) for m in mops]}
            continue
        p = rng.choice(sorted(busy))
        mops = busy.pop(p)
        outcome = rng.choices(["ok", "fail", "info"], outcomes)[0]
        done = _apply(rng, db, mops, outcome, fault_rate)
        if outcome == "info":
            free.append(next_process)       # the process retires; a new one takes over
            next_process += 1
            continue
        event = {"type": outcome, "process": p, "f": "txn", "value": done}
        if outcome == "fail":
            event["error"] = ["ABORTED", "simulated"]
        yield event
        free.append(p)


def write(path: str, ops: int, processes: int, keys: int, fault_rate: float, seed: int,
          writes_per_key: int = 64) -> int:
    """Write a history; returns the number of events."""
    rng = random.Random(seed)
    events = simulate(rng, ops, list(range(keys)), list(range(processes)), itertools.count(1),
                      fault_rate, writes_per_key)
    n = 0
    with open(path, "w") as out:
        for n, event in enumerate(events, 1):
            out.write(json.dumps({"index": n - 1, "time": n * 1000, **event}) + "\n")
    return n


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ops", type=int, default=10_000)
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--keys", type=int, default=16)
    ap.add_argument("--writes-per-key", type=int, default=64)
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    n = write(args.out, args.ops, args.processes, args.keys, args.fault_rate, args.seed,
              args.writes_per_key)
    print(f"{args.out}: {n} events")


if __name__ == "__main__":
    main()
