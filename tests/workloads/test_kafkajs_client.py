"""kafkajs behind the client seam (workloads/kafkajs_client/): its error table, its
modules installed into the cache by npm ci from the lock file, what it refuses, and
short runs on the shared cluster whose histories the checkers find valid, with and
without transactions."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from harness.test_options import TestOptions
from tests.workloads.client_runs import check_opened_before_the_clock, check_queue_run, check_txn_run, client_run
from workloads.client_kinds import client_kind
from workloads.errors import ERROR_TABLE
from workloads.kafkajs_client import install
from workloads.kafkajs_client.errors import KAFKAJS_ERROR_TABLE, classify_kafkajs

PINNED = "2.2.4"
# kafkajs's classes that never reach the table by their own name: a protocol error
# is named by its type (OFFSET_OUT_OF_RANGE for KafkaJSOffsetOutOfRange)
NAMED_BY_TYPE = {"KafkaJSProtocolError", "KafkaJSOffsetOutOfRange"}


def test_the_kafkajs_error_table_says_what_may_have_happened():
    assert classify_kafkajs("KafkaJSRequestTimeoutError", "timed out", "table").outcome == "info"
    assert classify_kafkajs("KafkaJSNumberOfRetriesExceeded", "", "table").outcome == "info"
    assert classify_kafkajs("NOT_LEADER_FOR_PARTITION", "", "table").outcome == "info"
    assert classify_kafkajs("KAFKAJS_UNKNOWN_ERROR_CODE", "", "table").outcome == "info"
    assert classify_kafkajs("INVALID_TOPIC_EXCEPTION", "", "table").outcome == "fail"
    assert classify_kafkajs("KafkaJSMetadataNotLoaded", "", "table").outcome == "fail"
    assert classify_kafkajs("SomethingNew", "", "table").outcome == "info"      # unsure: may have happened
    assert classify_kafkajs("OP_TIMEOUT", "no ack", "table").outcome == "info"  # the harness's own
    # the program decides when it knows: an abort that succeeded, a commit left open
    assert classify_kafkajs("NOT_COORDINATOR_FOR_GROUP", "", "definite").outcome == "fail"
    assert classify_kafkajs("KafkaJSRequestTimeoutError", "x (during commit)", "indefinite").error == \
        ["KafkaJSRequestTimeoutError", "x (during commit)"]


def _kafkajs_source(name: str) -> str:
    return (install.ensure_installed() / "kafkajs" / "src" / name).read_text()


def test_the_kafkajs_error_table_names_every_error_kafkajs_raises_with_a_reason():
    protocol_types = set(re.findall(r"type: '([A-Z_]+)'", _kafkajs_source("protocol/error.js")))
    classes = set(re.findall(r"^class (\w+)", _kafkajs_source("errors.js"), re.MULTILINE)) - NAMED_BY_TYPE
    assert len(protocol_types) > 80 and len(classes) > 25
    assert protocol_types - set(KAFKAJS_ERROR_TABLE) == set()
    assert classes - set(KAFKAJS_ERROR_TABLE) == set()
    assert all(outcome in ("fail", "info") and why for outcome, why in KAFKAJS_ERROR_TABLE.values())
    # the same verdicts as librdkafka's table where both name the same broker error
    same = {"NOT_LEADER_FOR_PARTITION": "NOT_LEADER_FOR_PARTITION", "MESSAGE_TOO_LARGE": "MSG_SIZE_TOO_LARGE",
            "GROUP_COORDINATOR_NOT_AVAILABLE": "COORDINATOR_NOT_AVAILABLE",
            "CONCURRENT_TRANSACTIONS": "CONCURRENT_TRANSACTIONS",
            "OUT_OF_ORDER_SEQUENCE_NUMBER": "OUT_OF_ORDER_SEQUENCE_NUMBER"}
    assert all(KAFKAJS_ERROR_TABLE[k][0] == ERROR_TABLE[r][0] for k, r in same.items())


def test_the_modules_are_installed_once_per_lock_file(monkeypatch):
    modules = install.ensure_installed()
    assert install.lock_digest() in str(modules)
    assert json.loads((modules / "kafkajs" / "package.json").read_text())["version"] == PINNED
    assert install.install_state() == (True, str(install.install_dir()))
    monkeypatch.setattr(install, "_npm_ci", lambda *a: pytest.fail("installed again"))
    assert install.ensure_installed() == modules


def test_a_failed_install_names_its_log(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGTRIAL_CACHE", str(tmp_path))
    monkeypatch.setattr(install, "SOURCES", tmp_path / "src")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "package.json").write_text('{"name": "broken", "dependencies": {"kafkajs": "2.2.4"}}')
    (tmp_path / "src" / "package-lock.json").write_text("not json")
    with pytest.raises(install.KafkajsInstallError, match=r"see .*\.install\.log"):
        install.ensure_installed()
    assert not (install.install_dir() / install.MARKER).exists()


def test_kafkajs_refuses_what_it_cannot_do_before_any_work():
    assert client_kind("kafkajs").workloads == ("queue",)
    with pytest.raises(ValueError, match="--client kafkajs has no client for --workload list-append"):
        TestOptions.from_flat(bootstrap_servers="x:1", workload="list-append", client="kafkajs").validate()
    with pytest.raises(ValueError, match="--client kafkajs: --sub-via subscribe needs a consumer group member "
                                         "that polls"):
        TestOptions.from_flat(bootstrap_servers="x:1", client="kafkajs", sub_via="subscribe").validate()


# kafkajs's read_committed filter (src/consumer/filterAbortedMessages.js) on the records
# a fetch from offset 1 returned in a run (docs/findings.md, kafkajs): 1009's aborted
# transaction began at offset 0, before the fetch, and 2005's at offset 1
ABORTED_BEFORE_THE_FETCH = """
const filterAbortedMessages = require('kafkajs/src/consumer/filterAbortedMessages')
const ctx = producerId => ({ producerId: String(producerId), inTransaction: true })
const record = (offset, producerId, value) => ({ offset: String(offset), key: Buffer.from('1'),
  value: Buffer.from(String(value)), isControlRecord: false, batchContext: ctx(producerId) })
const marker = (offset, producerId, type) => ({ offset: String(offset), key: Buffer.from([0, 0, 0, type]),
  value: Buffer.alloc(6), isControlRecord: true, batchContext: ctx(producerId) })
const ABORT = 0, COMMIT = 1
const messages = [record(1, 2005, 2), record(2, 2004, 5), marker(3, 1009, ABORT), marker(4, 2005, ABORT),
  marker(6, 2004, COMMIT)]
const abortedTransactions = [{ producerId: '1009', firstOffset: '0' }, { producerId: '2005', firstOffset: '1' }]
const kept = filterAbortedMessages({ messages, abortedTransactions }).filter(m => !m.isControlRecord)
console.log(JSON.stringify(kept.map(m => [Number(m.offset), m.value.toString()])))
"""


def test_kafkajs_read_committed_returns_a_record_of_an_aborted_transaction():
    """The finding, on kafkajs's own filter: it moves one aborted transaction into its
    set per record, so 2005's (begun at the record's offset) is not in it yet when
    1009's (begun before the fetch) is taken first, and 2005's aborted record is kept.
    Java's consumer takes every aborted transaction begun by a batch's last offset."""
    out = subprocess.run(["node", "-e", ABORTED_BEFORE_THE_FETCH], capture_output=True, text=True, check=True,
                         env={**os.environ, "NODE_PATH": str(install.ensure_installed())})
    assert json.loads(out.stdout) == [[1, "2"], [2, "5"]]  # [1, "2"] was aborted: only [2, "5"] was committed


def test_a_kafkajs_run_is_valid(cluster, tmp_path):
    result, events, test_json = client_run(cluster, tmp_path, "kafkajs", time_limit=8)
    check_queue_run(result, events)
    assert test_json["options"]["client"] == "kafkajs"
    check_opened_before_the_clock(test_json, events, "kafkajs")
    assert test_json["versions"]["kafkajs"] == PINNED and test_json["versions"]["node"].startswith("v")
    assert test_json["final"]["complete"] is True


def test_kafkajs_transactions_are_valid(cluster, tmp_path):
    # one process: with two producers' aborted transactions interleaved, kafkajs's
    # read_committed filter returns aborted records (the test above), and the run is
    # rightly invalid (G1a). A long op timeout: a send given up on and aborted may be
    # committed by kafkajs's next transaction (docs/findings.md, kafkajs), which only a
    # machine loaded past a send's 30 s would show here.
    result, events, _ = client_run(cluster, tmp_path, "kafkajs", time_limit=30, txn=True, abort_p=0.3, concurrency=1,
                                   op_timeout=30)
    check_txn_run(result, events)


DUMP_LINE = re.compile(r"^    offset (\d+): epoch (\d+) seq (-?\d+) (.*)$", re.MULTILINE)


@pytest.mark.slow
def test_the_late_batch_probe_loses_b_or_commits_a_with_kafkajs(healed_cluster, local_cluster):
    """`logtrial probe late-batch --client kafkajs`: kafkajs's abort goes out while A's
    batch is held, under the epoch B will use (docs/findings.md, kafkajs). Where A lands
    decides the loss: after the ABORT marker, once B's transaction has added the
    partition, A is committed with B (A READ); before it, A's failed send has given its
    sequence number back, B takes it, and the broker answers B as A's duplicate, at A's
    offset under the ABORT marker (B LOST). Either way A is the warm-up's next sequence
    under the same epoch, A usually the warm-up's next sequence. A round whose held A is
    refused keeps both: up to three rounds."""
    probe = subprocess.run([sys.executable, "-m", "harness.cli", "probe", "late-batch", local_cluster.name, "3",
                            "--client", "kafkajs", "--until-lost"], capture_output=True, text=True, timeout=900)
    out = probe.stdout + probe.stderr[-2000:]
    verdicts = [line.split(": ", 1)[1] for line in probe.stdout.splitlines()
                if line.startswith("round ") and ": " in line and "leader" not in line]
    assert probe.returncode == 1 and verdicts and ("B LOST" in verdicts[-1] or "A READ" in verdicts[-1]), out
    last_round = probe.stdout.rsplit("leader ", 1)[1]
    dump = {what: (int(epoch), int(seq)) for _, epoch, seq, what in DUMP_LINE.findall(last_round)}
    (warm_epoch, warm_seq), a = dump["warm-up"], dump["A"]
    # A under the warm-up's epoch (no bump); usually its next sequence, but B may take
    # that one first and A the one after (A READ either way: seen in CI, 2026-11-28)
    assert a[0] == warm_epoch and a[1] > warm_seq, out
    assert ("B" not in dump) == ("B LOST" in verdicts[-1]), out  # a lost B was never written
