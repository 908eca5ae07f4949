"""The one verdict for every workload (checkers/verdict/verdict.verdict, from the
declarations in checkers/verdict/taxonomy.py): pure functions, no Spark."""
from __future__ import annotations

import pytest

from checkers.verdict.taxonomy import TYPES, of_workload
from checkers.verdict.verdict import Evidence, verdict


def queue(found, evidence=None, **kw):
    return verdict(found, evidence or Evidence(), **kw)


def la(found, model="strict-serializable", evidence=None, **kw):
    return verdict(found, evidence or Evidence(), model, **kw)


# ---------------------------------------------------------------- queue

def test_kafka_normal_anomalies_are_allowed():
    assert queue(["int-send-skip", "G0", "G0-realtime"]) == (True, [])
    assert queue(["spurious-out-of-order-sequence"]) == (True, [])


def test_poll_skips_are_allowed_only_with_subscribe():
    assert queue(["poll-skip"]) == (False, ["poll-skip"])
    assert queue(["poll-skip", "nonmonotonic-poll"], Evidence(used_subscribe=True)) == (True, [])
    assert queue(["poll-skip", "lost-write"], Evidence(used_subscribe=True)) == (False, ["lost-write"])


def test_g1c_is_bad_only_when_some_cycle_is_wr_only():
    assert queue(["G1c"]) == (True, [])
    assert queue(["G1c"], Evidence(wr_only_g1c={"G1c": 1})) == (False, ["G1c"])
    assert queue(["G1c-realtime"], Evidence(wr_only_g1c={"G1c": 1})) == (True, [])


def test_unknown_without_ok_ops_or_final_reads():
    assert queue([], Evidence(any_ok=False))[0] == "unknown"
    assert queue(["unseen"], Evidence(final_reads=False)) == ("unknown", ["unseen"])
    assert queue(["unseen", "duplicate"], Evidence(final_reads=False))[0] is False
    assert queue(["unseen"]) == (False, ["unseen"])


def test_allow_and_forbid():
    assert queue(["duplicate", "G0"], allow=["duplicate"], forbid=["G0"]) == (False, ["G0"])
    # what apply_overrides did on results: allowing the only bad type makes the run valid
    assert queue(["G1b", "G0"], forbid=["G1b"]) == (False, ["G1b"])
    assert queue(["G1b", "G0"], forbid=["G1b"], allow=["G1b"]) == (True, [])


# ---------------------------------------------------------------- list-append

@pytest.mark.parametrize("found, model, expected", [
    (["G2-item"], "snapshot-isolation", (True, [])),
    (["G2-item", "G-nonadjacent"], "snapshot-isolation", (False, ["G-nonadjacent"])),
    (["G2-item"], "serializable", (False, ["G2-item"])),
    (["lost-update"], "read-committed", (True, [])),
    (["lost-update"], "cursor-stability", (False, ["lost-update"])),
    (["G-single-realtime", "G1c-process"], "serializable", (True, [])),
    (["G-single-realtime", "G1c-process"], "strong-session-serializable", (False, ["G1c-process"])),
    (["G-single-realtime", "G1c-process"], "strict-serializable",
     (False, ["G-single-realtime", "G1c-process"])),
    (["G0"], "read-uncommitted", (False, ["G0"])),   # unlike the queue, a G0 is bad here
])
def test_list_append_bad_is_what_the_model_forbids(found, model, expected):
    assert la(found, model) == expected


def test_list_append_ignores_queue_evidence():
    assert la(["G1c"], evidence=Evidence(wr_only_g1c={})) == (False, ["G1c"])
    assert la(["G2-item"], "serializable", Evidence(final_reads=False)) == (False, ["G2-item"])


def test_list_append_allow_forbid_and_unknown():
    assert la(["G2-item"], "serializable", allow=["G2-item"]) == (True, [])
    assert la(["G2-item"], "snapshot-isolation", forbid=["G2-item"]) == (False, ["G2-item"])
    assert la([], "serializable", Evidence(any_ok=False)) == ("unknown", [])
    assert la(["G2-item"], "snapshot-isolation", Evidence(any_ok=False)) == ("unknown", [])


def test_list_append_unknown_without_any_dependency():
    """Elle's empty-transaction-graph: nothing bad, but no edge to see a cycle by."""
    assert la([], evidence=Evidence(empty_graph=True)) == ("unknown", [])
    assert la(["G1a"], evidence=Evidence(empty_graph=True)) == (False, ["G1a"])
    assert la(["G2-item"], "snapshot-isolation", Evidence(empty_graph=True)) == ("unknown", [])


@pytest.mark.parametrize("name", ["future-read", "incompatible-order", "dirty-update", "G1a"])
def test_types_implying_g1_are_read_committeds(name):
    """Elle: future-read implies G1c, incompatible-order and dirty-update G1a."""
    assert la([name], "read-uncommitted") == (True, [])
    assert la([name], "read-committed") == (False, [name])


def test_the_default_model_is_strict_serializable():
    assert verdict(["G1c-realtime"], model="strict-serializable") == (False, ["G1c-realtime"])


def test_unknown_types_are_bad_for_every_workload():
    assert queue(["no-such-anomaly"]) == (False, ["no-such-anomaly"])
    assert la(["no-such-anomaly"], "read-uncommitted") == (False, ["no-such-anomaly"])


def test_every_list_append_type_is_forbidden_by_strict_serializable():
    names = {t.name for t in of_workload("list-append")}
    assert la(sorted(names)) == (False, sorted(names))
    assert {"G-nonadjacent", "G-nonadjacent-realtime", "lost-update"} <= names
    assert "lost-write" not in names and TYPES["lost-write"].workloads == ("queue",)
