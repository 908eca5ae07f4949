"""A straightforward single-process list-append checker (plain Python and
networkx) to compare checkers/list_append/checker.check_list_append against.

It re-derives everything from Elle's definitions (jepsen-io/elle,
src/elle/list_append.clj and txn.clj), written the plain way, over whole
operations and never per key: internal, future-read, duplicate-elements,
sorted values and incompatible-order, G1a, G1b, dirty-update, lost-update
(Elle's `lost-update-cases`, or by default the checker's narrower reading
of it: see `lost_updates`), the ww / wr / rw edges (Elle's
append, write and read indexes), and realtime edges by brute force (every
"completed before invoked" pair, then the transitive reduction), the order
edges strict-serializable needs. Naming the cycles uses
checkers.graph.search (shared on purpose: what is compared is everything
upstream of it: parsing, version orders, edges). Histories come from
benchmarks/gen_list_append.py's simulator.

Like the checker (checkers/graph/order_local.py), an operation with no completion
gets no realtime edge (Elle does the same for a partial history).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import networkx as nx

from checkers.graph.search import SEARCH_ORDER, cycle_anomalies
from checkers.graph.cycles import Step

INIT = "init"          # the initial (empty) state of a key; values are ints
UNKNOWN = "..."        # an unknown prefix, in an expected state


def pair(events: list[dict]) -> list[dict]:
    """Operations: invoke + next event of the same process (or none: info),
    in invoke order."""
    pending: dict = {}
    ops = []
    for e in events:
        if e["process"] == "nemesis":
            continue
        if e["type"] == "invoke":
            pending[e["process"]] = e
            continue
        ops.append({"invoke": pending.pop(e["process"]), "complete": e})
    ops += [{"invoke": inv, "complete": None} for inv in pending.values()]
    ops.sort(key=lambda o: o["invoke"]["index"])
    for o in ops:
        c = o["complete"]
        o["type"] = c["type"] if c else "info"
        o["id"] = c["index"] if c else o["invoke"]["index"]
        o["process"] = o["invoke"]["process"]
        ok = o["type"] == "ok"
        value = c["value"] if ok else o["invoke"]["value"]
        # (f, key, appended value | list read: [] for an ok null read, None when unknown)
        o["mops"] = [(f, k, (v or []) if ok else None) if f == "r" else (f, k, v)
                     for f, k, v in value]
    return ops


def internal(op) -> bool:
    """Elle's op-int-case."""
    state: dict = {}
    for f, k, v in op["mops"]:
        if f == "append":
            state[k] = state.get(k, [UNKNOWN]) + [v]
            continue
        if k in state:
            s = state[k]
            if s[:1] == [UNKNOWN]:
                tail = s[1:]
                if len(v) < len(tail) or v[len(v) - len(tail):] != tail:
                    return True
            elif s != v:
                return True
        state[k] = list(v)
    return False


def future_read(op) -> bool:
    seen = set()
    for f, k, v in op["mops"]:
        if f == "r":
            seen |= {(k, e) for e in v}
        elif (k, v) in seen:
            return True
    return False


def lost_updates(ok_ops) -> int:
    """Elle's lost-update-cases literally: per ok txn, the first read of each
    key and the first append to it *after* that read; a (key, state read)
    shared by two or more txns is one case."""
    txns = defaultdict(set)
    for op in ok_ops:
        reads, writes = {}, set()
        for f, k, v in op["mops"]:
            if f == "append" and k not in writes:
                if k in reads:
                    txns[(k, tuple(reads[k]))].add(op["id"])
                    writes.add(k)
            elif f == "r" and k not in reads:
                reads[k] = v
    return sum(1 for ids in txns.values() if len(ids) > 1)


def sorted_values(ops) -> dict:
    """Elle's sorted-values over `ops`: non-empty ok reads, replaced by [v]
    for a key with exactly one append; shortest first, and states of one
    length by the id of the first op that read them (the checker's rule:
    Elle leaves that order to its hash set)."""
    first_reader: dict = {}
    appends = defaultdict(list)
    for op in ops:
        for f, k, v in op["mops"]:
            if f == "r" and op["type"] == "ok" and v:
                seen, state = first_reader.setdefault(k, {}), tuple(v)
                seen[state] = min(seen.get(state, op["id"]), op["id"])
            elif f == "append":
                appends[k].append(v)
    for k, vs in appends.items():
        if len(vs) == 1:
            first_reader[k] = {(vs[0],): 0}
    return {k: [list(s) for s in sorted(seen, key=lambda s: (len(s), seen[s]))]
            for k, seen in first_reader.items()}


def prefix(a, b) -> bool:
    return len(a) <= len(b) and b[:len(a)] == a


def dirty_updates(order: dict, ops) -> int:
    """Elle's dirty-update-cases (failed txns' appends included)."""
    writer_type = {}
    for op in ops:
        for f, k, v in op["mops"]:
            if f == "append":
                writer_type[(k, v)] = op["type"]
    cases = 0
    for k, values in order.items():
        t1 = "ok"
        for v in values:
            t2 = writer_type.get((k, v))
            if t2 is None:
                continue
            if t1 == "fail" and t2 == "ok":
                cases += 1
            if t2 == "info" or (t1 == "fail" and t2 == "fail"):
                continue
            t1 = t2
    return cases


def realtime_edges(ops) -> set[Step]:
    """All "x completed ok before y was invoked" pairs between not failed ops
    (one that never completed is info: edges in only), transitively reduced
    through ok ops."""
    done = [o for o in ops if o["type"] != "fail"]
    oks = [o for o in done if o["type"] == "ok"]
    before = {(x["id"], y["id"]) for x in oks for y in done
              if x["complete"]["index"] < y["invoke"]["index"]}
    by_id = {o["id"]: o for o in done}
    return {Step(x, y, "realtime", value=str(by_id[y]["invoke"]["index"]),
                 prev=str(by_id[x]["complete"]["index"]))
            for x, y in before
            if not any((x, c["id"]) in before and (c["id"], y) in before for c in oks)}


def check(events: list[dict]) -> Counter:
    """{anomaly type: count}, counted the way the checker counts (cycles: one
    per type and strongly connected component, as Elle)."""
    ops = [o for o in pair(events) if o["invoke"]["f"] == "txn"]
    ok_ops = [o for o in ops if o["type"] == "ok"]
    possible = [o for o in ops if o["type"] != "fail"]
    found: Counter = Counter()

    for op in ok_ops:
        found["internal"] += internal(op)
        found["future-read"] += future_read(op)
        for f, k, v in op["mops"]:
            if f == "r" and len(set(v)) < len(v):
                found["duplicate-elements"] += 1
    found["lost-update"] += lost_updates(ok_ops)

    # G1a and G1b over every txn, failed ones included (Elle)
    failed = {(k, v) for o in ops if o["type"] == "fail" for f, k, v in o["mops"] if f == "append"}
    intermediate = {}
    for op in ops:
        last = {}
        for f, k, v in op["mops"]:
            if f == "append":
                if k in last:
                    intermediate[(k, last[k])] = op["id"]
                last[k] = v
    reads = [(op, k, v) for op in ok_ops for f, k, v in op["mops"] if f == "r"]
    for op, k, v in reads:
        found["G1a"] += sum((k, e) in failed for e in v)
        if v and intermediate.get((k, v[-1]), op["id"]) != op["id"]:
            found["G1b"] += 1

    values = sorted_values(possible)
    for k, states in values.items():
        if any(not prefix(a, b) for a, b in zip(states, states[1:])):
            found["incompatible-order"] += 1
    # the version order: the longest read, even when reads disagree (Elle)
    order = {k: list(dict.fromkeys(states[-1])) for k, states in values.items()}
    found["dirty-update"] += dirty_updates(
        {k: list(dict.fromkeys(s[-1])) for k, s in sorted_values(ops).items()}, ops)

    # edges between ok and info txns
    writer = {(k, v): o["id"] for o in possible for f, k, v in o["mops"] if f == "append"}
    readers = defaultdict(set)
    for op, k, v in reads:
        readers[(k, v[-1] if v else INIT)].add(op["id"])
    steps: set[Step] = set()
    for op, k, v in reads:
        w = writer.get((k, v[-1])) if v else None
        if w is not None and w != op["id"]:
            steps.add(Step(w, op["id"], "wr", k, v[-1]))
    for op in possible:
        for f, k, v in op["mops"]:
            if f != "append":
                continue
            vs = order.get(k, [])
            if v in vs:
                i = vs.index(v)
                prev = vs[i - 1] if i > 0 else INIT
            else:
                prev = vs[-1] if vs else INIT
            w = writer.get((k, prev)) if prev != INIT else None
            if w is not None and w != op["id"]:
                steps.add(Step(w, op["id"], "ww", k, v, prev=prev))
            for r in readers.get((k, prev), ()):
                if r != op["id"]:
                    steps.add(Step(r, op["id"], "rw", k, v, prev=None if prev == INIT else prev))
    steps |= realtime_edges(ops)

    graph = nx.MultiDiGraph()
    graph.add_edges_from((s.src, s.dst) for s in steps)
    wanted = [t for t in SEARCH_ORDER if not t.endswith("-process")]   # strict-serializable
    for cycle in cycle_anomalies(steps, wanted):
        assert nx.is_strongly_connected(graph.subgraph(cycle.ops))
        found[cycle.anomaly] += 1
    return Counter({t: n for t, n in found.items() if n})
