"""aiokafka behind the client seam (workloads/aiokafka_client/): its pinned
install, its error table, what it refuses, and short runs on the shared cluster
whose histories the checkers find valid, with and without transactions."""
from __future__ import annotations

import asyncio
import gc
import inspect
import sys

import pytest

from harness.test_options import TestOptions
from tests.workloads.client_runs import check_queue_run, check_txn_run, client_run
from workloads.aiokafka_client.errors import AIOKAFKA_ERROR_TABLE, classify_aiokafka
from workloads.aiokafka_client.install import PINNED
from workloads.client_kinds import client_kind
from workloads.errors import ERROR_TABLE
from workloads.kafka_python.errors import KAFKA_PYTHON_ERROR_TABLE


aiokafka = PINNED.load()  # pip-installs it into the cache on first use


def test_the_pinned_aiokafka_is_imported_from_its_own_corner_of_the_cache():
    import async_timeout
    assert aiokafka.__version__ == PINNED.version == "0.14.0"
    assert PINNED.install_dir().name == "aiokafka-0.14.0"
    assert aiokafka.__file__.startswith(str(PINNED.install_dir()))
    assert async_timeout.__file__.startswith(str(PINNED.install_dir()))  # its dependency, pinned beside it
    assert PINNED.install_state() == (True, str(PINNED.install_dir()))


def test_the_aiokafka_error_table_says_what_may_have_happened():
    errors = aiokafka.errors
    for info in (errors.NotLeaderForPartitionError(), errors.KafkaTimeoutError("expired"), errors.ProducerFenced(),
                 errors.OutOfOrderSequenceNumber(), errors.UnknownProducerId(), errors.NotEnoughReplicasError(),
                 errors.KafkaError("Unexpected error during batch delivery"), errors.ConcurrentTransactions(),
                 errors.KafkaConnectionError("lost"), errors.RequestTimedOutError()):
        assert classify_aiokafka(info).outcome == "info", info
    for fail in (errors.InvalidTopicError(), errors.ProducerClosed(), errors.IllegalOperation("not in a txn"),
                 errors.UnknownTopicOrPartitionError(), errors.TransactionalIdAuthorizationFailed(),
                 errors.ConsumerStoppedError()):
        assert classify_aiokafka(fail).outcome == "fail", fail
    # unsure: may have happened (an error code it has no class for, an exception nobody listed)
    assert classify_aiokafka(errors.for_code(9999)()).outcome == "info"
    assert classify_aiokafka(LookupError("new")).outcome == "info"
    # the caller decides when it knows: send() itself raised
    assert classify_aiokafka(errors.KafkaTimeoutError("batch full"), definite=True).outcome == "fail"
    assert classify_aiokafka(errors.InvalidTopicError("bad")).error == ["InvalidTopicError", "[Error 17] InvalidTopicError: bad"]


def test_the_aiokafka_error_table_names_every_exception_with_a_reason():
    classes = {name for name, obj in inspect.getmembers(aiokafka.errors, inspect.isclass)
               if issubclass(obj, BaseException)}
    assert set(AIOKAFKA_ERROR_TABLE) == classes - {"NoError"}  # every one it can raise, and no other
    assert all(outcome in ("fail", "info") and why for outcome, why in AIOKAFKA_ERROR_TABLE.values())
    # the same verdicts as kafka-python's where both name the same class, and as
    # librdkafka's where both name the same broker error
    shared = set(AIOKAFKA_ERROR_TABLE) & set(KAFKA_PYTHON_ERROR_TABLE)
    assert len(shared) > 40
    assert {n for n in shared if AIOKAFKA_ERROR_TABLE[n] != KAFKA_PYTHON_ERROR_TABLE[n]} == set()
    by_code = {n: getattr(aiokafka.errors, n).message for n in AIOKAFKA_ERROR_TABLE
               if getattr(getattr(aiokafka.errors, n), "message", None) in ERROR_TABLE}
    assert len(by_code) > 35
    assert {n: c for n, c in by_code.items() if AIOKAFKA_ERROR_TABLE[n][0] != ERROR_TABLE[c][0]} == {}


def options(**flat) -> TestOptions:
    return TestOptions.from_flat(bootstrap_servers="x:1", client="aiokafka", **flat)


def test_aiokafka_serves_the_queue_and_refuses_what_it_cannot_do():
    assert client_kind("aiokafka").workloads == ("queue",)
    with pytest.raises(ValueError, match="--client aiokafka has no client for --workload list-append"):
        options(workload="list-append").validate()
    with pytest.raises(ValueError, match="--client aiokafka: --retries 3 needs a producer retry count"):
        options(retries=3).validate()
    with pytest.raises(ValueError, match="--client aiokafka: --max-in-flight 5 needs more than one Produce"):
        options(max_in_flight=5).validate()
    options(max_in_flight=1, txn=True).validate()  # what it does anyway


def test_closes_abandoned_with_their_loop_end_quietly(monkeypatch):
    """Closes that outlast the loop's bound are cancelled, then abandoned with the
    stopped loop; the garbage collector's GeneratorExit must end close_each, not be
    taken for a failed close (a run under load printed "coroutine ignored
    GeneratorExit" for every such client)."""
    from workloads.aiokafka_client import loop as loop_module
    from workloads.aiokafka_client.clients import close_each
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    monkeypatch.setattr(loop_module, "STOP_TIMEOUT", 0.2)
    closed = []
    thread = loop_module.LoopThread("test-close")
    # what each close awaits, as aiokafka's stop() awaits its own futures; made ahead,
    # since a coroutine closed by the collector has no running loop to make one on
    never = {client: thread.loop.create_future() for client in ("producer", "consumer", "lookup")}

    async def hang(client) -> None:
        closed.append(client)
        await never[client]

    with pytest.raises(loop_module.LoopTimeout):
        thread.close(lambda: close_each([(hang, "producer"), (hang, "consumer"), (hang, "lookup")], 0))
    del thread
    gc.collect()
    assert closed[0] == "producer"
    assert [str(u.exc_value) for u in unraisable] == []


def test_calls_abandoned_at_their_timeout_are_ended_before_the_loop_closes(monkeypatch):
    """A commit abandoned at its op timeout, whose clean-up outlasts the close, holds a
    lock (aiokafka's _commit_lock) that another task of the loop waits on. Abandoned with
    the closed loop, the commit's clean-up woke that task on it when collected
    ("Exception ignored ... Event loop is closed", the seven-client matrix); close now
    ends both while the loop runs."""
    from workloads.aiokafka_client import loop as loop_module
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    monkeypatch.setattr(loop_module, "STOP_TIMEOUT", 2.0)
    thread = loop_module.LoopThread("test-abandoned")
    lock = thread.call(asyncio.Lock)
    cleanup = thread.call(thread.loop.create_future)

    async def commit() -> None:
        async with lock:
            try:
                await thread.loop.create_future()
            except asyncio.CancelledError:
                await cleanup     # a clean-up that outlasts the op's bound

    async def waiter() -> None:
        async with lock:
            pass

    with pytest.raises(loop_module.LoopTimeout):
        thread.run(commit, 0.1)
    thread.call(lambda: thread.loop.create_task(waiter()))
    thread.close()
    del thread, lock, cleanup, commit, waiter
    gc.collect()
    assert [str(u.exc_value) for u in unraisable] == []


def test_an_aiokafka_run_is_valid(cluster, tmp_path):
    result, events, test_json = client_run(cluster, tmp_path, "aiokafka", time_limit=12)
    check_queue_run(result, events)
    assert test_json["options"]["client"] == "aiokafka" and test_json["versions"]["aiokafka"] == PINNED.version
    assert test_json["final"]["complete"] is True


def test_aiokafka_transactions_are_valid(cluster, tmp_path):
    result, events, _ = client_run(cluster, tmp_path, "aiokafka", time_limit=15, txn=True, abort_p=0.3)
    check_txn_run(result, events)


@pytest.mark.slow
def test_the_aiokafka_abort_waits_for_the_held_batch(healed_cluster, local_cluster):
    """`logtrial probe late-batch --client aiokafka` loses nothing: its sender sends
    EndTxn only after flush_for_commit, every batch it was handed answered
    (Sender._do_txn_commit), so the abort returns once A (resent on a new connection
    after its request timed out) is answered; A lands before the ABORT marker and B
    takes the next sequence under the same epoch (EndTxn v0: no bump at either
    transaction version; docs/findings.md: 5 of 5 rounds so)."""
    from tests.nemesis.test_nemesis_client_delay import the_abort_waited_and_b_followed
    the_abort_waited_and_b_followed(healed_cluster, local_cluster, "aiokafka", bumps_at_version_2=False)
