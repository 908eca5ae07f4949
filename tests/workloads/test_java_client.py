"""Kafka's Java client behind the client seam (workloads/java_client/): its error
table, and short runs on the shared cluster whose histories the checkers find
valid, with and without transactions, on transaction.version 1 and 2."""
from __future__ import annotations

import zipfile

import pytest

from checkers.history.wellformed import wellformedness_problems
from clusters.kafka.admin import TRANSACTION_VERSION, finalized_feature, set_transaction_version
from clusters.kafka.versions import resolve
from harness.probes.txn_version import epochs_bumped_per_transaction, probe
from harness.test_options import TestOptions
from workloads.errors import ERROR_TABLE
from workloads.java_client.build import clients_jar
from workloads.java_client.errors import JAVA_ERROR_TABLE, classify_java
from tests.workloads.client_runs import check_opened_before_the_clock, client_run


def test_the_java_error_table_says_what_may_have_happened():
    assert classify_java("TimeoutException", "expired", "table").outcome == "info"
    assert classify_java("InvalidTopicException", "bad name", "table").outcome == "fail"
    assert classify_java("ProducerFencedException", "fenced", "table").outcome == "info"
    assert classify_java("NotEnoughReplicasException", "", "table").outcome == "info"
    assert classify_java("SomethingNewException", "", "table").outcome == "info"  # unsure: may have happened
    assert classify_java("OP_TIMEOUT", "no ack", "table").outcome == "info"       # the harness's own
    # the server decides when it knows: a send() that threw, an abort that succeeded
    assert classify_java("TimeoutException", "", "definite").outcome == "fail"
    assert classify_java("InvalidTopicException", "x (during commit)", "indefinite").error == \
        ["InvalidTopicException", "x (during commit)"]


def test_the_java_error_table_names_kafka_clients_exceptions_with_a_reason():
    with zipfile.ZipFile(clients_jar(resolve())) as jar:
        classes = {name.rsplit("/", 1)[-1].removesuffix(".class") for name in jar.namelist()}
    java_lang = {"IllegalStateException", "IllegalArgumentException"}
    assert set(JAVA_ERROR_TABLE) - classes - java_lang == set()
    assert all(outcome in ("fail", "info") and why for outcome, why in JAVA_ERROR_TABLE.values())
    # the same verdicts as librdkafka's table where both name the same broker error
    same = {"NotLeaderOrFollowerException": "NOT_LEADER_FOR_PARTITION", "RecordTooLargeException":
            "MSG_SIZE_TOO_LARGE", "UnknownTopicOrPartitionException": "UNKNOWN_TOPIC_OR_PART",
            "ConcurrentTransactionsException": "CONCURRENT_TRANSACTIONS"}
    assert all(JAVA_ERROR_TABLE[j][0] == ERROR_TABLE[r][0] for j, r in same.items())


def test_the_java_client_serves_only_the_queue():
    with pytest.raises(ValueError, match="--client java has no client for --workload list-append"):
        TestOptions.from_flat(bootstrap_servers="x:1", workload="list-append", client="java").validate()
    with pytest.raises(ValueError, match="--txn-version .* needs a cluster reached over SSH"):
        TestOptions.from_flat(bootstrap_servers="x:1", txn_version=2).validate()


def java_run(cluster, tmp_path, **overrides):
    return client_run(cluster, tmp_path, "java", **overrides)


@pytest.fixture
def txn_version_restored(cluster):
    """The shared cluster's transaction.version as it was before the test (a fresh
    4.1.1 cluster finalizes it at 2)."""
    node = cluster.inventory.nodes[0].name
    before = finalized_feature(cluster, node, TRANSACTION_VERSION)
    assert before in (0, 1, 2)
    yield cluster
    set_transaction_version(cluster, node, before)


def oks(events, f):
    return [e for e in events if e["type"] == "ok" and e["f"] == f]


def test_a_java_client_run_is_valid(txn_version_restored, tmp_path):
    cluster = txn_version_restored
    # 15 s: at load 20 an 8 s run did 4 ops (the JVMs' first connections take seconds)
    result, events, test_json = java_run(cluster, tmp_path, time_limit=15, txn_version=1)
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    # a client's first op waits for its connections (seconds on a loaded machine)
    assert len(oks(events, "send")) >= 10 and any(e["value"][0][1] for e in oks(events, "poll"))
    assert test_json["options"]["client"] == "java" and test_json["versions"]["kafka_clients"] == "4.1.1"
    assert test_json["final"]["complete"] is True
    # every ok assign says where it started each key (the checker checked them: valid)
    assert all(set(e["starts"]) == {str(k) for k in e["value"]} for e in oks(events, "assign"))
    assert test_json["options"]["txn_version"] == 1 and test_json["transaction_version"] == 1


def test_java_clients_are_open_before_the_clock(cluster, tmp_path):
    """The JVM's class loading and each session's first connections, init and coordinator
    lookup happen in the `open` phase (harness/client_open.py), before the clock: a
    short run's first send completes well inside its time limit, under load too (an
    8 s run at load 20 once had no ok send: the first open took 21 s inside the clock)."""
    result, events, test_json = java_run(cluster, tmp_path, time_limit=6)
    assert result.valid is True, result
    first_send_after_s = check_opened_before_the_clock(test_json, events, "java")
    print(f"java: clients open in {test_json['client_open']['seconds']} s, "
          f"first ok send {first_send_after_s:.2f} s into the main phase")


def test_a_java_client_run_through_subscribe_logs_where_each_rebalance_started(cluster, tmp_path):
    """The subscribe path's rebalance callback, on the Java client: each logged
    `assigned` entry says where it started each key it gave, and the run is valid."""
    result, events, _ = java_run(cluster, tmp_path, time_limit=20, sub_via="subscribe")  # a group join takes seconds under load
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    assigned = [entry for e in events if e["type"] == "ok"
                for entry in e.get("rebalance_log", []) if entry[0] == "assigned"]
    assert assigned, "no rebalance gave a consumer its partitions"
    for _, keys, *starts in assigned:
        assert len(starts) == 1 and set(starts[0]) <= {str(k) for k in keys}, (keys, starts)
        assert all(isinstance(offset, int) and offset >= 0 for offset in starts[0].values())
    assert any(starts and starts[0] for _, _, *starts in assigned)


def test_java_client_transactions_on_transaction_version_2(txn_version_restored, tmp_path):
    cluster = txn_version_restored
    result, events, test_json = java_run(cluster, tmp_path, time_limit=8, txn=True, abort_p=0.3, txn_version=2)
    assert result.valid is True, result
    txns = [e for e in events if e["f"] == "txn" and e["type"] != "invoke"]
    assert any(e["type"] == "ok" for e in txns)
    assert any(e["type"] == "fail" and e["error"][0] == "ABORTED_ON_PURPOSE" for e in txns)
    assert test_json["transaction_version"] == 2
    assert finalized_feature(cluster, cluster.inventory.nodes[0].name, TRANSACTION_VERSION) == 2


@pytest.mark.parametrize("level", [1, 2])
def test_which_client_uses_transaction_version_2_as_the_log_shows(txn_version_restored, level):
    cluster = txn_version_restored
    """docs/findings.md: the commit markers' producer epochs, read on a broker."""
    assert set_transaction_version(cluster, cluster.inventory.nodes[0].name, level) == level
    found = probe(cluster, count=3)
    assert epochs_bumped_per_transaction(found["java"]) == (level == 2)
    assert epochs_bumped_per_transaction(found["franz-go"]) == (level == 2)  # EndTxn v5 when offered
    assert not epochs_bumped_per_transaction(found["librdkafka"])
    # EndTxn v3 (Sarama, kafka-python), v1 (kafkajs), v0 (aiokafka): never version 2
    for client in ("sarama", "kafkajs", "kafka-python", "aiokafka"):
        assert not epochs_bumped_per_transaction(found[client]), client
