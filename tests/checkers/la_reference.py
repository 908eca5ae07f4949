"""A straightforward single-process list-append checker (plain Python and
networkx) to compare the Spark checker against.

The reference builds the whole dependency graph without any shrinking and
computes realtime edges by brute force (all pairs, then the transitive
reduction). Cycle naming uses checkers.cycles (shared on purpose: what is
compared is everything upstream of it: parsing, version orders, edges,
shrinking). Histories come from benchmarks/gen_list_append.py's simulator."""

from __future__ import annotations

from collections import Counter, defaultdict

import networkx as nx

from checkers.cycles import Step, find_cycles


def s(x) -> str:
    """A JSON scalar as the Spark side keeps it (its text)."""
    return x if isinstance(x, str) else str(x)


def pair(events: list[dict]) -> list[dict]:
    """Operations: invoke + next event of the same process (or none: info)."""
    pending: dict = {}
    ops = []
    for e in events:
        if e["type"] == "invoke":
            pending[e["process"]] = e
            continue
        inv = pending.pop(e["process"])
        ops.append({"invoke": inv, "complete": e})
    ops += [{"invoke": inv, "complete": None} for inv in pending.values()]
    for o in ops:
        c = o["complete"]
        o["type"] = c["type"] if c else "info"
        o["id"] = c["index"] if c else o["invoke"]["index"]
        o["process"] = o["invoke"]["process"]
        value = c["value"] if o["type"] == "ok" else o["invoke"]["value"]
        o["mops"] = [(f, s(k), None if f == "r" else s(v),
                      [s(x) for x in v] if f == "r" and v is not None and o["type"] == "ok"
                      else None) for f, k, v in value]
    return ops


def _txn_checks(op, found):
    state: dict[str, tuple] = {}
    for pos, (f, k, v, read) in enumerate(op["mops"]):
        known, mine = state.get(k, (None, []))
        if f == "append":
            state[k] = (known, mine + [v])
            continue
        if read is None:
            continue
        if known is not None and read != known + mine:
            found["internal"].append(op)
        elif known is None and mine and read[-len(mine):] != mine:
            found["internal"].append(op)
        later = {v2 for f2, k2, v2, _ in op["mops"][pos + 1:] if f2 == "append" and k2 == k}
        if later & set(read):
            found["future-read"].append(op)
        if len(set(read)) < len(read):
            found["duplicate-elements"].append(op)
        state[k] = (read, [])


def _lost_updates(ops, found):
    groups = defaultdict(set)
    for op in ops:
        if op["type"] != "ok":
            continue
        last_read, appended = {}, set()
        for f, k, v, read in op["mops"]:
            if f == "r":
                last_read[k] = read
            elif k not in appended:
                appended.add(k)
                if k in last_read:
                    groups[(k, tuple(last_read[k]))].add(op["id"])
    found["lost-update"] += [g for g in groups.values() if len(g) > 1]


def realtime_reduction(ops) -> set[tuple[int, int]]:
    done = [o for o in ops if o["type"] == "ok"]
    before = {(x["id"], y["id"]) for x in done for y in ops
              if x["complete"]["index"] < y["invoke"]["index"]}
    ids = [o["id"] for o in ops]
    return {(x, y) for x, y in before if not any((x, c) in before and (c, y) in before
                                                 for c in ids)}


def check(events: list[dict]) -> Counter:
    """{anomaly type: count}, counted the way the Spark checker counts."""
    ops = [o for o in pair(events) if o["invoke"]["f"] == "txn"]
    found: dict[str, list] = defaultdict(list)
    writer = {}
    for op in ops:
        appends = [(k, v) for f, k, v, _ in op["mops"] if f == "append"]
        for i, (k, v) in enumerate(appends):
            last = all(k2 != k for k2, _ in appends[i + 1:])
            writer[(k, v)] = (op, last)
    reads = [(op, k, read) for op in ops if op["type"] == "ok"
             for f, k, _, read in op["mops"] if f == "r" and read is not None]
    for op in ops:
        if op["type"] == "ok":
            _txn_checks(op, found)
    _lost_updates(ops, found)

    order, compatible = {}, {}
    for op, k, read in reads:
        if k not in order or len(read) > len(order[k]):
            order[k] = read
    for op, k, read in reads:
        if order[k][:len(read)] != read:
            if compatible.get(k, True):
                found["incompatible-order"].append(k)
            compatible[k] = False
        compatible.setdefault(k, True)

    steps = set()
    def add(src, dst, kind, key, value=None, prev=None):
        if src["id"] != dst["id"]:
            steps.add(Step(src["id"], dst["id"], kind, key, value, None, prev))

    for op, k, read in reads:
        for x in read:
            w = writer.get((k, x))
            if w and w[0]["type"] == "fail":
                found["G1a"].append(op)
        if read:
            w = writer.get((k, read[-1]))
            if w and w[0]["type"] != "fail" and w[0]["id"] != op["id"]:
                add(w[0], op, "wr", k, read[-1])
                if not w[1]:
                    found["G1b"].append(op)
        if compatible[k] and len(order[k]) > len(read):
            w = writer.get((k, order[k][len(read)]))
            if w and w[0]["type"] != "fail":
                add(op, w[0], "rw", k, order[k][len(read)], read[-1] if read else None)
    for k, xs in order.items():
        if not compatible[k]:
            continue
        for x, y in zip(xs, xs[1:]):
            wx, wy = writer.get((k, x)), writer.get((k, y))
            if not wx or not wy:
                continue
            if wx[0]["type"] == "fail" and wy[0]["type"] != "fail":
                found["dirty-update"].append(k)
            if wx[0]["type"] != "fail" and wy[0]["type"] != "fail":
                add(wx[0], wy[0], "ww", k, y, x)

    live = sorted((o for o in ops if o["type"] != "fail"), key=lambda o: o["invoke"]["index"])
    by_id = {o["id"]: o for o in live}
    last_of = {}
    for o in live:
        if o["process"] in last_of:
            add(last_of[o["process"]], o, "process", s(o["process"]))
        last_of[o["process"]] = o
    for x, y in realtime_reduction(live):
        add(by_id[x], by_id[y], "realtime", None)

    graph = nx.MultiDiGraph()
    graph.add_edges_from((st.src, st.dst) for st in steps)
    # one step per (src, dst, kind), as the Spark side keeps
    kept = {}
    for st in sorted(steps):
        kept.setdefault((st.src, st.dst, st.kind), st)
    for cycle in find_cycles(kept.values()):
        assert nx.is_strongly_connected(graph.subgraph(cycle.ops))
        found[cycle.anomaly].append(cycle)
    return Counter({t: len(v) for t, v in found.items() if v})
