"""Case data for test_elle_list_append.py: a small history builder in our
format (docs/history-format.md), the key names, and the generated
histories (simulators, the big ring) that stand in for Elle's generative
tests. Written for logtrial; nothing here is Elle's code.

Keys: Elle's :x :y :z :t :u become X=1, Y=2, Z=3, T=4, U=5. Elle's
integer keys stay as they are.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

X, Y, Z, T, U = 1, 2, 3, 4, 5
# A key no Elle case uses, for the ww edge that closes a cycle (see close()).
K = 99


# --- micro-ops ------------------------------------------------------------------

def A(key: int, value) -> list:
    """append `value` to `key`."""
    return ["append", key, value]


def R(key: int, *elements) -> list:
    """read `key`; with no elements the read is Elle's `nil` (the key was
    empty; our format allows null in an ok completion). On an invoke the
    builder replaces every read's value with null."""
    return ["r", key, list(elements) if elements else None]


def R0(key: int) -> list:
    """read `key` as the explicit empty list `[]` (Elle writes `[]`)."""
    return ["r", key, []]


def _invoke_value(mops: list) -> list:
    return [[m[0], m[1], None] if m[0] == "r" else list(m) for m in mops]


# --- history builder --------------------------------------------------------------

@dataclass
class History:
    """Events in our format; each method returns the history index of the
    operation's completion (its id in results: `op.index`), or of its invoke
    when it never completes."""
    events: list[dict] = field(default_factory=list)
    _pending: dict = field(default_factory=dict)

    def invoke(self, process: int, mops: list) -> int:
        assert process not in self._pending, f"process {process} already has an open invoke"
        self._pending[process] = mops
        self.events.append({"type": "invoke", "process": process, "f": "txn",
                            "value": _invoke_value(mops)})
        return len(self.events) - 1

    def complete(self, process: int, type: str = "ok") -> int:
        mops = self._pending.pop(process)
        value = mops if type == "ok" else _invoke_value(mops)   # fail/info repeat the invoke
        self.events.append({"type": type, "process": process, "f": "txn", "value": value})
        return len(self.events) - 1

    def txn(self, process: int, *mops, type: str = "ok") -> int:
        """invoke + completion, back to back. type None: no completion (info)."""
        start = self.invoke(process, list(mops))
        if type is None:
            self._pending.pop(process)
            return start
        return self.complete(process, type)


def seq(*txns, type: str = "ok") -> tuple[History, list[int]]:
    """Elle's `(h/history [(op ..) (op ..) ..])` of completed ops, all
    process 0 (as Elle's `op` makes them): each as an invoke/ok pair, one
    after the other. Returns the history and the op ids in order."""
    h = History()
    ids = [h.txn(0, *mops, type=type) for mops in txns]
    return h, ids


# --- closing an edge into a cycle ------------------------------------------------------

@dataclass(frozen=True)
class Op:
    """One operation of a graph case, before it becomes events."""
    mops: tuple
    type: str = "ok"
    process: int = 0


def build(ops: list[Op], close: tuple[int, int] | None = None) -> tuple[History, list[int]]:
    """Events for `ops`, in order, each an invoke/completion pair. `close`
    = (a, b), positions in `ops`: to show that Elle's graph has an edge
    a -> b, add a ww edge b -> a on the fresh key K (b appends 1, a appends
    2, and a last observer reads K = [1, 2]); if the edge exists, a and b
    now form a cycle, whose type says the edge's kind: ww -> G0, wr -> G1c,
    rw -> G-single. The observer's id is last in the returned ids."""
    ops = list(ops)
    if close is not None:
        a, b = close
        ops[b] = Op(ops[b].mops + (A(K, 1),), ops[b].type, ops[b].process)
        ops[a] = Op(ops[a].mops + (A(K, 2),), ops[a].type, ops[a].process)
        ops.append(Op((R(K, 1, 2),), "ok", 0))
    h = History()
    ids = [h.txn(o.process, *o.mops, type=o.type) for o in ops]
    return h, ids


# --- the unfindable G-single ring (unfindable-g-single) ---------------------------------

RING, ANTI = 1, 2          # Elle's :ring and :anti
NOISE_KEY = 1000           # Elle's integer key i -> 1000 + i
ANTI_KEY = 100_000         # Elle's [:anti i] -> 100000 + i


def unfindable_g_single(n: int, noise_n: int) -> tuple[History, list[int]]:
    """The shape of Elle's unfindable-g-single history, rebuilt (smaller n):
    a ring of n txns appending 0..n-1 to RING (a ww chain), the first also
    appending to ANTI, the last reading ANTI empty (one rw back to the
    first: a G-single); one read of the whole RING for its version order;
    and noise: for every ring txn i (0 < i < n-1) a ww chain on key i that
    ends in a read of i, an rw to a txn that then reads RING empty and so
    has an rw to the first ring txn (G2-item cycles, not G-single).
    Returns the history and the ring's op ids."""
    h = History()
    ring = []
    for i in range(n):
        if i == 0:
            second = A(ANTI, "first")
        elif i == n - 1:
            second = R(ANTI)
        else:
            second = A(NOISE_KEY + i, 0)
        ring.append(h.txn(0, A(RING, i), second))
    h.txn(1, R(RING, *range(n)))
    for i in range(1, n - 1):
        for j in range(1, noise_n):
            if j == noise_n - 2:
                h.txn(2, R(NOISE_KEY + i, *range(noise_n - 2)), R(ANTI_KEY + i))
            elif j == noise_n - 1:
                h.txn(2, A(ANTI_KEY + i, 0), R(RING))
            else:
                h.txn(2, A(NOISE_KEY + i, j))
    return h, ring


# --- simulated databases (sim-*-test, *-perf-test) -------------------------------------

@dataclass
class SimResult:
    history: History
    committed: list[tuple[int, dict, dict, dict]]   # (op id, snapshot, reads, appends) in commit order
    final: dict                                      # key -> list, the committed state


def random_txn(rng: random.Random, keys: int, next_value: dict) -> list:
    """1 to 4 micro-ops over `keys` keys, reads and appends half and half;
    appended values are 1, 2, 3, ... per key."""
    mops = []
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(keys)
        if rng.random() < 0.5:
            mops.append(R(k))
        else:
            next_value[k] = next_value.get(k, 0) + 1
            mops.append(A(k, next_value[k]))
    return mops


def simulate(db: str, n: int, concurrency: int, keys: int, seed: int,
             final_read: bool = True) -> SimResult:
    """A seeded run of `n` random transactions against a model database.
    A transaction takes its snapshot when invoked and commits when it
    completes, in completion order:

    - "prefix": no conflict checks; a commit overwrites each key it appended
      to with (its snapshot's list + its own appends): lost updates;
    - "si": snapshot isolation, first committer wins on the keys appended
      (a loser completes as fail);
    - "ssi": also on the keys read: serializable (and, since snapshots are
      taken at invoke and commits happen at completion, strict);
    - "serial": one transaction at a time, invoke and ok back to back, on a
      random process (Elle's perfect-perf-test database).

    With `final_read`, a last transaction reads every key after the others
    completed, so every key's whole version order is observed."""
    rng = random.Random(seed)
    h = History()
    state: dict = {}                 # committed: key -> list
    versions: dict = {}              # key -> commit count at last write
    commits = 0
    next_value: dict = {}
    running: dict = {}               # process -> (mops, snapshot, snapshot commit count)
    committed = []
    started = 0
    free = list(range(concurrency))
    at_once = 1 if db == "serial" else concurrency

    def run(mops, snapshot):
        local = {k: list(v) for k, v in snapshot.items()}
        reads, appends, out = {}, {}, []
        for f, k, v in mops:
            if f == "r":
                seen = list(local.get(k, []))
                out.append(["r", k, seen or None])
                reads.setdefault(k, seen)
            else:
                local.setdefault(k, []).append(v)
                appends.setdefault(k, []).append(v)
                out.append(["append", k, v])
        return out, reads, appends

    while started < n or running:
        can_start = started < n and len(running) < at_once
        if can_start and (not running or rng.random() < 0.5):
            p = free.pop(rng.randrange(len(free)))
            mops = random_txn(rng, keys, next_value)
            h.invoke(p, mops)
            running[p] = (mops, {k: list(v) for k, v in state.items()}, commits)
            started += 1
            continue
        p = rng.choice(sorted(running))
        mops, snapshot, at = running.pop(p)
        out, reads, appends = run(mops, snapshot)
        checked = set(appends) | (set(reads) if db == "ssi" else set())
        conflict = db in ("si", "ssi") and any(versions.get(k, 0) > at for k in checked)
        if conflict:
            h.complete(p, "fail")
        else:
            commits += 1
            for k, vs in appends.items():
                base = snapshot.get(k, []) if db == "prefix" else state.get(k, [])
                if db != "prefix":
                    # under SI, first-committer-wins guarantees state == snapshot here
                    assert db == "serial" or state.get(k, []) == snapshot.get(k, [])
                state[k] = list(base) + vs
                versions[k] = commits
            h._pending[p] = out
            committed.append((h.complete(p, "ok"), snapshot, reads, appends))
        free.append(p)
    if final_read:
        p = concurrency + 1
        mops = [R(k, *state[k]) for k in sorted(state)]
        h.txn(p, *mops)
    return SimResult(h, committed, state)


def true_dsg_has_cycle(sim: SimResult) -> bool:
    """Oracle for the SI simulator (no checker involved): the dependency
    graph of the committed transactions from the simulator's own knowledge
    (each key's final list is its version order), with ww, wr and rw edges;
    True iff it has a cycle."""
    writer: dict = {}          # (key, element) -> op id
    for op, _, _, appends in sim.committed:
        for k, vs in appends.items():
            for v in vs:
                writer[(k, v)] = op
    edges: dict = {}
    for op, _, reads, appends in sim.committed:
        for k, vs in appends.items():
            order = sim.final[k]
            i = order.index(vs[0])
            if i > 0 and writer[(k, order[i - 1])] != op:
                edges.setdefault(writer[(k, order[i - 1])], set()).add(op)          # ww
        for k, seen in reads.items():
            if seen and writer[(k, seen[-1])] != op:
                edges.setdefault(writer[(k, seen[-1])], set()).add(op)             # wr
            order = sim.final.get(k, [])
            if len(order) > len(seen) and writer[(k, order[len(seen)])] != op:
                edges.setdefault(op, set()).add(writer[(k, order[len(seen)])])     # rw
    color: dict = {}

    def visit(v) -> bool:
        color[v] = 1
        for w in edges.get(v, ()):
            if color.get(w) == 1 or (w not in color and visit(w)):
                return True
        color[v] = 2
        return False
    return any(v not in color and visit(v) for v in list(edges))


def read_orders_incompatible(sim: SimResult) -> bool:
    """Oracle: two ok reads of one key where neither list is a prefix of the
    other (Elle's incompatible-order)."""
    by_key: dict = {}
    for e in sim.history.events:
        if e["type"] == "ok":
            for f, k, v in e["value"]:
                if f == "r" and v:
                    by_key.setdefault(k, set()).add(tuple(v))
    for reads in by_key.values():
        ordered = sorted(reads, key=len)
        if any(b[:len(a)] != a for a, b in zip(ordered, ordered[1:])):
            return True
    return False


def ww_only_cycle(sim: SimResult) -> bool:
    """Oracle for Elle's G0 in a prefix-simulator history, from the history
    alone with Elle's version-order rule (no checker involved): a key's
    order is its longest ok read (elements never read come after its last
    element); ww edges join the writers of consecutive elements and the
    writer of the last read element to every unread append; True iff those
    edges have a cycle."""
    writer: dict = {}
    longest: dict = {}
    for op, e in enumerate(sim.history.events):
        if e["type"] != "ok":
            continue
        for f, k, v in e["value"]:
            if f == "append":
                writer[(k, v)] = op
            elif v and len(v) > len(longest.get(k, [])):
                longest[k] = v
    edges: dict = {}
    for k in {k for k, _ in writer}:
        order = list(dict.fromkeys(longest.get(k, [])))
        ws = [writer.get((k, v)) for v in order]
        for a, b in zip(ws, ws[1:]):
            if a is not None and b is not None and a != b:
                edges.setdefault(a, set()).add(b)
        last = ws[-1] if ws else None
        for (k2, v), w in writer.items():
            if k2 == k and v not in order and last is not None and last != w:
                edges.setdefault(last, set()).add(w)
    color: dict = {}

    def visit(v) -> bool:
        color[v] = 1
        for w in edges.get(v, ()):
            if color.get(w) == 1 or (w not in color and visit(w)):
                return True
        color[v] = 2
        return False
    return any(v not in color and visit(v) for v in list(edges))


def lost_update_exists(sim: SimResult) -> bool:
    """Oracle: two ok transactions that read the same list of a key (their
    first read of it) and then append to it (Elle's lost-update)."""
    seen: dict = {}
    for e in sim.history.events:
        if e["type"] != "ok":
            continue
        first_read: dict = {}
        written: set = set()
        for f, k, v in e["value"]:
            if f == "r":
                first_read.setdefault(k, tuple(v or ()))
            elif k in first_read and k not in written:
                written.add(k)
                if (k, first_read[k]) in seen:
                    return True
                seen[(k, first_read[k])] = True
    return False
