"""Jepsen's published Kafka checker tests, ported: every case of
jepsen/test/jepsen/tests/kafka_test.clj (jepsen-io/jepsen, checked against
jepsen/src/jepsen/tests/kafka.clj) that checks what the analysis finds, as a
history in our format (kafka_cases.py) and the same expectation: anomaly
types, counts where Jepsen asserts them, and the location (key, offsets,
values, operations). Expected values are what Jepsen computes, not what our
checker returns today.

How Jepsen's locations map to ours:
- Jepsen's `:index` / `:max-read-index` are positions in the key's dense
  order (offsets known to hold a value); we give the offset at that
  position. For lost-write these are `first_offset` (the value's first
  offset in the log) and `max_read_first_offset` (the first offset of the
  highest value read); `offsets` / `max_read_offset` add where the send was
  acknowledged and the highest offset read.
- `:op` / `:ops` / `:writer` / `:reader` are operations; we compare history
  indices of completions (`ops[*].index`), in Jepsen's order where it has one
  (writer before reader, previous op before next).
- poll-skip/int-*-skip `:skipped` has no field in our examples; it follows
  from `delta` (skipped = delta - 1 values), which we assert.
- cycles: Jepsen's `:steps` are compared with our `cycle` rows as
  (op, edge, key, value); for ww our row's value is Jepsen's `:value'`.
- `:valid?`: Jepsen's false for an empty history is Elle's
  `:empty-transaction-graph`, which Elle rates `:unknown`; ours is the
  verdict "unknown", which is not valid (exit 2).

A few Jepsen histories let a process invoke again after an `info`
completion, which our contract (docs/history-format.md) rules out; we keep
them as Jepsen wrote them (the checker must not depend on it), noted in
kafka_cases.py.

No case differs from Jepsen's statement (docs/checkers.md, "Compared with
Jepsen's checker", traces each translation).

Not ported (they test no analysis result we produce):
- op->max-offsets-test: a generator helper (highest offsets an op saw, for
  final polls); no checker output depends on it.
- realtime-lag-test (2 assertions: the lag series and worst-realtime-lag):
  we compute no realtime lag; no counterpart in our results.
- gen-poll-unseen-test (6 assertions): Jepsen's generator wrapper
  `poll-unseen` (re-assigns consumers to unread keys); a generator, not the
  checker.
- log->value->first-index-test / log->last-index->values-test, "empty":
  an empty log; nothing to find, the same as empty-history-test.
Ported as the result they imply:
- version-orders-test: its `:errors` as inconsistent-offsets (plus the
  duplicate the same log implies); the inferred order itself through the
  anomalies that use it in the other tests.
- log->value->first-index-test / log->last-index->values-test, "standard":
  as the lost-write result those two indices decide, on the same log.
"""
from __future__ import annotations

import pytest

from tests.checkers.published import kafka_cases as k
from tests.checkers.published.kafka_cases import X, Y, a, b, c, d, g


# --- helpers ------------------------------------------------------------------

def found(results: dict, kind: str, count: int) -> list[dict]:
    """The examples of `kind`, asserting it was found exactly `count` times."""
    anomalies = results["anomalies"]
    assert kind in anomalies, f"{kind} not found; found {sorted(anomalies)}"
    assert anomalies[kind]["count"] == count, anomalies[kind]
    return anomalies[kind]["examples"]


def absent(results: dict, kind: str) -> None:
    assert kind not in results["anomalies"], results["anomalies"][kind]


def ops(e: dict) -> tuple[int, ...]:
    return tuple(op["index"] for op in e["ops"])


def where(e: dict) -> tuple:
    """key, offsets, values (no ops: the ops of conflicts are their observers)."""
    return e["key"], tuple(e["offsets"]), tuple(e["values"])


def order_step(e: dict) -> tuple:
    """key, offsets, values, ops, delta: poll-skip, nonmonotonic-*, int-*."""
    return (*where(e), ops(e), e["delta"])


def lost(e: dict) -> tuple:
    """Jepsen's lost-write map: key, value, index and max-read-index (as
    offsets), writer, max-read."""
    return (e["key"], e["values"][0], e["first_offset"], e["max_read_first_offset"], ops(e)[0],
            e["max_read_op"]["index"])


def cycle_rows(e: dict) -> set[tuple]:
    return {(row["op"]["index"], row["edge"], int(row["key"]), int(row["value"])) for row in e["cycle"]}


# --- version-orders-test ------------------------------------------------------

def test_version_orders_conflict_with_proven_info_txn(check):
    # version-orders-test: {:errors [{:key :x, :index 1, :offset 1, :values #{:b :c}}]}
    h = k.version_orders()
    results = check(h.events, "queue")
    [e] = found(results, "inconsistent-offsets", 1)
    assert where(e) == (X, (1,), (b, c))
    # the same log (b at offsets 1 and 3) makes b a duplicate (duplicate-cases)
    [e] = found(results, "duplicate", 1)
    assert where(e) == (X, (1, 3), (b,))


def test_version_orders_real_world(check):
    # version-orders-test, "a real-world example":
    # [{:key 11, :index 0, :offset 537, :values #{641 645}}]
    h = k.version_orders_real_world()
    results = check(h.events, "queue")
    [e] = found(results, "inconsistent-offsets", 1)
    assert where(e) == (11, (537,), (641, 645))


# --- inconsistent-offsets-test --------------------------------------------------

def test_inconsistent_offsets_unproven_info_send(check):
    # inconsistent-offsets-test, "info conflicts", first `is`: nil
    h = k.inconsistent_offsets_info(with_poll=False)
    absent(check(h.events, "queue"), "inconsistent-offsets")


def test_inconsistent_offsets_info_send_proven_by_poll(check):
    # inconsistent-offsets-test, "info conflicts", second `is`:
    # [{:key :x, :index 0, :offset 0, :values #{1 2}}]
    h = k.inconsistent_offsets_info(with_poll=True)
    [e] = found(check(h.events, "queue"), "inconsistent-offsets", 1)
    assert where(e) == (X, (0,), (k.X1, k.X2))


# --- g1a-test -----------------------------------------------------------------

def test_g1a(check):
    # g1a-test: [{:reader poll', :writer send', :key :x, :value 2}]
    h = k.g1a()
    [e] = found(check(h.events, "queue"), "G1a", 1)
    assert where(e) == (X, (0,), (2,))
    assert ops(e) == (h.at["send'"], h.at["poll'"])


# --- lost-write-test ----------------------------------------------------------

def test_lost_write_consistent(check):
    # lost-write-test, "consistent": [{:key :x, :value :a, :index 0, :max-read-index 2,
    #   :writer send-a', :max-read poll'} {:key :x, :value :b, :index 1,
    #   :max-read-index 2, :writer send-bd', :max-read poll'}]  (indices 0-3 are offsets 0-3)
    h = k.lost_write_consistent()
    examples = found(check(h.events, "queue"), "lost-write", 2)
    assert sorted(lost(e) for e in examples) == [
        (X, a, 0, 2, h.at["send-a'"], h.at["poll'"]),
        (X, b, 1, 2, h.at["send-bd'"], h.at["poll'"])]


def test_lost_write_inconsistent(check):
    # lost-write-test, "inconsistent": [{:key :x, :value :a, :index 0,
    #   :max-read-index 1, :writer send-a', :max-read read-bc'}]
    # (dense: "there is no offset 1", index 1 is offset 2)
    h = k.lost_write_inconsistent()
    [e] = found(check(h.events, "queue"), "lost-write", 1)
    assert lost(e) == (X, a, 0, 2, h.at["send-a'"], h.at["read-bc'"])
    assert (e["offsets"], e["max_read_offset"]) == ([0], 2)


def test_lost_write_atomic_unproven(check):
    # lost-write-test, "atomic", first `is`: without the poll of a, nil
    h = k.lost_write_atomic(with_poll_a=False)
    absent(check(h.events, "queue"), "lost-write")


def test_lost_write_atomic_proven_by_poll(check):
    # lost-write-test, "atomic", second `is`: [{:key :y, :value :b, :index 0,
    # :max-read-index 1, :writer send-ab', :max-read poll-c'}]
    h = k.lost_write_atomic(with_poll_a=True)
    [e] = found(check(h.events, "queue"), "lost-write", 1)
    assert lost(e) == (Y, k.B_Y, 0, 1, h.at["send-ab'"], h.at["poll-c'"])


def test_lost_write_log_indices(check):
    # log->value->first-index-test / log->last-index->values-test, "standard":
    # first indices {a 0, b 1, c 1, d 3}, last indices [nil #{a b} nil #{c} #{d}];
    # the read of d bounds the log at index 3, so a, b, c are lost, each at its
    # first index. Dense indices 0-4 are offsets 1 2 4 5 6 here.
    h = k.lost_write_log_indices()
    examples = found(check(h.events, "queue"), "lost-write", 3)
    assert sorted(lost(e) for e in examples) == [
        (X, a, 1, 5, h.at[f"send-{a}'"], h.at["poll-d'"]),
        (X, b, 2, 5, h.at[f"send-{b}'"], h.at["poll-d'"]),
        (X, c, 2, 5, h.at[f"send-{c}'"], h.at["poll-d'"])]
    # beside Jepsen's positions: where each was acknowledged, and the highest offset read
    assert sorted((e["values"][0], e["offsets"][0], e["max_read_offset"]) for e in examples) == [
        (a, 1, 6), (b, 2, 6), (c, 4, 6)]
    [c_lost] = [e for e in examples if e["values"] == [c]]
    assert c_lost["explanation"].endswith(f"; a poll saw {c} at offset 2 first.")


# --- poll-skip-test -------------------------------------------------------------

def poll_skip_errs(h) -> list[tuple]:
    # [{:key :x, :ops [poll-1-2' poll-4'], :delta 2, :skipped [:c]}
    #  {:key :x, :ops [poll-4' poll-7'], :delta 2, :skipped [:f]}]
    return [(X, (2, 4), (b, d), (h.at["poll-1-2'"], h.at["poll-4'"]), 2),
            (X, (4, 7), (d, g), (h.at["poll-4'"], h.at["poll-7'"]), 2)]


def test_poll_skip(check):
    # poll-skip-test, first `is`
    h = k.poll_skip()
    examples = found(check(h.events, "queue"), "poll-skip", 2)
    assert sorted(order_step(e) for e in examples) == poll_skip_errs(h)


def test_poll_skip_after_subscribe_and_assign_without_x(check):
    # poll-skip-test, "with intermediate subscribe", first `is`: nil
    # (subscribe [y] ok before poll-4, assign [y] info after it)
    h = k.poll_skip("y")
    absent(check(h.events, "queue"), "poll-skip")


def test_poll_skip_after_subscribe_and_assign_still_covering_x(check):
    # poll-skip-test, "with intermediate subscribe", second `is`: errs
    # (subscribe [x y] and assign [x y] keep x's position).
    h = k.poll_skip("xy")
    examples = found(check(h.events, "queue"), "poll-skip", 2)
    assert sorted(order_step(e) for e in examples) == poll_skip_errs(h)


def test_poll_skip_txn_abort_good(check):
    # poll-skip-test, "txn abort", "good": (empty? (:errors a))
    h = k.poll_skip_txn_abort("good")
    results = check(h.events, "queue")
    assert results["anomalies"] == {}


def test_poll_skip_txn_abort_does_not_roll_back(check):
    # poll-skip-test, "txn abort", "abort doesn't roll back":
    # [{:key :x, :delta 3, :skipped [1 2], :ops [(h 3) (h 7)]}
    #  {:key :x, :delta 5, :skipped [1 2 3 4], :ops [(h 3) (h 9)]}]
    h = k.poll_skip_txn_abort("abort doesn't roll back")
    assert (h.at["poll-0'"], h.at["poll-3-4'"], h.at["poll-5'"]) == (3, 7, 9)
    examples = found(check(h.events, "queue"), "poll-skip", 2)
    assert sorted(order_step(e) for e in examples) == [
        (X, (0, 3), (0, 3), (3, 7), 3),
        (X, (0, 5), (0, 5), (3, 9), 5)]


def test_poll_skip_txn_abort_info_can_be_a_poll_skip(check):
    # poll-skip-test, "txn abort", "info can be a poll-skip":
    # [{:key :x, :delta 3, :skipped [1 2], :ops [(h 3) (h 7)]}]
    h = k.poll_skip_txn_abort("info can be a poll-skip")
    assert (h.at["poll-0'"], h.at["poll-3-4'"]) == (3, 7)
    [e] = found(check(h.events, "queue"), "poll-skip", 1)
    assert order_step(e) == (X, (0, 3), (0, 3), (3, 7), 3)


# --- nonmonotonic-poll-test -----------------------------------------------------

def test_nonmonotonic_poll(check):
    # nonmonotonic-poll-test, "together":
    # [{:key :x, :ops [poll-123' poll-234'], :values [:c :b], :delta -1}]
    # (its "still covering x" cases: test_nonmonotonic_poll_after_subscribe_without_x)
    h = k.nonmonotonic_poll(None)
    [e] = found(check(h.events, "queue"), "nonmonotonic-poll", 1)
    assert order_step(e) == (X, (3, 2), (c, b), (h.at["poll-123'"], h.at["poll-234'"]), -1)


@pytest.mark.parametrize("intermediate", ["sub-y", "assign-y"])
def test_nonmonotonic_poll_after_subscribe_without_x(check, intermediate):
    # nonmonotonic-poll-test, "with intermediate subscribe", first and second `is`: nil
    h = k.nonmonotonic_poll(intermediate)
    absent(check(h.events, "queue"), "nonmonotonic-poll")


@pytest.mark.parametrize("intermediate", ["sub-xy", "assign-xy"])
def test_nonmonotonic_poll_after_subscribe_still_covering_x(check, intermediate):
    # nonmonotonic-poll-test, "with intermediate subscribe", third and fourth
    # `is`: errs (x kept, so its position carries across)
    h = k.nonmonotonic_poll(intermediate)
    [e] = found(check(h.events, "queue"), "nonmonotonic-poll", 1)
    assert order_step(e) == (X, (3, 2), (c, b), (h.at["poll-123'"], h.at["poll-234'"]), -1)


# --- nonmonotonic-send-test -----------------------------------------------------

@pytest.mark.parametrize("intermediate", [None, "sub-xy", "assign-xy"])
def test_nonmonotonic_send(check, intermediate):
    # nonmonotonic-send-test, first `is` (None) and "with intermediate
    # subscribe", third and fourth `is`:
    # [{:key :x, :values [:d :a], :delta -3, :ops [send-34' send-12']}]
    h = k.nonmonotonic_send(intermediate)
    [e] = found(check(h.events, "queue"), "nonmonotonic-send", 1)
    assert order_step(e) == (X, (4, 1), (d, a), (h.at["send-34'"], h.at["send-12'"]), -3)


@pytest.mark.parametrize("intermediate", ["sub-y", "assign-y"])
def test_nonmonotonic_send_after_subscribe_without_x(check, intermediate):
    # nonmonotonic-send-test, "with intermediate subscribe", first and second
    # `is`: nil (assign-y completes info: it may have happened, so x's last
    # send is forgotten)
    h = k.nonmonotonic_send(intermediate)
    absent(check(h.events, "queue"), "nonmonotonic-send")


# --- int-poll-skip-test, int-send-skip-test, int-nonmonotonic-*-test -----------

def test_int_poll_skip(check):
    # int-poll-skip-test: [{:key :x, :values [:a :d], :skipped [:b], :delta 2,
    # :op poll-1-4a'} {... :op poll-1-4b'}]
    h = k.int_poll_skip()
    examples = found(check(h.events, "queue"), "int-poll-skip", 2)
    assert sorted(order_step(e) for e in examples) == [
        (X, (1, 4), (a, d), (h.at["poll-1-4a'"],), 2),
        (X, (1, 4), (a, d), (h.at["poll-1-4b'"],), 2)]


def test_int_send_skip(check):
    # int-send-skip-test: [{:key :x, :values [:a :c], :skipped [:b], :delta 2,
    # :op send-13'}] (c's offset is known only from the poll)
    h = k.int_send_skip()
    [e] = found(check(h.events, "queue"), "int-send-skip", 1)
    assert order_step(e) == (X, (1, 3), (a, c), (h.at["send-13'"],), 2)


def test_int_nonmonotonic_poll(check):
    # int-nonmonotonic-poll-test: [{:key :x, :values [:c :a], :delta -2, :op poll-31a'}
    #                              {:key :x, :values [:c :c], :delta 0, :op poll-33b'}]
    h = k.int_nonmonotonic_poll()
    examples = found(check(h.events, "queue"), "int-nonmonotonic-poll", 2)
    assert sorted(order_step(e) for e in examples) == sorted([
        (X, (3, 1), (c, a), (h.at["poll-31a'"],), -2),
        (X, (3, 3), (c, c), (h.at["poll-33b'"],), 0)])


def test_int_nonmonotonic_send(check):
    # int-nonmonotonic-send-test: [{:key :x, :values [:c :a], :delta -1, :op send-31a'}
    #                              {:key :y, :values [:d :b], :delta -2, :op send-42b'}]
    # (the second is an info send whose offsets only the poll tells)
    h = k.int_nonmonotonic_send()
    examples = found(check(h.events, "queue"), "int-nonmonotonic-send", 2)
    assert sorted(order_step(e) for e in examples) == [
        (X, (3, 1), (c, a), (h.at["send-31a'"],), -1),
        (Y, (4, 2), (k.D_Y2, k.B_Y2), (h.at["send-42b'"],), -2)]


# --- duplicate-test -------------------------------------------------------------

def test_duplicate_basic(check):
    # duplicate-test, "basic": [{:key :x, :value :a, :count 2, :offsets [1 3]}]
    h = k.duplicate_basic()
    [e] = found(check(h.events, "queue"), "duplicate", 1)
    assert where(e) == (X, (1, 3), (a,))


def test_duplicate_hash_insensitive(check):
    # duplicate-test, "hash-insensitive": every value a duplicate (at 0 and 1),
    # and [{:key :x, :offset 0, :index 0, :values (0..9)}
    #      {:key :x, :offset 1, :index 1, :values (0..9)}]
    h = k.duplicate_hash_insensitive()
    results = check(h.events, "queue")
    dups = found(results, "duplicate", k.HASH_N)
    assert sorted(where(e) for e in dups) == [(X, (0, 1), (v,)) for v in range(k.HASH_N)]
    conflicts = found(results, "inconsistent-offsets", 2)
    assert sorted(where(e) for e in conflicts) == [
        (X, (0,), tuple(range(k.HASH_N))), (X, (1,), tuple(range(k.HASH_N)))]


def test_duplicate_in_aborted_txn(check):
    # duplicate-test, "aborted txns": [{:key :x, :value 0, :count 2, :offsets [1 11]}]
    # (an aborted poll's results still count; the failed send of 1 does not)
    h = k.duplicate_aborted_txns()
    [e] = found(check(h.events, "queue"), "duplicate", 1)
    assert where(e) == (X, (1, 11), (0,))


# --- empty-history-test ---------------------------------------------------------

def test_empty_history_is_not_valid(check):
    # empty-history-test: (is (not (:valid? check))). Jepsen's false comes from
    # Elle's :empty-transaction-graph, which Elle itself rates :unknown; ours is
    # that verdict, "unknown" (exit 2), which fails a run as Jepsen's false does.
    h = k.empty_history()
    results = check(h.events, "queue")
    assert results["valid"] == "unknown" and results["anomalies"] == {}


# --- unseen-test ----------------------------------------------------------------

def test_unseen_series(check):
    # unseen-test: [{:time 1, :unseen {}} {:time 3, :unseen {:x 2}}
    #               {:time 5, :unseen {:x 1}} {:time 7, :unseen {:x 0}, :messages {:x #{}}}]
    # Our counterpart is results.series.unseen, counts per time bucket; and
    # nothing is unseen at the end.
    h = k.unseen()
    results = check(h.events, "queue")
    absent(results, "unseen")
    series = results["series"]["unseen"]
    width = series["times"][0]                   # buckets are [i*width, (i+1)*width)
    counts = series["keys"].get(str(X), [0] * len(series["times"]))
    at_time = lambda name: counts[(h.at[name] + 1) * 1000 // width]  # noqa: E731  (the fixture's clock)
    assert [at_time(n) for n in ("poll-0'", "send'", "poll-a'", "poll-b'")] == [0, 2, 1, 0]


# --- g0-test, g1c-pure-wr-test, g1c-ww-wr-test ----------------------------------

def test_g0(check):
    # g0-test: [{:type :G0, :cycle [wb' wa' wb'],
    #            :steps [{:type :ww, :key :y, :value :b, :value' :a}
    #                    {:type :ww, :key :x, :value :a, :value' :b}]}]
    h = k.g0()
    [e] = found(check(h.events, "queue"), "G0", 1)
    assert set(ops(e)) == {h.at["wa'"], h.at["wb'"]}
    assert cycle_rows(e) == {(h.at["wb'"], "ww", Y, k.G0_A_Y), (h.at["wa'"], "ww", X, b)}


def test_g1c_pure_wr(check):
    # g1c-pure-wr-test: [{:type :G1c, :cycle [t2' t1' t2'],
    #                     :steps [{:type :wr, :key :y, :value :b} {:type :wr, :key :x, :value :a}]}]
    h = k.g1c_pure_wr()
    [e] = found(check(h.events, "queue"), "G1c", 1)
    assert set(ops(e)) == {h.at["t1'"], h.at["t2'"]}
    assert cycle_rows(e) == {(h.at["t2'"], "wr", Y, b), (h.at["t1'"], "wr", X, a)}


def test_g1c_ww_wr(check):
    # g1c-ww-wr-test: [{:type :G1c, :cycle [t1' t2' t1'],
    #                   :steps [{:type :wr, :key :x, :value :a}
    #                           {:type :ww, :key :y, :value :b, :value' :c}]}]
    h = k.g1c_ww_wr()
    [e] = found(check(h.events, "queue"), "G1c", 1)
    assert set(ops(e)) == {h.at["t1'"], h.at["t2'"]}
    assert cycle_rows(e) == {(h.at["t1'"], "wr", X, a), (h.at["t2'"], "ww", Y, c)}


# --- precommitted-read-test -----------------------------------------------------

def test_precommitted_read(check):
    # precommitted-read-test: [{:op t1', :key :x, :value :a}]
    h = k.precommitted_read()
    [e] = found(check(h.events, "queue"), "precommitted-read", 1)
    assert where(e) == (X, (0,), (a,))
    assert set(ops(e)) == {h.at["t1'"]}
