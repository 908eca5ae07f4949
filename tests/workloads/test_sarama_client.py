"""Sarama behind the client seam (workloads/go_clients/, the Go program's Sarama side):
its error table against the pinned Sarama's own errors, what it refuses before a run,
and short runs on the shared cluster whose histories the checkers find valid, with
and without transactions."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from checkers.history.wellformed import wellformedness_problems
from harness.test_options import TestOptions
from tests.workloads.client_runs import check_opened_before_the_clock, client_run, completions
from workloads.client_kinds import client_kind
from workloads.go_clients import build
from workloads.go_clients.sarama_errors import NOT_RAISED, SARAMA_ERROR_TABLE, classify_sarama

PINNED = "v1.61.1"
SOURCES = Path(build.__file__).parent / "src"


def _sarama_source() -> Path:
    build.build()  # fetches the pinned modules
    modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    return Path(modcache) / f"github.com/!i!b!m/sarama@{PINNED}"


def test_the_sarama_error_table_says_what_may_have_happened():
    # errors Sarama's producer retries reach a record only once retries ran out
    assert classify_sarama("NOT_ENOUGH_REPLICAS", "", "table").outcome == "info"
    assert classify_sarama("UNKNOWN_TOPIC_OR_PARTITION", "", "table").outcome == "info"
    assert classify_sarama("ErrOutOfBrokers", "", "table").outcome == "info"
    assert classify_sarama("sarama.ConfigurationError", "", "table").outcome == "fail"
    assert classify_sarama("ErrTransactionNotReady", "", "table").outcome == "fail"
    assert classify_sarama("INVALID_TOPIC_EXCEPTION", "", "table").outcome == "fail"
    assert classify_sarama("sarama.Error", "", "table").outcome == "info"
    assert classify_sarama("SomethingNew", "", "table").outcome == "info"      # not in the table
    assert classify_sarama("OP_TIMEOUT", "no ack", "table").outcome == "info"  # the harness's own
    # the program decides when it knows: an abort that succeeded, a commit left open
    assert classify_sarama("NOT_COORDINATOR", "", "definite").outcome == "fail"
    assert classify_sarama("ErrTxnOffsetCommit", "x (during commit)", "indefinite").outcome == "info"


def test_the_sarama_error_table_covers_every_sentinel_of_the_pinned_sarama():
    source = _sarama_source()
    sentinels = {name for path in source.glob("*.go") if not path.name.endswith("_test.go")
                 and not path.name.startswith("mock")
                 for name in re.findall(r"^var (Err\w+) = errors\.New", path.read_text(), re.M)}
    assert sentinels and sentinels - set(SARAMA_ERROR_TABLE) - set(NOT_RAISED) == set()
    # the Go side names exactly the sentinels the table judges
    named = set(re.findall(r'\{sarama\.(Err\w+), "(Err\w+)"\}', (SOURCES / "sarama_errors.go").read_text()))
    assert all(variable == name for variable, name in named)
    assert {name for _, name in named} == sentinels - set(NOT_RAISED)
    assert all(outcome in ("fail", "info") and why for outcome, why in SARAMA_ERROR_TABLE.values())


def test_sarama_refuses_what_it_cannot_do_before_a_run():
    assert client_kind("sarama").workloads == ("queue",)
    with pytest.raises(ValueError, match="--client sarama: --max-in-flight 5 .*Net.MaxOpenRequests to be 1"):
        TestOptions.from_flat(bootstrap_servers="x:1", client="sarama", max_in_flight=5).validate()
    with pytest.raises(ValueError, match="--client sarama: --sub-via subscribe needs a consumer group member"):
        TestOptions.from_flat(bootstrap_servers="x:1", client="sarama", sub_via="subscribe").validate()
    TestOptions.from_flat(bootstrap_servers="x:1", client="sarama", max_in_flight=5, idempotence=False).validate()


def test_a_sarama_run_is_valid(cluster, tmp_path):
    result, events, test_json = client_run(cluster, tmp_path, "sarama", time_limit=8)
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    assert len(completions(events, "send")) >= 10 and any(e["value"][0][1] for e in completions(events, "poll"))
    assert test_json["options"]["client"] == "sarama"
    check_opened_before_the_clock(test_json, events, "sarama")
    assert test_json["versions"]["sarama"] == PINNED and test_json["versions"]["go"].startswith("go")
    assert test_json["final"]["complete"] is True
    assert all(set(e["starts"]) == {str(k) for k in e["value"]} for e in completions(events, "assign"))


def test_sarama_transactions_are_valid(cluster, tmp_path):
    result, events, _ = client_run(cluster, tmp_path, "sarama", time_limit=30, txn=True, abort_p=0.3)
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    txns = completions(events, "txn") + completions(events, "txn", "fail")
    assert any(e["type"] == "ok" and any(m[0] == "poll" and m[1] for m in e["value"]) for e in txns)
    assert any(e["type"] == "fail" and e["error"][0] == "ABORTED_ON_PURPOSE" for e in txns)
