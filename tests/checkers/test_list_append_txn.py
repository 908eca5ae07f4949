"""Pure parts of the list-append checker: one txn on its own
(checkers/list_append/txn.txn_findings), one key's reads (checkers/list_append/keys), the
consistency-model lattice, the verdict (checkers/verdict) and the plain words
of each non-cycle finding (checkers/list_append/explain)."""

import pytest

from checkers.verdict import consistency
from checkers.list_append.keys import (KeyMop, duplicate_elements, incompatible_order, observed_states,
                              version_order)
from checkers.list_append.txn import txn_findings
from checkers.verdict.verdict import Evidence, verdict

K, J = 1, 2     # keys "k" and "j"
OP = 7          # the txn's id (history index of its completion)


def A(k, v):
    return ("append", k, v)


def R(k, xs):
    return ("r", k, xs)


def types(mops):
    return [(x.type, x.example["pos"], x.example["key"]) for x in txn_findings(OP, mops)]


@pytest.mark.parametrize("mops, expected", [
    ([A(K, 1), R(K, [])], [("internal", 1, K)]),
    ([R(K, [5]), A(K, 1), R(K, [5])], [("internal", 2, K)]),
    ([R(K, [5]), A(K, 1), R(K, [1, 5])], [("internal", 2, K)]),
    ([R(K, [1]), A(K, 1)], [("future-read", 0, K)]),
    # at most one of each per txn (as Elle), the first
    ([A(K, 1), R(K, []), A(J, 2), R(J, [3])], [("internal", 1, K)]),
    ([R(K, [1]), R(J, [2]), A(J, 2), A(K, 1)], [("future-read", 1, J)]),
])
def test_txn_anomalies(mops, expected):
    assert types(mops) == expected


@pytest.mark.parametrize("mops", [
    [A(K, 1), R(K, [7, 1])],                               # ends with own append
    [R(K, [7]), A(K, 1), A(K, 2), R(K, [7, 1, 2])],
    [R(K, []), R(J, [3]), A(J, 4), R(J, [3, 4])],
    [R(K, None), A(K, 1)],                                 # null read: the empty list
    [R(K, [1, 2, 1])],                                     # duplicates are per key (below)
])
def test_clean_txns(mops):
    assert types(mops) == []


def test_findings_carry_the_op_and_sort_by_position():
    (x,) = txn_findings(OP, [R(K, [5]), A(K, 1), R(K, [5])])
    assert x.example["op"] == OP and x.sort == (OP, 2)


def test_internal_example_says_what_was_expected():
    (x,) = txn_findings(OP, [R(K, [5]), A(K, 1), R(K, [5])])
    assert (x.example["expected"], x.example["read"]) == ([5, 1], [5])
    (y,) = txn_findings(OP, [A(K, 1), R(K, [])])
    assert y.example["expected"] == ["...", 1]             # unknown prefix, then own append


def read(op, xs, otype="ok", pos=0, key=K):
    return KeyMop(key, op, otype, pos, "r", xs)


def append(op, v, otype="ok", pos=0, key=K, last=True):
    return KeyMop(key, op, otype, pos, "append", v, last)


def test_duplicate_elements_per_read():
    (x,) = duplicate_elements([read(3, [1, 2, 1]), read(4, [1, 2])])
    assert x.type == "duplicate-elements" and x.example["op"] == 3
    assert x.example["duplicates"] == [[1, 2]]
    assert list(duplicate_elements([read(5, [1, 2], otype="info")])) == []


def test_version_order_from_the_longest_read():
    mops = [read(1, [1]), append(2, 2), read(3, [1, 2]), append(4, 3), read(5, [])]
    states = observed_states(mops)
    assert states == [[1], [1, 2]]                         # empty reads are no state
    assert version_order(states) == [1, 2]
    assert incompatible_order(K, states) is None


def test_single_append_orders_itself_and_reads_disagreeing_are_found():
    assert observed_states([append(1, 9)]) == [[9]]
    assert observed_states([append(1, 9, otype="fail")]) == []
    clash = incompatible_order(K, observed_states([read(1, [1, 2]), read(2, [2]), append(3, 1),
                                                   append(4, 2)]))
    assert clash.type == "incompatible-order" and clash.example["values"] == [[2], [1, 2]]


def test_reads_of_one_length_that_disagree_are_ordered_by_their_first_reader():
    """Whatever order the mops come in (Spark's rows come in none), the
    longest state read first sorts first and the other is the version order."""
    import itertools
    mops = [read(9, [1, 3, 2]), read(4, [1, 2, 3]), read(6, [1, 2]), read(12, [1, 2, 3])]
    for shuffled in itertools.permutations(mops):
        states = observed_states(list(shuffled))
        assert states == [[1, 2], [1, 2, 3], [1, 3, 2]]
        assert version_order(states) == [1, 3, 2]
        assert incompatible_order(K, states).example["values"] == [[1, 2, 3], [1, 3, 2]]


def test_models_imply_weaker_ones():
    assert consistency.proscribed("read-uncommitted") < consistency.proscribed("read-committed")
    assert "G2-item" not in consistency.proscribed("snapshot-isolation")
    assert "G-nonadjacent" in consistency.proscribed("snapshot-isolation")
    assert "G2-item" in consistency.proscribed("serializable")
    assert "G-single-realtime" in consistency.proscribed("strict-serializable")
    assert "G-single-realtime" not in consistency.proscribed("serializable")
    assert "G1c-process" in consistency.proscribed("strict-serializable")
    assert "G1c-process" not in consistency.proscribed("serializable")
    assert "lost-update" in consistency.proscribed("cursor-stability")
    assert "lost-update" not in consistency.proscribed("read-committed")
    with pytest.raises(ValueError, match="unknown consistency model 'serial'"):
        consistency.proscribed("serial")


@pytest.mark.parametrize("found, weakest, also", [
    ([], [], []),
    (["G2-item"], ["repeatable-read"], ["serializable", "strict-serializable",
                                         "strong-session-serializable"]),
    (["G-single"], ["consistent-view", "repeatable-read"],
     ["forward-consistent-view", "serializable", "snapshot-isolation", "strict-serializable",
      "strong-session-serializable", "strong-session-snapshot-isolation", "strong-snapshot-isolation",
      "update-serializable"]),
    (["G-nonadjacent"], ["repeatable-read", "snapshot-isolation"],
     ["serializable", "strict-serializable", "strong-session-serializable", "strong-session-snapshot-isolation",
      "strong-snapshot-isolation"]),
    (["G1c-realtime"], ["strong-read-committed"], ["strict-serializable", "strong-snapshot-isolation"]),
    (["G0", "G2-item"], ["read-uncommitted"],
     sorted(m for m in consistency.MODELS if "read-uncommitted" in consistency.weaker(m) - {m})),
])
def test_violated_models(found, weakest, also):
    assert consistency.violated(found) == (weakest, also)


@pytest.mark.parametrize("found, model, allow, forbid, expected", [
    (["G2-item"], "snapshot-isolation", (), (), (True, [])),
    (["G-nonadjacent"], "snapshot-isolation", (), (), (False, ["G-nonadjacent"])),
    (["G2-item"], "serializable", (), (), (False, ["G2-item"])),
    (["G2-item"], "serializable", ("G2-item",), (), (True, [])),
    (["G-single-realtime"], "serializable", (), ("G-single-realtime",),
     (False, ["G-single-realtime"])),
    (["G1c-realtime", "G0"], "strict-serializable", (), (), (False, ["G0", "G1c-realtime"])),
])
def test_verdict(found, model, allow, forbid, expected):
    assert verdict(found, Evidence(), model, allow, forbid) == expected


def test_verdict_unknown_when_nothing_committed():
    assert verdict([], Evidence(any_ok=False), "serializable") == ("unknown", [])


def test_every_non_cycle_type_has_plain_words():
    from checkers.list_append.explain import TEMPLATES, explain
    ops = {3: {"index": 3, "process": 13, "time": 9, "f": "txn", "type": "ok"},
           2: {"index": 2, "process": 12, "time": 8, "f": "txn", "type": "fail"}}
    assert explain("G1a", {"op": 3, "key": K, "read": [1], "element": 1, "writer": 2},
                   ops.get)["explanation"] == (
        "op 3 (process 13, ok) read key 1 as [1], containing 1, appended by "
        "op 2 (process 12, fail) which failed")
    internal = explain("internal", {"op": 3, "key": K, "read": [], "pos": 1,
                                    "expected": ["...", 1]}, ops.get)
    assert internal["explanation"].endswith("say [..., 1]")
    assert internal["op"] == ops[3] and internal["read"] == []   # ids become ops, data stays
    assert explain("lost-update", {"ops": [3, 2], "key": K, "value": []},
                   ops.get)["explanation"].startswith(
        "op 3 (process 13, ok), op 2 (process 12, fail) all read key 1 as []")
    assert set(TEMPLATES) == {"internal", "future-read", "duplicate-elements", "incompatible-order",
                              "G1a", "G1b", "dirty-update", "lost-update"}


@pytest.mark.parametrize("model, forbids, allows", [
    # Adya: PL-2+ forbids G-single, not G2-item; PL-2.99 the other way round
    ("consistent-view", {"G-single", "G1c", "lost-update"}, {"G2-item", "internal"}),
    ("repeatable-read", {"G2-item", "lost-update"}, {"G-single-process", "internal"}),
    # Cerone: read atomic forbids what a transaction sees of itself (and implies
    # read committed); update atomic, lost updates
    ("read-atomic", {"internal", "future-read", "G1a", "G1c"}, {"lost-update", "G2-item"}),
    ("update-atomic", {"lost-update", "internal"}, {"G2-item"}),
    # session and real-time variants: a cycle through process order, or real time
    ("strong-session-snapshot-isolation", {"G-single-process", "G-nonadjacent-process", "G1c-process"},
     {"G2-item", "G2-item-process", "G-single-realtime"}),
    ("strong-snapshot-isolation", {"G-single-realtime", "G1c-realtime", "G0-process"}, {"G2-item"}),
    ("strong-read-uncommitted", {"G0-realtime", "G0-process", "G0"}, {"G1c", "G1c-realtime"}),
    # single-object models say nothing about transactions
    ("linearizable", set(), {"G0", "G1c", "G2-item"}),
])
def test_elles_lattice(model, forbids, allows):
    proscribed = consistency.proscribed(model)
    assert forbids <= proscribed and not allows & proscribed


def test_models_have_their_other_names():
    assert consistency.check_model("PL-3") == "serializable"
    assert consistency.check_model("PL-2+") == "consistent-view"
    assert consistency.check_model("strong-serializable") == "strict-serializable"


def test_every_implied_model_is_declared_and_the_lattice_has_no_cycle():
    for model, implied in consistency.MODELS.items():
        assert set(implied) <= set(consistency.MODELS), model
        assert all(model not in consistency.weaker(weaker) for weaker in implied), model
