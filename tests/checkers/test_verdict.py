"""The verdict rules (pure functions, no Spark)."""
from __future__ import annotations

from checkers.validity import Evidence, apply_overrides, verdict


def test_kafka_normal_anomalies_are_allowed():
    assert verdict(["int-send-skip", "G0", "G0-realtime"], Evidence()) == (True, [])


def test_poll_skips_are_allowed_only_with_subscribe():
    assert verdict(["poll-skip"], Evidence()) == (False, ["poll-skip"])
    assert verdict(["poll-skip", "nonmonotonic-poll"], Evidence(used_subscribe=True)) == (True, [])


def test_g1c_is_bad_only_when_some_cycle_is_wr_only():
    assert verdict(["G1c"], Evidence()) == (True, [])
    assert verdict(["G1c"], Evidence(wr_only_g1c={"G1c": 1})) == (False, ["G1c"])


def test_unknown_without_ok_ops_or_final_reads():
    assert verdict([], Evidence(any_ok=False))[0] == "unknown"
    assert verdict(["unseen"], Evidence(final_reads=False)) == ("unknown", ["unseen"])
    assert verdict(["unseen", "duplicate"], Evidence(final_reads=False))[0] is False


def test_allow_and_forbid():
    assert verdict(["duplicate", "G0"], Evidence(), allow=["duplicate"], forbid=["G0"]) == (False, ["G0"])
    results = {"valid": False, "anomaly_types": ["G1b", "G0"], "bad_anomaly_types": ["G1b"]}
    assert apply_overrides(results, allow=["G1b"]) ["valid"] is True
