"""franz-go behind the client seam (workloads/go_clients/): its error table, its
build into the cache, and short runs on the shared cluster whose histories the
checkers find valid, with and without transactions."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from checkers.history.stream import raw_events
from checkers.history.wellformed import wellformedness_problems
from harness.runner import run_test
from harness.test_options import TestOptions
from workloads.client_kinds import client_kind
from workloads.errors import ERROR_TABLE
from workloads.go_clients import build
from workloads.go_clients.franz_go_errors import FRANZ_GO_ERROR_TABLE, classify_franz_go
from tests.workloads.client_runs import check_opened_before_the_clock

PINNED = "v1.22.3"


def test_the_franz_go_error_table_says_what_may_have_happened():
    assert classify_franz_go("ErrRecordTimeout", "expired", "table").outcome == "info"
    assert classify_franz_go("context.DeadlineExceeded", "", "table").outcome == "info"
    assert classify_franz_go("NOT_LEADER_FOR_PARTITION", "", "table").outcome == "info"
    assert classify_franz_go("PRODUCER_FENCED", "", "table").outcome == "info"
    assert classify_franz_go("INVALID_TOPIC_EXCEPTION", "", "table").outcome == "fail"
    assert classify_franz_go("ErrMaxBuffered", "", "table").outcome == "fail"
    assert classify_franz_go("kgo.Error", "", "table").outcome == "info"          # unsure: may have happened
    assert classify_franz_go("OP_TIMEOUT", "no ack", "table").outcome == "info"  # the harness's own
    # the program decides when it knows: an abort that succeeded, a commit left open
    assert classify_franz_go("NOT_COORDINATOR", "", "definite").outcome == "fail"
    assert classify_franz_go("COMMIT_ABORTED", "x (during commit)", "indefinite").error == \
        ["COMMIT_ABORTED", "x (during commit)"]


def _kerr_names() -> set[str]:
    """Kafka's error names as the pinned franz-go's kerr package spells them."""
    modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    source = Path(modcache) / f"github.com/twmb/franz-go@{PINNED}" / "pkg" / "kerr" / "kerr.go"
    return set(re.findall(r'&Error\{"([A-Z_]+)"', source.read_text()))


def test_the_franz_go_error_table_names_kerr_errors_with_a_reason():
    build.build()  # fetches the pinned modules
    own = {name for name in FRANZ_GO_ERROR_TABLE if not name.isupper() or name == "COMMIT_ABORTED"}
    assert set(FRANZ_GO_ERROR_TABLE) - own - _kerr_names() == set()
    assert all(outcome in ("fail", "info") and why for outcome, why in FRANZ_GO_ERROR_TABLE.values())
    # the same verdicts as librdkafka's table where both name the same broker error
    same = {"NOT_LEADER_FOR_PARTITION": "NOT_LEADER_FOR_PARTITION", "MESSAGE_TOO_LARGE": "MSG_SIZE_TOO_LARGE",
            "UNKNOWN_TOPIC_OR_PARTITION": "UNKNOWN_TOPIC_OR_PART", "CONCURRENT_TRANSACTIONS": "CONCURRENT_TRANSACTIONS",
            "OUT_OF_ORDER_SEQUENCE_NUMBER": "OUT_OF_ORDER_SEQUENCE_NUMBER"}
    assert all(FRANZ_GO_ERROR_TABLE[f][0] == ERROR_TABLE[r][0] for f, r in same.items())


def test_the_go_program_is_built_once_into_the_cache(monkeypatch):
    binary = build.build()
    assert binary.parent == build.build_dir() and os.access(binary, os.X_OK)
    assert build.source_digest() in str(binary)
    monkeypatch.setattr(build, "_go_build", lambda *a: pytest.fail("built again"))
    assert build.build() == binary


def test_a_failed_build_names_its_log(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGTRIAL_CACHE", str(tmp_path))
    monkeypatch.setenv("GOFLAGS", "-mod=readonly")
    monkeypatch.setattr(build, "SOURCES", tmp_path / "src")
    (tmp_path / "src").mkdir()
    for name in ("go.mod", "go.sum"):
        (tmp_path / "src" / name).write_text("module broken\n" if name == "go.mod" else "")
    (tmp_path / "src" / "main.go").write_text("package main\nfunc main() { nope }\n")
    with pytest.raises(build.GoBuildError, match=r"see .*\.build\.log"):
        build.build()
    assert not build.build_dir().exists()


def test_franz_go_serves_only_the_queue():
    assert client_kind("franz-go").workloads == ("queue",)
    with pytest.raises(ValueError, match="--client franz-go has no client for --workload list-append"):
        TestOptions.from_flat(bootstrap_servers="x:1", workload="list-append", client="franz-go").validate()


def test_franz_go_refuses_an_in_flight_count_its_idempotent_producer_cannot_keep():
    with pytest.raises(ValueError, match="--client franz-go: --max-in-flight 2: franz-go's idempotent producer keeps 5"):
        TestOptions.from_flat(bootstrap_servers="x:1", client="franz-go", max_in_flight=2).validate()
    for allowed in ({"max_in_flight": 5}, {"max_in_flight": 2, "idempotence": False}, {}):
        TestOptions.from_flat(bootstrap_servers="x:1", client="franz-go", **allowed).validate()


def franz_go_run(cluster, tmp_path, **overrides):
    options = TestOptions.from_flat(nodes_file=str(cluster.inventory.path), store=str(tmp_path / "store"),
                                    client="franz-go", leave_db_running=True, recovery_time=1, final_time_limit=30,
                                    rate=60, concurrency=4, report=False, engine="local", **overrides)
    result = run_test(options)
    events = list(raw_events(result.run_dir / "history.jsonl"))
    return result, events, json.loads((result.run_dir / "test.json").read_text())


def oks(events, f):
    return [e for e in events if e["type"] == "ok" and e["f"] == f]


def test_a_franz_go_run_is_valid(cluster, tmp_path):
    # the producer-state preset's knobs: franz-go refused to open with them, and a
    # campaign's ten runs ended incomplete
    result, events, test_json = franz_go_run(cluster, tmp_path, time_limit=8, idempotence=True, max_in_flight=5)
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    assert len(oks(events, "send")) >= 10 and any(e["value"][0][1] for e in oks(events, "poll"))
    assert test_json["options"]["client"] == "franz-go"
    check_opened_before_the_clock(test_json, events, "franz-go")
    assert test_json["versions"]["franz_go"] == PINNED and test_json["versions"]["go"].startswith("go")
    assert test_json["final"]["complete"] is True
    # every ok assign says where it started each key (the checker checked them: valid)
    assert all(set(e["starts"]) == {str(k) for k in e["value"]} for e in oks(events, "assign"))


def test_franz_go_transactions_are_valid(cluster, tmp_path):
    result, events, _ = franz_go_run(cluster, tmp_path, time_limit=30, txn=True, abort_p=0.3)
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    txns = [e for e in events if e["f"] == "txn" and e["type"] != "invoke"]
    assert any(e["type"] == "ok" and any(m[0] == "poll" and m[1] for m in e["value"]) for e in txns)
    assert any(e["type"] == "fail" and e["error"][0] == "ABORTED_ON_PURPOSE" for e in txns)


@pytest.mark.slow
def test_the_franz_go_abort_waits_for_the_held_batch(healed_cluster, local_cluster):
    """`logtrial probe late-batch --client franz-go` loses nothing: GroupTransactSession.End
    aborts through AbortBufferedRecords, which flushes, so EndTxn goes out only once A's
    held Produce is answered (txn.go); A lands in its own transaction before the ABORT
    marker, and B follows: under one epoch at transaction.version 1, each in an epoch of
    its own at 2, where EndTxn v5 bumps it (docs/findings.md: 5 of 5 rounds so)."""
    from tests.nemesis.test_nemesis_client_delay import the_abort_waited_and_b_followed
    the_abort_waited_and_b_followed(healed_cluster, local_cluster, "franz-go", bumps_at_version_2=True)
