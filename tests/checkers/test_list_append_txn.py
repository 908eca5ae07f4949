"""Pure parts of the list-append checker: one txn on its own, and the
consistency-model lattice."""

import pytest

from checkers import consistency
from checkers.list_append_txn import analyze_txn


def A(k, v):
    return ("append", k, v, None)


def R(k, xs):
    return ("r", k, None, xs)


def types(mops):
    return [(x["type"], x["pos"], x["key"]) for x in analyze_txn(mops)["anomalies"]]


@pytest.mark.parametrize("mops, expected", [
    ([A("k", "1"), R("k", [])], [("internal", 1, "k")]),
    ([R("k", ["5"]), A("k", "1"), R("k", ["5"])], [("internal", 2, "k")]),
    ([R("k", ["5"]), A("k", "1"), R("k", ["1", "5"])], [("internal", 2, "k")]),
    ([R("k", ["1"]), A("k", "1")], [("future-read", 0, "k")]),
    ([R("k", ["1", "2", "1"])], [("duplicate-elements", 0, "k")]),
])
def test_txn_anomalies(mops, expected):
    assert types(mops) == expected


@pytest.mark.parametrize("mops", [
    [A("k", "1"), R("k", ["7", "1"])],                     # ends with own append
    [R("k", ["7"]), A("k", "1"), A("k", "2"), R("k", ["7", "1", "2"])],
    [R("k", []), R("j", ["3"]), A("j", "4"), R("j", ["3", "4"])],
    [R("k", None), A("k", "1")],                            # unknown read (info)
])
def test_clean_txns(mops):
    assert types(mops) == []


def test_versions_read_before_first_append():
    result = analyze_txn([R("k", ["1"]), A("k", "2"), R("k", ["1", "2"]), A("k", "3"),
                          A("j", "4"), R("j", ["4"])])
    assert result["versions"] == [{"key": "k", "version": '["1"]'}]


def test_internal_example_says_what_was_expected():
    (x,) = analyze_txn([R("k", ["5"]), A("k", "1"), R("k", ["5"])])["anomalies"]
    assert (x["expected"], x["read"]) == ('["5", "1"]', '["5"]')


def test_models_imply_weaker_ones():
    assert consistency.proscribed("read-uncommitted") < consistency.proscribed("read-committed")
    assert "G2-item" not in consistency.proscribed("snapshot-isolation")
    assert "G2-item" in consistency.proscribed("serializable")
    assert "G-single-realtime" in consistency.proscribed("strict-serializable")
    assert "G-single-realtime" not in consistency.proscribed("serializable")
    assert "G1c-process" in consistency.proscribed("strict-serializable")
    with pytest.raises(ValueError, match="unknown consistency model 'linearizable'"):
        consistency.proscribed("linearizable")


@pytest.mark.parametrize("found, weakest, also", [
    ([], [], []),
    (["G2-item"], ["repeatable-read"], ["serializable", "strict-serializable",
                                         "strong-session-serializable"]),
    (["G-single"], ["repeatable-read", "snapshot-isolation"],
     ["serializable", "strict-serializable", "strong-session-serializable"]),
    (["G1c-realtime"], ["strict-serializable"], []),
    (["G0", "G2-item"], ["read-uncommitted"],
     sorted(set(consistency.MODELS) - {"read-uncommitted"})),
])
def test_violated_models(found, weakest, also):
    assert consistency.violated(found) == (weakest, also)


@pytest.mark.parametrize("found, model, allow, forbid, expected", [
    (["G2-item"], "snapshot-isolation", (), (), (True, [])),
    (["G2-item"], "serializable", (), (), (False, ["G2-item"])),
    (["G2-item"], "serializable", ("G2-item",), (), (True, [])),
    (["G-single-realtime"], "serializable", (), ("G-single-realtime",),
     (False, ["G-single-realtime"])),
    (["G1c-realtime", "G0"], "strict-serializable", (), (), (False, ["G0", "G1c-realtime"])),
])
def test_verdict(found, model, allow, forbid, expected):
    from checkers.list_append import verdict
    assert verdict(found, model, allow, forbid) == expected


def test_verdict_unknown_when_nothing_committed():
    from checkers.list_append import verdict
    assert verdict([], "serializable", any_ok=False) == ("unknown", [])


def test_every_non_cycle_type_has_plain_words():
    from checkers.list_append_explain import EXPLAIN
    op = {"index": 3, "process": 13, "time": 9, "f": "txn", "type": "ok"}
    failed = {"index": 2, "process": 12, "time": 8, "f": "txn", "type": "fail"}
    assert EXPLAIN["G1a"]({"op": op, "key": "k", "read": ["1"], "element": "1",
                           "writer": failed}) == (
        "op 3 (process 13, ok) read key k as [1], containing 1, appended by "
        "op 2 (process 12, fail) which failed")
    assert EXPLAIN["internal"]({"op": op, "key": "k", "read": "[]", "pos": 1,
                                "expected": '["...", "1"]'}).endswith("say [..., 1]")
    assert EXPLAIN["lost-update"]({"ops": [op, failed], "key": "k", "version": []}).startswith(
        "op 3 (process 13, ok), op 2 (process 12, fail) all read key k as []")
    assert set(EXPLAIN) == {"internal", "future-read", "duplicate-elements", "incompatible-order",
                            "G1a", "G1b", "dirty-update", "lost-update"}
