"""A straightforward single-process queue checker, written from the anomaly
definitions in docs/checkers.md, to cross-check the Spark checker."""
from __future__ import annotations

from collections import Counter, defaultdict


def pair(events: list[dict]) -> list[dict]:
    pending, ops = {}, []
    for e in events:
        p = e["process"]
        if p == "nemesis":
            continue
        if e["type"] == "invoke":
            pending[p] = {"id": e["index"], "process": p, "f": e["f"], "type": "info",
                          "inv": e["value"], "done": None}
            ops.append(pending[p])
        else:
            op = pending.pop(p)
            op["type"], op["done"] = e["type"], e["value"]
    return ops


def micro_ops(ops):
    sends, reads = [], []
    for op in ops:
        if op["f"] in ("send", "txn"):
            for pos, mop in enumerate(op["inv"]):
                if mop[0] != "send":
                    continue
                offset = None
                if op["type"] in ("ok", "info") and op["done"] and pos < len(op["done"]) \
                        and op["done"][pos][0] == "send":
                    offset = op["done"][pos][2][0]
                sends.append({"op": op, "key": mop[1], "value": mop[2], "offset": offset, "pos": pos})
        if op["f"] in ("poll", "txn"):   # every completed poll; only ok ones are reads
            for pos, mop in enumerate(op["done"] or []):
                if mop[0] != "poll" or len(mop) < 2:
                    continue
                for key, pairs in mop[1].items():
                    for i, (offset, value) in enumerate(pairs):
                        reads.append({"op": op, "key": int(key), "offset": offset, "value": value,
                                      "order": (pos, i)})
    return sends, reads


def check(events: list[dict]) -> Counter:
    """Counter of (type, key, offsets, values)."""
    ops = pair(events)
    sends, polled = micro_ops(ops)
    reads = [r for r in polled if r["op"]["type"] == "ok"]
    found: Counter = Counter()
    read_kv = {(r["key"], r["value"]) for r in reads}
    proven = {s["op"]["id"] for s in sends if s["op"]["type"] == "info" and (s["key"], s["value"]) in read_kv}
    landed = [s for s in sends if s["op"]["type"] == "ok" or s["op"]["id"] in proven]
    obs = [s for s in landed if s["offset"] is not None] + polled
    offsets_of = defaultdict(set)
    by_ko, by_kv = defaultdict(set), defaultdict(set)
    for o in obs:
        offsets_of[o["key"]].add(o["offset"])
        by_ko[(o["key"], o["offset"])].add(o["value"])
        by_kv[(o["key"], o["value"])].add(o["offset"])
    idx = {k: {off: i for i, off in enumerate(sorted(offs))} for k, offs in offsets_of.items()}
    for (k, off), values in by_ko.items():
        if len(values) > 1:
            found[("inconsistent-offsets", k, (off,), tuple(sorted(values)))] += 1
    for (k, v), offs in by_kv.items():
        if len(offs) > 1:
            found[("duplicate", k, tuple(sorted(offs)), (v,))] += 1
    max_read = {}
    for r in reads:
        max_read[r["key"]] = max(max_read.get(r["key"], r["offset"]), r["offset"])
    for s in landed:
        if (s["key"], s["value"]) in read_kv:
            continue
        lost = s["offset"] is not None and s["key"] in max_read and s["offset"] <= max_read[s["key"]]
        offsets = () if s["offset"] is None else (s["offset"],)
        if s["op"]["type"] == "ok":   # as Jepsen: every unread ok send is unseen, lost or not
            found[("unseen", s["key"], offsets, (s["value"],))] += 1
        if lost:
            found[("lost-write", s["key"], offsets, (s["value"],))] += 1
    writer = {(s["key"], s["value"]): s for s in sends}
    seen = {}
    for r in polled:
        ident = (r["op"]["id"], r["key"], r["value"])
        seen[ident] = (min(seen.get(ident, (r["offset"],))[0], r["offset"]), r["op"]["type"])
    for (op_id, k, v), (off, reader_type) in seen.items():
        w = writer.get((k, v))
        if w is None:
            continue
        if w["op"]["type"] == "fail" and reader_type == "ok":
            found[("G1a", k, (off,), (v,))] += 1
        if w["op"]["id"] == op_id:
            found[("precommitted-read", k, (off,), (v,))] += 1
    _order(found, polled, idx, ops, "poll")
    _order(found, [dict(s, order=(s["pos"], 0)) for s in landed if s["offset"] is not None], idx, ops, "send")
    return found


NAMES = {"poll": ("poll-skip", "nonmonotonic-poll", "int-poll-skip", "int-nonmonotonic-poll"),
         "send": (None, "nonmonotonic-send", "int-send-skip", "int-nonmonotonic-send")}


def _order(found, rows, idx, ops, what):
    """Jepsen's walk: per process in op order, an assign/subscribe that did
    not fail forgets the process's last read (or send) of every key it does
    not list; each op's first row of a key is checked against that last one."""
    skip, back, int_skip, int_back = NAMES[what]
    per_op = defaultdict(list)
    for r in rows:
        per_op[(r["op"]["id"], r["key"])].append(r)
    assigns = [(op["id"], -1, op) for op in ops if op["f"] in ("assign", "subscribe") and op["type"] != "fail"]
    last = {}
    for op_id, key, item in sorted(assigns + [(op_id, key, rs) for (op_id, key), rs in per_op.items()],
                                   key=lambda e: e[:2]):
        if key == -1:
            listed = item["done"] if isinstance(item["done"], list) else item["inv"]
            kept = {int(k) for k in listed or []}
            last = {(p, k): v for (p, k), v in last.items() if p != item["process"] or k in kept}
            continue
        rs = sorted(item, key=lambda r: r["order"])
        for a, b in zip(rs, rs[1:]):
            d = idx[key][b["offset"]] - idx[key][a["offset"]]
            name = int_skip if d > 1 else int_back if d < 1 else None
            if name:
                found[(name, key, (a["offset"], b["offset"]), (a["value"], b["value"]))] += 1
        p = rs[0]["op"]["process"]
        prev = last.get((p, key))
        if prev is not None:
            a, b = prev[1], rs[0]
            d = idx[key][b["offset"]] - idx[key][a["offset"]]
            name = skip if d > 1 else back if d < 1 else None
            if name:
                found[(name, key, (a["offset"], b["offset"]), (a["value"], b["value"]))] += 1
        if what == "send" or rs[0]["op"]["type"] == "ok":   # only an ok poll moves the position
            last[(p, key)] = (op_id, rs[-1])
