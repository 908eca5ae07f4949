"""kafka-python behind the client seam (workloads/kafka_python/): its pinned
install, its error table, and short runs on the shared cluster whose histories
the checkers find valid, with and without transactions."""
from __future__ import annotations

import inspect
import threading
import time

import pytest

from checkers.history.wellformed import wellformedness_problems
from harness.test_options import TestOptions
from tests.workloads.client_runs import client_run, completions
from workloads.client_kinds import client_kind
from workloads.errors import ERROR_TABLE
from workloads.kafka_python.errors import KAFKA_PYTHON_ERROR_TABLE, classify_kafka_python
from workloads.kafka_python.install import VERSION, install_dir, load


@pytest.fixture(scope="module")
def kafka():
    """The pinned package (pip-installed into the cache on first use)."""
    return load()


def test_the_pinned_kafka_python_is_imported_from_the_cache(kafka):
    assert kafka.__version__ == VERSION == "3.0.12"
    assert kafka.__file__.startswith(str(install_dir()))


def test_the_kafka_python_error_table_says_what_may_have_happened(kafka):
    errors = kafka.errors
    assert classify_kafka_python(errors.NotLeaderForPartitionError()).outcome == "info"
    assert classify_kafka_python(errors.KafkaTimeoutError("expired")).outcome == "info"
    assert classify_kafka_python(errors.ProducerFencedError()).outcome == "info"
    assert classify_kafka_python(errors.NotEnoughReplicasError()).outcome == "info"
    assert classify_kafka_python(errors.OutOfOrderSequenceNumberError()).outcome == "info"
    assert classify_kafka_python(errors.KafkaError("in an error state")).outcome == "info"
    assert classify_kafka_python(errors.InvalidTopicError()).outcome == "fail"
    assert classify_kafka_python(errors.TransactionAbortedError()).outcome == "fail"
    assert classify_kafka_python(errors.IllegalStateError("closed")).outcome == "fail"
    # unsure: may have happened (an error code it does not know, an exception nobody listed)
    assert classify_kafka_python(errors.for_code(9999)()).outcome == "info"
    assert classify_kafka_python(LookupError("new")).outcome == "info"
    # the caller decides when it knows: send() itself raised
    assert classify_kafka_python(errors.KafkaTimeoutError("metadata"), definite=True).outcome == "fail"
    assert classify_kafka_python(errors.InvalidTopicError("bad name")).error == \
        ["InvalidTopicError", str(errors.InvalidTopicError("bad name"))]


def test_the_kafka_python_error_table_names_its_exceptions_with_a_reason(kafka):
    from kafka.consumer.fetcher import RecordTooLargeError
    from kafka.coordinator.base import UnjoinedGroupException
    classes = {name for name, obj in inspect.getmembers(kafka.errors, inspect.isclass)
               if issubclass(obj, BaseException)}
    classes |= {RecordTooLargeError.__name__, UnjoinedGroupException.__name__, type(kafka.errors.for_code(9999)()).__name__}
    assert set(KAFKA_PYTHON_ERROR_TABLE) - classes == set()
    assert all(outcome in ("fail", "info") and why for outcome, why in KAFKA_PYTHON_ERROR_TABLE.values())
    # the same verdicts as librdkafka's table where both name the same broker error
    same = {name: getattr(kafka.errors, name).message for name in KAFKA_PYTHON_ERROR_TABLE
            if getattr(getattr(kafka.errors, name, None), "message", None) in ERROR_TABLE}
    assert len(same) > 30
    assert {n: m for n, m in same.items() if KAFKA_PYTHON_ERROR_TABLE[n][0] != ERROR_TABLE[m][0]} == {}


def test_kafka_python_serves_only_the_queue():
    assert client_kind("kafka-python").workloads == ("queue",)
    with pytest.raises(ValueError, match="--client kafka-python has no client for --workload list-append"):
        TestOptions.from_flat(bootstrap_servers="x:1", workload="list-append", client="kafka-python").validate()


def kafka_python_run(cluster, tmp_path, **overrides):
    return client_run(cluster, tmp_path, "kafka-python", **overrides)


def test_a_kafka_python_run_is_valid(cluster, tmp_path):
    result, events, test_json = kafka_python_run(cluster, tmp_path, time_limit=8)
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    # a client's first op waits for its connections (seconds on a loaded machine)
    assert len(completions(events, "send")) >= 10 and any(e["value"][0][1] for e in completions(events, "poll"))
    assert test_json["options"]["client"] == "kafka-python" and test_json["versions"]["kafka_python"] == VERSION
    assert test_json["final"]["complete"] is True
    # every ok assign says where it started each key (the checker checked them: valid)
    assert all(set(e["starts"]) == {str(k) for k in e["value"]} for e in completions(events, "assign"))
    sends = [e for e in events if e["type"] == "invoke" and e["f"] == "send"]
    assert all(e["producer"] == {"idempotent": True, "transactional": False} for e in sends)


def test_kafka_python_transactions_are_valid(cluster, tmp_path):
    result, events, _ = kafka_python_run(cluster, tmp_path, time_limit=10, txn=True, abort_p=0.3)
    assert result.valid is True, result
    assert wellformedness_problems(events, "queue") == []
    assert completions(events, "txn")
    assert any(e["error"][0] == "ABORTED_ON_PURPOSE" for e in completions(events, "txn", "fail"))
    # a committed transaction's poll read what others' committed transactions sent
    assert any(mop[0] == "poll" and mop[1] for e in completions(events, "txn") for mop in e["value"])


class FakeTimedProducer:
    """A TimedProducer (workloads/kafka_python/timed.py) whose send is answered after
    `answer_s` (never if None), and whose end takes `end_s`."""

    def __init__(self, answer_s: float | None, end_s: float = 0.0, outcome: str = "ok"):
        self.answer_s, self.end_s, self.outcome = answer_s, end_s, outcome
        self.bounds: list[float] = []

    def begin(self) -> None:
        pass

    def send(self, topic: str, value: str, seen: dict) -> None:
        if self.answer_s is not None:
            threading.Timer(self.answer_s, lambda: seen.update(at=time.time(), offset=7)).start()

    def end(self, commit: bool, bound: float) -> str:
        self.bounds.append(bound)
        time.sleep(self.end_s)
        return self.outcome


def test_the_python_clients_timed_transaction_reports_as_the_bridges_does():
    """late_batch_python.timed_txn: the send's answer with its time, the wait cut at
    `wait`, one end bounded by the op timeout or the retry window, whichever is longer;
    a send answered while the end waited is seen too (the abort that waited for A)."""
    from harness.probes.late_batch_python import timed_txn
    from harness.probes.late_batch_timing import OP_TIMEOUT

    answered = timed_txn(FakeTimedProducer(0.05), "t", "B", 5, True)
    assert answered["send"]["offset"] == 7 and answered["waited"] - answered["begun"] < 1
    assert [outcome for outcome, *_ in answered["ends"]] == ["ok"]

    late = FakeTimedProducer(0.3, end_s=0.5, outcome="ok")
    a = timed_txn(late, "t", "A", 0.1, False, retry=26)
    assert a["waited"] - a["begun"] >= 0.1 and late.bounds == [26]
    (_, started, ended), = a["ends"]
    assert started < a["send"]["at"] <= ended  # answered while the abort waited

    unanswered = FakeTimedProducer(None, outcome="KafkaTimeoutError")
    c = timed_txn(unanswered, "t", "A", 0.1, False)
    assert c["send"] == {} and c["ends"][0][0] == "KafkaTimeoutError" and unanswered.bounds == [OP_TIMEOUT]


@pytest.mark.slow
def test_the_kafka_python_abort_waits_for_the_held_batch(healed_cluster, local_cluster):
    """`logtrial probe late-batch --client kafka-python` loses nothing: its transaction
    manager holds EndTxn back while a batch is incomplete (next_request_handler), so
    the abort returns once A's held Produce is answered; A lands before the ABORT
    marker and B takes the next sequence under the same epoch (EndTxn v3: no bump at
    either transaction version; docs/findings.md: 5 of 5 rounds so)."""
    from tests.nemesis.test_nemesis_client_delay import the_abort_waited_and_b_followed
    the_abort_waited_and_b_followed(healed_cluster, local_cluster, "kafka-python", bumps_at_version_2=False)
