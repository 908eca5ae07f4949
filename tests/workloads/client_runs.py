"""A short queue run of one client under test on the shared cluster, as each
client's tests make it (tests/workloads/test_*_client.py)."""
from __future__ import annotations

import json
from collections import Counter

from checkers.history.stream import raw_events
from checkers.history.wellformed import wellformedness_problems
from harness.runner import run_test
from harness.test_options import TestOptions
from tests.fixtures.cluster import coordinators_ready


def client_run(cluster, tmp_path, client: str, **overrides):
    """(result, history events, test.json) of a run of `client` with `overrides`,
    once the cluster's coordinators answer."""
    coordinators_ready(cluster.db.bootstrap_servers())
    overrides = {"rate": 60, "concurrency": 4, **overrides}
    options = TestOptions.from_flat(nodes_file=str(cluster.inventory.path), store=str(tmp_path / "store"),
                                    client=client, leave_db_running=True, recovery_time=1,
                                    final_time_limit=30, report=False, engine="local", **overrides)
    result = run_test(options)
    events = list(raw_events(result.run_dir / "history.jsonl"))
    return result, events, json.loads((result.run_dir / "test.json").read_text())


def outcomes(events) -> dict[tuple, int]:
    """How many completions of each (type, f, error name): what a failed check prints."""
    return dict(Counter((e["type"], e["f"], (e.get("error") or [None])[0]) for e in events
                        if e["type"] != "invoke" and e.get("process") != "nemesis"))


def completions(events, f, type_="ok"):
    return [e for e in events if e["type"] == type_ and e["f"] == f]


def check_queue_run(result, events) -> None:
    """What every client's short queue run shows: valid and well formed, sends
    acknowledged and polls that read, complete final reads, and every ok assign
    saying where it started each key (the checker checked them: valid)."""
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    sends, polls = completions(events, "send"), completions(events, "poll")
    assert len(sends) >= 10 and any(e["value"][0][1] for e in polls), \
        f"{len(sends)} ok sends, {sum(1 for e in polls if e['value'][0][1])} of {len(polls)} ok polls read; " \
        f"outcomes: {outcomes(events)}"
    assert all(set(e["starts"]) == {str(k) for k in e["value"]} for e in completions(events, "assign"))


def check_txn_run(result, events) -> None:
    """What every client's short transactional run shows: valid and well formed,
    transactions aborted on purpose, and a committed one that read what others'
    committed transactions sent."""
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    assert any(e["error"][0] == "ABORTED_ON_PURPOSE" for e in completions(events, "txn", "fail"))
    assert any(mop[0] == "poll" and mop[1] for e in completions(events, "txn") for mop in e["value"])


def check_opened_before_the_clock(test_json, events, client: str) -> float:
    """Every client opened (and warmed: harness/client_open.py) before the main phase:
    test.json's `open` phase and `client_open`, no client op before "main", and the
    first ok send within the time limit. Returns the seconds from "main" to that send."""
    phases = {p["phase"]: p["time_s"] for p in test_json["phases"]}
    assert phases["open"] < phases["main"] < phases["heal"], phases
    opened = test_json["client_open"]
    assert opened["client"] == client and opened["clients"] == test_json["options"]["concurrency"]
    assert opened["seconds"] <= phases["main"] - phases["open"] + 0.01, (opened, phases)
    client_times = [e["time"] for e in events if e["process"] != "nemesis"]
    assert min(client_times) >= phases["main"] * 1e9 - 1e6  # time_s is rounded to the millisecond
    first_send_s = min(e["time"] for e in completions(events, "send")) / 1e9
    assert first_send_s < phases["heal"], (first_send_s, phases, outcomes(events))
    return first_send_s - phases["main"]
