"""Synthetic queue histories: a simulated correct Kafka plus planted anomalies.

    python -m benchmarks.gen_history OUT.jsonl --events 1000000 \
        --plant duplicate=3,lost-write=2,G1a=1 [--parquet OUT.parquet] [--seed 1]

Writes `--events` history lines (plus final reads) streaming, in chunks, and
prints a JSON summary with the planted counts. The simulated cluster: keys
0..K-1 with one log each; consumers (assigned low keys) poll contiguously;
producers send 1-3 records or run transactions (whose commit markers leave
offset gaps), with fail/info outcomes (an info send may or may not land); a
final drain reads every key. Each planted anomaly runs in its own fresh
process on keys only the drain reads, so its count is known exactly; the one
known side effect: the drain steps over a lost write's offset, which is one
poll-skip or int-poll-skip per lost write.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

PLANTABLE = ("duplicate", "lost-write", "inconsistent-offsets", "G1a", "precommitted-read",
             "poll-skip", "nonmonotonic-poll", "unseen", "G1c")
MARKER, LOST = -1, -2            # log entries that hold no readable value
CHUNK = 100_000


class Writer:
    """Formats events as JSON lines (by hand: json.dumps is the bottleneck)
    and optionally as Parquet rows, flushing every CHUNK events."""

    def __init__(self, path: Path, parquet: Path | None):
        self.out = open(path, "w")
        self.lines: list[str] = []
        self.rows: list[tuple] | None = [] if parquet else None
        self.parquet = parquet
        self.pq_writer = None
        self.index = 0
        self.time = 0

    def event(self, type_: str, process, f: str, value: str, error: str | None = None) -> None:
        self.time += random.randint(1_000, 50_000)
        proc = f'"{process}"' if isinstance(process, str) else str(process)
        err = f',"error":{error}' if error else ""
        self.lines.append(f'{{"index":{self.index},"time":{self.time},"type":"{type_}","process":{proc},'
                          f'"f":"{f}","value":{value}{err}}}\n')
        if self.rows is not None:
            self.rows.append((self.index, self.time, type_, str(process), f, value, error))
        self.index += 1
        if len(self.lines) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        self.out.write("".join(self.lines))
        self.lines = []
        if self.rows:
            import pyarrow as pa
            import pyarrow.parquet as pq
            cols = list(zip(*self.rows))
            table = pa.table({"index": pa.array(cols[0], pa.int64()), "time": pa.array(cols[1], pa.int64()),
                              "type": cols[2], "process": cols[3], "f": cols[4], "value": cols[5],
                              "error": pa.array(cols[6], pa.string())})
            if self.pq_writer is None:
                self.pq_writer = pq.ParquetWriter(str(self.parquet), table.schema)
            self.pq_writer.write_table(table)
            self.rows = []

    def close(self) -> None:
        self.flush()
        self.out.close()
        if self.pq_writer is not None:
            self.pq_writer.close()


def _pairs(key: int, pairs: list[tuple[int, int]]) -> str:
    return f'"{key}":[' + ",".join(f"[{o},{v}]" for o, v in pairs) + "]"


def poll_value(results: dict[int, list[tuple[int, int]]]) -> str:
    return '[["poll",{' + ",".join(_pairs(k, p) for k, p in results.items()) + "}]]"


class Kafka:
    """Logs per key; offsets are list positions."""

    def __init__(self, keys: int):
        self.logs: list[list[int]] = [[] for _ in range(keys)]

    def append(self, key: int, value: int) -> int:
        self.logs[key].append(value)
        return len(self.logs[key]) - 1

    def read(self, key: int, start: int, n: int) -> tuple[list[tuple[int, int]], int]:
        """Up to n readable records from offset `start`, and the next offset."""
        log, out, o = self.logs[key], [], start
        while o < len(log) and len(out) < n:
            if log[o] >= 0:
                out.append((o, log[o]))
            o += 1
        return out, o


class Generator:
    def __init__(self, w: Writer, keys: int, consumers: int, producers: int, seed: int):
        random.seed(seed)
        self.w, self.kafka = w, Kafka(keys)
        self.keys, self.low = keys, keys // 2
        self.next_value, self.next_process = 0, 0
        self.consumers = [self._consumer() for _ in range(consumers)]
        self.producers = [self._new_process() for _ in range(producers)]
        self.pending: dict[int, tuple] = {}

    def _new_process(self) -> int:
        self.next_process += 1
        return self.next_process - 1

    def _value(self) -> int:
        self.next_value += 1
        return self.next_value

    def _consumer(self) -> dict:
        p = self._new_process()
        keys = random.sample(range(self.low), 2)
        self.w.event("invoke", p, "assign", json.dumps(keys))
        self.w.event("ok", p, "assign", json.dumps(keys))
        return {"process": p, "keys": keys, "cursor": {k: 0 for k in keys}}

    # ---- normal operations: invoke now, complete at a later step

    def step(self) -> None:
        if random.random() < 0.5:
            c = random.choice(self.consumers)
            self._consume(c)
        else:
            slot = random.randrange(len(self.producers))
            p = self.producers[slot]
            if p in self.pending:
                self._complete_send(slot, p)
            else:
                self._invoke_send(p)

    def _consume(self, c: dict) -> None:
        p = c["process"]
        self.w.event("invoke", p, "poll", '[["poll"]]')
        if random.random() < 0.01:
            self.w.event("fail", p, "poll", "null", '["TIMED_OUT","poll timed out"]')
            return
        key = random.choice(c["keys"])
        pairs, nxt = self.kafka.read(key, c["cursor"][key], random.randint(1, 5))
        c["cursor"][key] = nxt
        self.w.event("ok", p, "poll", poll_value({key: pairs} if pairs else {}))

    def _invoke_send(self, p: int) -> None:
        txn = random.random() < 0.1
        mops = [(random.randrange(self.keys), self._value()) for _ in range(random.randint(1, 3))]
        self.pending[p] = (txn, mops)
        body = ",".join(f'["send",{k},{v}]' for k, v in mops)
        self.w.event("invoke", p, "txn" if txn else "send", f"[{body}]")

    def _complete_send(self, slot: int, p: int) -> None:
        txn, mops = self.pending.pop(p)
        f = "txn" if txn else "send"
        r = random.random()
        if r < 0.015:
            self.w.event("fail", p, f, "null", '["NOT_ENOUGH_REPLICAS","fail"]')
            return
        if r < 0.03:                      # indefinite: it may or may not have landed
            if random.random() < 0.5:
                self._land(mops, txn)
            self.w.event("info", p, f, "null", '["REQUEST_TIMED_OUT","timeout"]')
            self.producers[slot] = self._new_process()
            return
        offsets = self._land(mops, txn)
        body = ",".join(f'["send",{k},[{o},{v}]]' for (k, v), o in zip(mops, offsets))
        self.w.event("ok", p, f, f"[{body}]")

    def _land(self, mops, txn: bool) -> list[int]:
        offsets = [self.kafka.append(k, v) for k, v in mops]
        if txn:
            for k in sorted({k for k, _ in mops}):
                self.kafka.append(k, MARKER)
        return offsets

    # ---- planted anomalies, each in fresh processes on drain-only keys

    def _high_key(self) -> int:
        return random.randrange(self.low, self.keys)

    def _send(self, p, key, value, offset, type_="ok") -> None:
        self.w.event("invoke", p, "send", f'[["send",{key},{value}]]')
        if type_ == "ok":
            self.w.event("ok", p, "send", f'[["send",{key},[{offset},{value}]]]')
        else:
            self.w.event(type_, p, "send", "null", '["INVALID_RECORD","rejected"]')

    def _poll(self, p, results) -> None:
        self.w.event("invoke", p, "poll", '[["poll"]]')
        self.w.event("ok", p, "poll", poll_value(results))

    def plant(self, kind: str) -> None:
        p, key, v = self._new_process(), self._high_key(), self._value()
        log = self.kafka.logs[key]
        if kind == "duplicate":
            o = self.kafka.append(key, v)
            self.kafka.append(key, v)
            self._send(p, key, v, o)
        elif kind == "lost-write":
            self._send(p, key, v, self.kafka.append(key, LOST))
        elif kind == "inconsistent-offsets":
            o = self.kafka.append(key, v)
            self._send(p, key, v, o)
            self._poll(self._new_process(), {key: [(o, 10**12 + v)]})
        elif kind == "G1a":
            self.kafka.append(key, v)
            self._send(p, key, v, None, type_="fail")
        elif kind == "precommitted-read":
            self.w.event("invoke", p, "txn", f'[["send",{key},{v}],["poll"]]')
            o = self.kafka.append(key, v)
            self.w.event("ok", p, "txn", f'[["send",{key},[{o},{v}]],["poll",{{{_pairs(key, [(o, v)])}}}]]')
        elif kind in ("poll-skip", "nonmonotonic-poll"):
            low = random.randrange(self.low)
            for _ in range(6):
                x = self._value()
                self._send(self._new_process(), low, x, self.kafka.append(low, x))
            readable = [(o, x) for o, x in enumerate(self.kafka.logs[low]) if x >= 0][-6:]
            second = readable[3:5] if kind == "poll-skip" else readable[1:3]
            self._poll(p, {low: readable[0:2]})
            self._poll(p, {low: second})
        elif kind == "unseen":
            self._send(p, key, v, len(log) + 1_000_000)
        elif kind == "G1c":
            a, b = key, (key + 1 - self.low) % (self.keys - self.low) + self.low
            q, va, vb = self._new_process(), v, self._value()
            self.w.event("invoke", p, "txn", f'[["send",{a},{va}],["poll"]]')
            self.w.event("invoke", q, "txn", f'[["send",{b},{vb}],["poll"]]')
            oa, ob = self.kafka.append(a, va), self.kafka.append(b, vb)
            self.w.event("ok", p, "txn", f'[["send",{a},[{oa},{va}]],["poll",{{{_pairs(b, [(ob, vb)])}}}]]')
            self.w.event("ok", q, "txn", f'[["send",{b},[{ob},{vb}]],["poll",{{{_pairs(a, [(oa, va)])}}}]]')
        else:
            raise ValueError(f"cannot plant {kind!r}; plantable: {', '.join(PLANTABLE)}")

    # ---- the end: complete what is pending, then drain every key

    def finish(self, unseen: int) -> None:
        for slot, p in enumerate(self.producers):
            if p in self.pending:
                self._complete_send(slot, p)
        for _ in range(unseen):
            self.plant("unseen")
        drain = self._new_process()
        for key in range(self.keys):
            start = 0
            while start < len(self.kafka.logs[key]):
                pairs, start = self.kafka.read(key, start, 200)
                self._poll(drain, {key: pairs} if pairs else {})


def parse_plants(text: str) -> dict[str, int]:
    plants = {}
    for part in filter(None, (text or "").split(",")):
        kind, _, n = part.partition("=")
        if kind not in PLANTABLE:
            raise SystemExit(f"--plant: unknown kind {kind!r}; plantable: {', '.join(PLANTABLE)}")
        plants[kind] = int(n or 1)
    return plants


def generate(path: Path, events: int, plants: dict[str, int], parquet: Path | None = None,
             seed: int = 1, keys: int = 16, consumers: int = 4, producers: int = 6) -> dict:
    w = Writer(path, parquet)
    gen = Generator(w, keys, consumers, producers, seed)
    schedule = sorted((random.randrange(max(1, events * 9 // 10)), kind)
                      for kind, n in plants.items() if kind != "unseen" for _ in range(n))
    for at, kind in schedule + [(events, None)]:
        while w.index < at:
            gen.step()
        if kind:
            gen.plant(kind)
    gen.finish(plants.get("unseen", 0))
    w.close()
    return {"path": str(path), "parquet": str(parquet) if parquet else None, "events": w.index,
            "planted": plants, "side_effects": {"poll-skip+int-poll-skip": plants.get("lost-write", 0)}}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--events", type=int, default=100_000, help="history lines before the final drain")
    ap.add_argument("--plant", default="", help="kind=count,... of " + ", ".join(PLANTABLE))
    ap.add_argument("--parquet", type=Path, default=None, help="also write the history as Parquet")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    json.dump(generate(args.out, args.events, parse_plants(args.plant), args.parquet, args.seed), sys.stdout)
    print()


if __name__ == "__main__":
    main()
