"""Histories for test_jepsen_kafka.py: the cases of Jepsen's Kafka checker
tests (jepsen/test/jepsen/tests/kafka_test.clj), rewritten in our history
format (docs/history-format.md).

Translation rules:
- keys :x, :y -> X = 1, Y = 2;
- message values :a :b :c :d :f :g -> the ints below; where Jepsen sends the
  same value to two keys (values need only be unique per key there), the
  second key gets a different int, said in a comment (ours must be unique
  across the history);
- a completion that Jepsen writes without an offset (`[:send :x :c]`) is
  `["send", X, [None, c]]` here;
- Jepsen's test histories often have no invoke, or no process; we add the
  invoke (same micro-ops, offsets/results stripped) and a process, said in a
  comment when it matters.

Each builder returns a `History`: `events` (no index/time: the `check`
fixture numbers them in order) and `at`, the history index of each named
event (Jepsen's name for it: `poll-4'` -> "poll-4'").
"""
from __future__ import annotations

from dataclasses import dataclass, field

X, Y = 1, 2                                  # Jepsen's :x and :y
a, b, c, d, f, g = 1, 2, 3, 4, 6, 7          # Jepsen's :a :b :c :d :f :g

POLL = ["poll"]


def send(k: int, v: int) -> list:
    """A send micro-op as invoked."""
    return ["send", k, v]


def sent(k: int, offset: int | None, v: int) -> list:
    """A send micro-op as completed: [offset or None, value]."""
    return ["send", k, [offset, v]]


def polled(result: dict[int, list[tuple[int, int]]]) -> list:
    """A poll micro-op as completed: {key: [(offset, value), ...]}."""
    return ["poll", {str(k): [[o, v] for o, v in pairs] for k, pairs in result.items()}]


@dataclass
class History:
    events: list[dict] = field(default_factory=list)
    at: dict[str, int] = field(default_factory=dict)

    def o(self, process, type_: str, f_: str, value, name: str | None = None) -> "History":
        """Jepsen's `o` shorthand, minus the index (file order gives it)."""
        self.events.append({"type": type_, "process": process, "f": f_, "value": value})
        if name is not None:
            self.at[name] = len(self.events) - 1
        return self


# --- version-orders-test -----------------------------------------------------

def version_orders() -> History:
    """version-orders-test, first `is`: a poll reads a@0 b@1; an info txn
    sent c@1, b@3, d@4. The poll proves the txn committed (it read b), so
    its offsets count: offset 1 holds b and c. Jepsen's history is two
    completions without invokes or processes; we add them, and an ok send of
    a (Jepsen's full analysis needs a writer for every value read; it leaves
    the log unchanged: a@0)."""
    h = History()
    h.o(2, "invoke", "send", [send(X, a)])
    h.o(2, "ok", "send", [sent(X, 0, a)], "send-a'")
    h.o(1, "invoke", "txn", [send(X, c), send(X, b), send(X, d)])
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(0, a), (1, b)]})], "poll'")
    h.o(1, "info", "txn", [sent(X, 1, c), sent(X, 3, b), sent(X, 4, d)], "txn'")
    return h


def version_orders_real_world() -> History:
    """version-orders-test, "a real-world example": two ok sends to key 11
    both acknowledged at offset 537."""
    h = History()
    h.o(379, "invoke", "send", [send(11, 641)])
    h.o(379, "ok", "send", [sent(11, 537, 641)], "send-641'")
    h.o(363, "invoke", "send", [send(11, 645)])
    h.o(363, "ok", "send", [sent(11, 537, 645)], "send-645'")
    return h


# --- inconsistent-offsets-test -----------------------------------------------

X1, Y1, X2 = 1, 3, 2   # Jepsen's send-1 sends 1 to :x and :y; ours sends 3 to y


def inconsistent_offsets_info(with_poll: bool) -> History:
    """inconsistent-offsets-test, "info conflicts": an info send put 1 at
    x@0 (and 1 to y, offset unknown); an ok send put 2 at x@0. Without a
    read the info send may not have happened; `with_poll`, a poll reads its
    y value, so it did, and x@0 holds two values."""
    h = History()
    h.o(0, "invoke", "send", [send(X, X1), send(Y, Y1)])
    h.o(0, "info", "send", [sent(X, 0, X1), sent(Y, None, Y1)], "send-1'")
    h.o(1, "invoke", "send", [send(X, X2)])
    h.o(1, "ok", "send", [sent(X, 0, X2)], "send-2'")
    if with_poll:
        h.o(2, "invoke", "poll", [POLL])
        h.o(2, "ok", "poll", [polled({Y: [(5, Y1)]})], "poll-1'")
    return h


# --- g1a-test -----------------------------------------------------------------

def g1a() -> History:
    """g1a-test: a failed send of 2 to x (and 3 to y) is polled at x@0."""
    h = History()
    h.o(0, "invoke", "send", [send(X, 2), send(Y, 3)])
    h.o(0, "fail", "send", [sent(X, None, 2), sent(Y, None, 3)], "send'")
    h.o(1, "invoke", "poll", [POLL])
    h.o(1, "ok", "poll", [polled({X: [(0, 2)]})], "poll'")
    return h


# --- lost-write-test ----------------------------------------------------------

def lost_write_consistent() -> History:
    """lost-write-test, "consistent": a@0, b@1, d@3 acknowledged; a poll
    reads c@2 (from an info send), so a and b should have been read."""
    h = History()
    h.o(0, "invoke", "send", [send(X, a)])
    h.o(0, "ok", "send", [sent(X, 0, a)], "send-a'")
    h.o(0, "invoke", "send", [send(X, b), send(X, d)])
    h.o(0, "ok", "send", [sent(X, 1, b), sent(X, 3, d)], "send-bd'")
    h.o(1, "invoke", "send", [send(X, c)])
    h.o(1, "info", "send", [sent(X, None, c)], "send-c'")
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(2, c)]})], "poll'")
    return h


def lost_write_inconsistent() -> History:
    """lost-write-test, "inconsistent": a acknowledged at x@0, then b at
    x@0 and c at x@2; a poll reads b@0 c@2. a was never read."""
    h = History()
    h.o(0, "invoke", "send", [send(X, a)])
    h.o(0, "ok", "send", [sent(X, 0, a)], "send-a'")
    h.o(0, "invoke", "send", [send(X, b), send(X, c)])
    h.o(0, "ok", "send", [sent(X, 0, b), sent(X, 2, c)], "send-bc'")
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(0, b), (2, c)]})], "read-bc'")
    return h


A_X, B_Y, C_Y = 1, 2, 3   # lost-write "atomic": a to :x, b and c to :y


def lost_write_atomic(with_poll_a: bool) -> History:
    """lost-write-test, "atomic": an info send of a to x and b to y@0; an
    info send of c to y; a poll reads c at y@1. Only when another poll reads
    a (`with_poll_a`) do we know the first send committed, so b was lost."""
    h = History()
    h.o(0, "invoke", "send", [send(X, A_X), send(Y, B_Y)])
    h.o(0, "info", "send", [sent(X, None, A_X), sent(Y, 0, B_Y)], "send-ab'")
    h.o(1, "invoke", "send", [send(Y, C_Y)])
    h.o(1, "info", "send", [sent(Y, None, C_Y)], "send-c'")
    if with_poll_a:
        h.o(2, "invoke", "poll", [POLL])
        h.o(2, "ok", "poll", [polled({X: [(0, A_X)]})], "poll-a'")
    h.o(3, "invoke", "poll", [POLL])
    h.o(3, "ok", "poll", [polled({Y: [(1, C_Y)]})], "poll-c'")
    return h


def lost_write_log_indices() -> History:
    """log->value->first-index-test and log->last-index->values-test,
    "standard", as the lost-write result they decide. The log of x is
    Jepsen's example [nil #{a} #{a b c} nil #{c} #{c d} #{d}]: offset 1 {a},
    2 {a b c}, 4 {c}, 5 {c d}, 6 {d}; dense indices 0..4 for offsets
    1 2 4 5 6. a b c d are acknowledged at 1 2 4 6; two failed (aborted)
    polls, whose results still count for the log, put a and c at 2 and c and
    d at 5; the only ok read is d@6.

    Jepsen: the read of d bounds the log at d's FIRST index, 3 (offset 5);
    the values that must have been read are those whose LAST index is <= 3:
    a (last 1), b (1), c (3). None was read: three lost writes, located at
    their first index: a 0 (offset 1), b 1 (offset 2), c 1 (offset 2)."""
    h = History()
    for p, (offset, v) in enumerate([(1, a), (2, b), (4, c), (6, d)]):
        h.o(p, "invoke", "send", [send(X, v)])
        h.o(p, "ok", "send", [sent(X, offset, v)], f"send-{v}'")
    h.o(4, "invoke", "txn", [POLL])
    h.o(4, "fail", "txn", [polled({X: [(2, a), (5, c)]})])
    h.o(5, "invoke", "txn", [POLL])
    h.o(5, "fail", "txn", [polled({X: [(2, c), (5, d)]})])
    h.o(6, "invoke", "poll", [POLL])
    h.o(6, "ok", "poll", [polled({X: [(6, d)]})], "poll-d'")
    return h


# --- poll-skip-test -----------------------------------------------------------

def poll_skip(intermediate: str | None = None) -> History:
    """poll-skip-test: process 0 reads x@1-2, then x@4, then x@7; x@3 (c)
    and x@6 (f) are known from another poll and a send. `intermediate`:
    "y" puts an ok subscribe [y] before poll-4 and an info assign [y] after
    it ("with intermediate subscribe", first `is`); "xy" puts an ok
    subscribe [x y] and an ok assign [x y] there (second `is`)."""
    h = History()
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(1, a), (2, b)]})], "poll-1-2'")
    h.o(1, "invoke", "poll", [POLL])
    h.o(1, "ok", "poll", [polled({X: [(3, c)]})], "poll-3'")
    if intermediate == "y":
        h.o(0, "invoke", "subscribe", [Y])
        h.o(0, "ok", "subscribe", [Y])
    elif intermediate == "xy":
        h.o(0, "invoke", "subscribe", [X, Y])
        h.o(0, "ok", "subscribe", [X, Y])
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(4, d)]})], "poll-4'")
    if intermediate == "y":
        # Jepsen's process 0 goes on after this info (our contract says a
        # process never does; the checker must still cope)
        h.o(0, "invoke", "assign", [Y])
        h.o(0, "info", "assign", [Y])
    elif intermediate == "xy":
        h.o(0, "invoke", "assign", [X, Y])
        h.o(0, "ok", "assign", [X, Y])
    h.o(2, "invoke", "send", [send(X, f)])
    h.o(2, "ok", "send", [sent(X, 6, f)], "write-6'")
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(7, g)]})], "poll-7'")
    h.o(3, "invoke", "send", [send(X, v) for v in (a, b, c, d, g)])
    h.o(3, "info", "send", [sent(X, None, v) for v in (a, b, c, d, g)], "write-*'")
    return h


def poll_skip_txn_abort(variant: str) -> History:
    """poll-skip-test, "txn abort": process 1 polls in transactions; an
    aborted (fail) or crashed (info) transaction's polls must not advance
    its position: the next one should start over from the same offset.

    "good": polls x@0 (ok), x@1-2 (fail), x@1-2 (info), x@1-2 (ok): correct.
    "abort doesn't roll back": x@0 (ok), x@1-2 (fail), x@3-4 (fail),
    x@5 (ok): the last two skipped x@1-2.
    "info can be a poll-skip": x@0 (ok), x@1-2 (fail), x@3-4 (info).
    (Jepsen's process 1 goes on after an info in "good"; see poll_skip.)"""
    n = 3 if variant == "good" else 6
    h = History()
    h.o(0, "invoke", "send", [send(X, v) for v in range(n)])
    h.o(0, "ok", "send", [sent(X, v, v) for v in range(n)])
    h.o(1, "invoke", "txn", [POLL])
    h.o(1, "ok", "txn", [polled({X: [(0, 0)]})], "poll-0'")
    h.o(1, "invoke", "txn", [POLL])
    h.o(1, "fail", "txn", [polled({X: [(1, 1), (2, 2)]})], "poll-1-2-fail'")
    if variant == "good":
        h.o(1, "invoke", "txn", [POLL])
        h.o(1, "info", "txn", [polled({X: [(1, 1), (2, 2)]})])
        h.o(1, "invoke", "txn", [POLL])
        h.o(1, "ok", "txn", [polled({X: [(1, 1), (2, 2)]})])
    elif variant == "abort doesn't roll back":
        h.o(1, "invoke", "txn", [POLL])
        h.o(1, "fail", "txn", [polled({X: [(3, 3), (4, 4)]})], "poll-3-4'")
        h.o(1, "invoke", "txn", [POLL])
        h.o(1, "ok", "txn", [polled({X: [(5, 5)]})], "poll-5'")
    elif variant == "info can be a poll-skip":
        h.o(1, "invoke", "txn", [POLL])
        h.o(1, "info", "txn", [polled({X: [(3, 3), (4, 4)]})], "poll-3-4'")
    else:
        raise ValueError(variant)
    return h


# --- nonmonotonic-poll-test / nonmonotonic-send-test --------------------------

def _intermediate(h: History, which: str | None, info: tuple[str, ...] = ()) -> None:
    """A subscribe/assign of [y] or [x y] by process 0 (`which`: "sub-y",
    "assign-y", "sub-xy", "assign-xy" or None); it completes ok, or info
    when `which` is in `info`."""
    if which is None:
        return
    f_, keys = which.split("-")
    f_ = {"sub": "subscribe", "assign": "assign"}[f_]
    value = [Y] if keys == "y" else [X, Y]
    h.o(0, "invoke", f_, value)
    h.o(0, "info" if which in info else "ok", f_, value)


def nonmonotonic_poll(intermediate: str | None = None) -> History:
    """nonmonotonic-poll-test: process 0 polls x@1-3, then x@2-4 (back to
    2). The sends' offsets are unknown; the polls give the order.
    `intermediate`: see _intermediate (all ok here, as in Jepsen)."""
    h = History()
    h.o(0, "invoke", "send", [send(X, v) for v in (a, b, c, d)])
    h.o(0, "ok", "send", [sent(X, None, v) for v in (a, b, c, d)])
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(1, a), (2, b), (3, c)]})], "poll-123'")
    _intermediate(h, intermediate)
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(2, b), (3, c), (4, d)]})], "poll-234'")
    return h


def nonmonotonic_send(intermediate: str | None = None) -> History:
    """nonmonotonic-send-test: process 0 sends c@3 d@4, then a@1 b@2.
    (Jepsen's second invoke says 1 and 2, its completion a and b; the
    completion is what counts, so we invoke a and b.) `intermediate`: see
    _intermediate; Jepsen's assign-y completes info here (after which
    process 0 goes on, see poll_skip)."""
    h = History()
    h.o(0, "invoke", "send", [send(X, c), send(X, d)])
    h.o(0, "ok", "send", [sent(X, 3, c), sent(X, 4, d)], "send-34'")
    _intermediate(h, intermediate, info=("assign-y",))
    h.o(0, "invoke", "send", [send(X, a), send(X, b)])
    h.o(0, "ok", "send", [sent(X, 1, a), sent(X, 2, b)], "send-12'")
    return h


# --- int-* tests --------------------------------------------------------------

def int_poll_skip() -> History:
    """int-poll-skip-test: one poll returns x@1 and x@4; one op's two polls
    return x@1 then x@4; another poll shows x@2 (b) between them."""
    h = History()
    h.o(1, "invoke", "send", [send(X, a), send(X, b), send(X, d)])
    h.o(1, "info", "send", [sent(X, None, a), sent(X, None, b), sent(X, None, d)])
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(1, a), (4, d)]})], "poll-1-4a'")
    h.o(0, "invoke", "poll", [POLL, POLL])
    h.o(0, "ok", "poll", [polled({X: [(1, a)]}), polled({X: [(4, d)]})], "poll-1-4b'")
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(2, b)]})], "poll-2'")
    return h


def int_send_skip() -> History:
    """int-send-skip-test: one op sends a (acknowledged at x@1) and c
    (offset unknown); a poll reads b@2 c@3, so the op's sends skipped b."""
    h = History()
    h.o(0, "invoke", "send", [send(X, a), send(X, c)])
    h.o(0, "ok", "send", [sent(X, 1, a), sent(X, None, c)], "send-13'")
    h.o(1, "invoke", "send", [send(X, b)])
    h.o(1, "info", "send", [sent(X, None, b)])
    h.o(2, "invoke", "poll", [POLL])
    h.o(2, "ok", "poll", [polled({X: [(2, b), (3, c)]})], "poll-23'")
    return h


def int_nonmonotonic_poll() -> History:
    """int-nonmonotonic-poll-test: one poll returns x@3 then x@1; one op's
    polls return x@2 x@3, then x@3 again. (Jepsen invokes the second op with
    one [:poll] and completes it with two; we invoke two.)"""
    h = History()
    h.o(0, "invoke", "send", [send(X, a), send(X, b), send(X, c)])
    h.o(0, "info", "send", [sent(X, None, a), sent(X, None, b), sent(X, None, c)])
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(3, c), (1, a)]})], "poll-31a'")
    h.o(0, "invoke", "poll", [POLL, POLL])
    h.o(0, "ok", "poll", [polled({X: [(2, b), (3, c)]}), polled({X: [(3, c)]})], "poll-33b'")
    return h


B_Y2, C_Y2, D_Y2 = 12, 13, 14   # int-nonmonotonic-send: Jepsen's :b :c :d on :y


def int_nonmonotonic_send() -> History:
    """int-nonmonotonic-send-test: one op sends c then a, acknowledged at
    x@3 then x@1; another (info) sends d then b to y, and a poll reads
    y@2 b, y@3 c, y@4 d. (Jepsen's first invoke says 3 and 1, its completion
    c and a; Jepsen uses :c on both keys, ours is 13 on y.)"""
    h = History()
    h.o(0, "invoke", "send", [send(X, c), send(X, a)])
    h.o(0, "ok", "send", [sent(X, 3, c), sent(X, 1, a)], "send-31a'")
    h.o(0, "invoke", "send", [send(Y, D_Y2), send(Y, B_Y2)])
    h.o(0, "info", "send", [sent(Y, None, D_Y2), sent(Y, None, B_Y2)], "send-42b'")
    h.o(1, "invoke", "send", [send(Y, C_Y2)])
    h.o(1, "info", "send", [sent(Y, None, C_Y2)])
    # Jepsen's process 0 polls after its info (see poll_skip)
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({Y: [(2, B_Y2), (3, C_Y2), (4, D_Y2)]})], "poll-42b'")
    return h


# --- duplicate-test -----------------------------------------------------------

def duplicate_basic() -> History:
    """duplicate-test, "basic": a acknowledged at x@1, polled at x@3."""
    h = History()
    h.o(0, "invoke", "send", [send(X, a)])
    h.o(0, "ok", "send", [sent(X, 1, a)], "send-a1'")
    h.o(1, "invoke", "send", [send(X, b)])
    h.o(1, "info", "send", [sent(X, None, b)])
    h.o(2, "invoke", "poll", [POLL])
    h.o(2, "ok", "poll", [polled({X: [(2, b), (3, a)]})], "poll-a3'")
    return h


HASH_N = 10


def duplicate_hash_insensitive() -> History:
    """duplicate-test, "hash-insensitive": values 0..9 each acknowledged at
    x@0 and polled at x@1."""
    h = History()
    for v in range(HASH_N):
        h.o(0, "invoke", "send", [send(X, v)])
        h.o(0, "ok", "send", [sent(X, 0, v)])
        h.o(1, "invoke", "poll", [POLL])
        h.o(1, "ok", "poll", [polled({X: [(1, v)]})])
    return h


def duplicate_aborted_txns() -> History:
    """duplicate-test, "aborted txns": 0 acknowledged at x@1; a failed send
    of 1 (reported at x@2); an aborted (fail) poll reads 0@11 and 1@12.
    0 is at two offsets; 1's send never happened, so it is at one."""
    h = History()
    h.o(0, "invoke", "send", [send(X, 0)])
    h.o(0, "ok", "send", [sent(X, 1, 0)], "send-0'")
    h.o(0, "invoke", "send", [send(X, 1)])
    h.o(0, "fail", "send", [sent(X, 2, 1)], "send-1'")
    h.o(1, "invoke", "poll", [POLL])
    h.o(1, "fail", "poll", [polled({X: [(11, 0), (12, 1)]})], "poll'")
    return h


# --- empty-history-test, unseen-test -------------------------------------------

def empty_history() -> History:
    """empty-history-test: an assign, and nothing else."""
    return History().o(0, "invoke", "assign", [X]).o(0, "ok", "assign", [X])


def unseen() -> History:
    """unseen-test: poll nothing; send a@0 b@1; poll a; poll b. Jepsen's
    series at the four ok completions: {}, {x 2}, {x 1}, {x 0}."""
    h = History()
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [["poll", {}]], "poll-0'")
    h.o(0, "invoke", "send", [send(X, a), send(X, b)])
    h.o(0, "ok", "send", [sent(X, 0, a), sent(X, 1, b)], "send'")
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(0, a)]})], "poll-a'")
    h.o(0, "invoke", "poll", [POLL])
    h.o(0, "ok", "poll", [polled({X: [(1, b)]})], "poll-b'")
    return h


# --- cycles, precommitted-read -------------------------------------------------

G0_A_Y, G0_B_Y = 11, 12   # g0-test sends :a and :b to both keys; on :y ours are 11 and 12


def g0() -> History:
    """g0-test: wa sends a to x@0 and y@1, wb sends b to x@1 and y@0,
    concurrently: a write cycle."""
    h = History()
    h.o(0, "invoke", "send", [send(X, a), send(Y, G0_A_Y)])
    h.o(1, "invoke", "send", [send(X, b), send(Y, G0_B_Y)])
    h.o(0, "ok", "send", [sent(X, 0, a), sent(Y, 1, G0_A_Y)], "wa'")
    h.o(1, "ok", "send", [sent(X, 1, b), sent(Y, 0, G0_B_Y)], "wb'")
    return h


def g1c_pure_wr() -> History:
    """g1c-pure-wr-test: t1 sends a to x and polls t2's b on y; t2 sends b
    to y and polls t1's a on x."""
    h = History()
    h.o(0, "invoke", "txn", [send(X, a), POLL])
    h.o(1, "invoke", "txn", [send(Y, b), POLL])
    h.o(0, "ok", "txn", [sent(X, 0, a), polled({Y: [(0, b)]})], "t1'")
    h.o(1, "ok", "txn", [sent(Y, 0, b), polled({X: [(0, a)]})], "t2'")
    return h


def g1c_ww_wr() -> History:
    """g1c-ww-wr-test: t1 sends a to x@0 and c to y@2; t2 polls a and sends
    b to y@1, before c."""
    h = History()
    h.o(0, "invoke", "txn", [send(X, a), send(Y, c)])
    h.o(1, "invoke", "txn", [POLL, send(Y, b)])
    h.o(0, "ok", "txn", [sent(X, 0, a), sent(Y, 2, c)], "t1'")
    h.o(1, "ok", "txn", [polled({X: [(0, a)]}), sent(Y, 1, b)], "t2'")
    return h


def precommitted_read() -> History:
    """precommitted-read-test: t1 sends a to x@0 and polls it back."""
    h = History()
    h.o(0, "invoke", "txn", [send(X, a), POLL])
    h.o(0, "ok", "txn", [sent(X, 0, a), polled({X: [(0, a)]})], "t1'")
    return h
