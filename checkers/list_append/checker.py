"""The list-append checker: Elle's analysis, as pure functions.

    check_list_append(ops, consistency_model, allow, forbid) -> results dict

`ops` is one row per operation (checkers/history/read.ParsedHistory.ops, or
the same columns from Spark); in-process, `check_rows` takes the read
history's rows instead and makes the same txns from them with no pandas
(`txns_from_rows`). The work splits the way it scales:

1. per transaction (checkers/list_append/txn.py): internal, future-read;
2. per key (checkers/list_append/keys.py): version order, incompatible-order,
   duplicate-elements, G1a, G1b, dirty-update, lost-update, and the key's
   ww / wr / rw edges;
3. over the whole graph (checkers/graph/search.py): the cycles, with the
   process and realtime edges the consistency model needs.

Steps 1 and 2 are what checkers/list_append/spark.py runs in executors for
big histories; `assemble()` turns findings and edges into results for both
ways of running, so they cannot disagree.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import chain, compress
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from checkers.graph.cycles import ListAppendPhrasing, Step, explain_cycle
from checkers.graph.scc import inside_cycles
from checkers.graph.order_local import OrderEdges, process_order, realtime_order
from checkers.graph.search import SEARCH_ORDER, cycle_anomalies
from checkers.history.collector import without_cyclic_gc
from checkers.history.read import OP_COLUMNS
from checkers.list_append.explain import explain
from checkers.list_append.keys import Finding, KeyMop, analyze_key, group_by_key
from checkers.list_append.txn import txn_findings
from checkers.verdict import consistency
from checkers.verdict.taxonomy import DEFAULT_EXAMPLES
from checkers.verdict.verdict import Evidence, verdict

if TYPE_CHECKING:
    import pandas as pd



class Txn(NamedTuple):
    """One txn operation (a named tuple: one per operation, cheaper to build
    than a frozen dataclass)."""

    id: int            # history index of the completion (of the invoke if none)
    process: int
    type: str
    invoke_index: int
    complete_index: int | None
    time: int
    mops: tuple        # ((f, key, value-or-read), ...)

    @property
    def info(self) -> dict:
        return {"index": self.id, "process": self.process, "time": self.time, "f": "txn",
                "type": self.type}


def _none(x):
    import pandas as pd  # loads pandas: only when needed
    return None if x is None or x is pd.NA or (isinstance(x, float) and x != x) else x


TXN_COLUMNS = ("f", "process", "type", "invoke_index", "invoke_time", "complete_index", "complete_time",
               "invoke_value", "complete_value")


def txns(ops: pd.DataFrame) -> list[Txn]:
    """The txn operations, each with the micro-ops that describe it: the
    completion's when ok, the invoke's otherwise (reads then carry nothing)."""
    t = ops[ops["f"] == "txn"]
    # plain lists, column by column: itertuples over object columns is slow
    columns = zip(*(t[c].tolist() for c in TXN_COLUMNS))
    return [_txn(process, otype, invoke_index, invoke_time, _none(done), _none(done_time), invoke_value,
                 complete_value) for _, process, otype, invoke_index, invoke_time, done, done_time, invoke_value,
            complete_value in columns]


def txns_from_rows(rows: list[tuple]) -> list[Txn]:
    """`txns` of the rows of a read history (history.op_row.ROW_COLUMNS) that
    are in invoke-index order, without a DataFrame: the same Txns."""
    pick = itemgetter(*(OP_COLUMNS.index(c) for c in TXN_COLUMNS))
    return [_txn(*row[1:]) for row in map(pick, rows) if row[0] == "txn"]


def _txn(process, otype: str, invoke_index, invoke_time, done, done_time, invoke_value, complete_value) -> Txn:
    return Txn(int(done if done is not None else invoke_index), int(process), otype, int(invoke_index), done,
               int(done_time if done_time is not None else invoke_time),
               txn_mops(otype, complete_value if otype == "ok" else invoke_value))


def txn_mops(otype: str, value) -> tuple:
    """The micro-ops as (f, key, value-or-read) tuples: an ok read of null
    read [], a read of a txn that did not complete ok read nothing (None)."""
    if not value:
        return ()
    if otype == "ok":
        return tuple([(f, k, v or []) if f == "r" else (f, k, v) for f, k, v in value])
    return tuple([(f, k, None) if f == "r" else (f, k, v) for f, k, v in value])


def key_mops(txn: Txn) -> list[KeyMop]:
    """The txn's micro-ops one key at a time; `last`: an append no later
    append of the txn to the same key follows."""
    op, otype, mops = txn.id, txn.type, txn.mops
    new = tuple.__new__     # no Python-level __new__ (nor _make) per micro-op
    appended = [key for f, key, _ in mops if f == "append"]
    if len(appended) == len(set(appended)):     # the usual txn: each key appended at most once
        return [new(KeyMop, (key, op, otype, pos, f, value, True)) for pos, (f, key, value) in enumerate(mops)]
    later: set = set()
    last = [True] * len(mops)
    for pos in range(len(mops) - 1, -1, -1):
        f, key, _ = mops[pos]
        if f == "append":
            last[pos] = key not in later
            later.add(key)
    return [new(KeyMop, (key, op, otype, pos, f, value, last[pos])) for pos, (f, key, value) in enumerate(mops)]


def order_edges(all_txns: Iterable[Txn], model: str) -> OrderEdges:
    """The order edges the model needs, as Elle adds them: realtime (which
    covers process order) for strict-serializable, else process order for
    strong-session-serializable, else none."""
    forbidden = consistency.proscribed(model)
    rows = [(t.id, t.process, t.type, t.invoke_index, t.complete_index) for t in all_txns]
    if any(t.endswith("-realtime") for t in forbidden):
        return realtime_order(rows)
    if any(t.endswith("-process") for t in forbidden):
        return process_order(rows)
    return OrderEdges()


def cyclic_steps(data: list[tuple], order: OrderEdges) -> list[Step]:
    """The edges inside a strongly connected component of the whole graph
    (data edges as Step-shaped tuples, then the order edges), as Steps: only
    they can lie on a cycle, and they are usually a small part of it."""
    n, total = len(data), len(data) + len(order)
    if not total:
        return []
    src = [*map(itemgetter(0), data), *order.src]
    dst = [*map(itemgetter(1), data), *order.dst]
    inside = inside_cycles(src, dst)
    return [Step._make(data[i]) for i in compress(range(n), inside)] + \
        order.steps([i - n for i in compress(range(n, total), inside[n:])])


def cycle_types(model: str) -> list[str]:
    forbidden = consistency.proscribed(model)
    return [n for n in SEARCH_ORDER if not n.endswith(("-process", "-realtime")) or n in forbidden]


def analyze(all_txns: list[Txn]) -> tuple[list[Finding], list[tuple]]:
    """Steps 1 and 2 in-process: every finding and every data edge (as
    Step-shaped tuples)."""
    findings: list[Finding] = []
    for t in all_txns:
        if t.type == "ok":
            findings.extend(txn_findings(t.id, t.mops))
    edges: list[tuple] = []
    # chain.from_iterable, not a generator expression: C-level, and this is once per micro-op
    for key, mops in group_by_key(chain.from_iterable(map(key_mops, all_txns))).items():
        found, key_edges = analyze_key(key, mops)
        findings.extend(found)
        edges.extend(key_edges)
    return findings, edges


def check_list_append(ops: pd.DataFrame, consistency_model: str = "strict-serializable",
                      allow=(), forbid=(), examples: int = DEFAULT_EXAMPLES) -> dict:
    """Results (docs/history-format.md) plus Elle's `not` / `also_not`."""
    return _check_made(lambda: txns(ops), consistency_model, allow, forbid, examples)


def check_rows(rows: list[tuple], consistency_model: str = "strict-serializable",
               allow=(), forbid=(), examples: int = DEFAULT_EXAMPLES) -> dict:
    """check_list_append of a read history's rows in invoke-index order
    (history.read.ParsedHistory.rows_by_index), with no DataFrame."""
    return _check_made(lambda: txns_from_rows(rows), consistency_model, allow, forbid, examples)


def _check_made(make_txns, consistency_model: str, allow, forbid, examples: int) -> dict:
    """_check of the txns `make_txns()` builds, built with the collector off too."""
    model = consistency.check_model(consistency_model)
    with without_cyclic_gc():
        return _check(make_txns(), model, allow, forbid, examples)


def _check(all_txns: list[Txn], model: str, allow, forbid, examples: int) -> dict:
    findings, edges = analyze(all_txns)
    counts = _type_counts(t.type for t in all_txns)
    by_id = {t.id: t for t in all_txns}
    op_info = lambda op: by_id[op].info if op in by_id else None  # noqa: E731 (only examples need it)
    order = order_edges(all_txns, model)
    return assemble(findings, cyclic_steps(edges, order), op_info, counts, model, allow, forbid, examples,
                    graph_edges=len(edges) + len(order))


def _type_counts(types: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in types:
        out[t] = out.get(t, 0) + 1
    return out


def assemble(findings: Iterable[Finding], edges: list[Step], op_info, counts: dict[str, int],
             model: str, allow=(), forbid=(), examples: int = DEFAULT_EXAMPLES,
             exact_counts: dict[str, int] | None = None, graph_edges: int = 0) -> dict:
    """Results from findings (the first `examples` per type, by op and
    position), the graph's cycles and the verdict. `op_info(id)` describes
    an operation; `exact_counts` overrides the counts of findings when only
    the first few of each type were gathered (Spark); `graph_edges` is the
    size of the whole dependency graph (`edges` may be only its cyclic part)."""
    anomalies: dict[str, dict] = {}
    by_type: dict[str, list[Finding]] = {}
    for f in findings:
        by_type.setdefault(f.type, []).append(f)
    for kind, found in by_type.items():
        found.sort(key=lambda f: (f.sort, json.dumps(f.example)))   # as Spark ranks them
        count = (exact_counts or {}).get(kind, len(found))
        anomalies[kind] = {"count": count,
                           "examples": [explain(kind, f.example, op_info) for f in found[:examples]]}
    for cycle in cycle_anomalies(edges, cycle_types(model)):
        entry = anomalies.setdefault(cycle.anomaly, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < examples:
            ops = {op: op_info(op) or {"index": op} for op in cycle.ops}
            entry["examples"].append(explain_cycle(cycle, ops, ListAppendPhrasing()))
    types = sorted(anomalies)
    evidence = Evidence(any_ok=bool(counts.get("ok")), empty_graph=graph_edges == 0)
    valid, bad = verdict(types, evidence, model, allow, forbid)
    not_, also_not = consistency.violated(types)
    return {"valid": valid, "anomaly_types": types, "bad_anomaly_types": bad,
            "anomalies": {k: anomalies[k] for k in types}, "not": not_, "also_not": also_not,
            "consistency_model": model,
            "stats": {"ops": counts, "graph_edges": graph_edges}}
