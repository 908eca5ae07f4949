"""Calls into librdkafka stay out of except blocks (workloads/clients.py says why):
confluent-kafka keeps, for good, the exception being handled when one of its calls
raises, and with it every frame and client that exception's traceback holds."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"

# calls that reach librdkafka and can raise KafkaException: its own, and the
# workloads' wrappers of them
REACH_LIBRDKAFKA = {
    "abort_transaction", "commit_transaction", "begin_transaction", "init_transactions",
    "send_offsets_to_transaction", "seek", "assign", "subscribe", "commit", "abort", "begin",
    "_abort", "_rewound", "_after_failed_commit", "rewind", "guarded", "committed_starts", "produce_all",
    "poll_messages",
}


def handled_refcount_growth(call) -> int:
    """How many references to the exception being handled `call` leaves behind,
    called three times inside its handler."""
    try:
        raise ValueError("handled")
    except ValueError as handled:
        before = sys.getrefcount(handled)
        for _ in range(3):
            try:
                call()
            except KafkaException:
                pass
        return sys.getrefcount(handled) - before


@pytest.fixture
def producer():
    return Producer({"bootstrap.servers": "127.0.0.1:1", "transactional.id": "never-initialised",
                     "log_level": 0})


@pytest.fixture
def consumer():
    consumer = Consumer({"bootstrap.servers": "127.0.0.1:1", "group.id": "never-joined", "log_level": 0})
    yield consumer
    consumer.close()


def test_confluent_kafka_keeps_the_exception_handled_while_it_raises(producer, consumer):
    """The upstream leak the rule works around. If this fails, confluent-kafka has
    fixed it, and the rule (and this test) can go."""
    assert handled_refcount_growth(lambda: producer.abort_transaction(0.1)) == 3
    assert handled_refcount_growth(lambda: consumer.seek(TopicPartition("t", 0, 5))) == 3
    assert handled_refcount_growth(lambda: producer.flush(0)) == 0  # raised nothing


def test_the_same_call_after_the_handler_keeps_nothing(producer):
    try:
        raise ValueError("handled")
    except ValueError as e:
        handled = e
    before = sys.getrefcount(handled)
    for _ in range(3):
        try:
            producer.abort_transaction(0.1)
        except KafkaException:
            pass
    assert sys.getrefcount(handled) == before


def calls_in_handlers(source: str) -> list[tuple[int, str]]:
    """(line, name) of each call inside an except block whose name is in
    REACH_LIBRDKAFKA; functions defined inside a handler are not its body."""
    found = []

    def visit(node: ast.AST, in_handler: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and in_handler:
            return
        if isinstance(node, ast.Call) and in_handler:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in REACH_LIBRDKAFKA:
                found.append((node.lineno, name))
        for child in ast.iter_child_nodes(node):
            visit(child, in_handler or isinstance(node, ast.ExceptHandler))

    visit(ast.parse(source), False)
    return found


def test_the_rule_finds_an_abort_inside_a_handler():
    source = "try:\n    run()\nexcept Indefinite as e:\n    txn.abort()\n    return self._abort(txn)\n"
    assert calls_in_handlers(source) == [(4, "abort"), (5, "_abort")]
    assert calls_in_handlers("try:\n    run()\nexcept E as e:\n    failed = e\nif failed:\n    txn.abort()\n") == []


def test_no_workload_calls_into_librdkafka_from_an_except_block():
    offenders = {f"{path.relative_to(WORKLOADS.parent)}:{line}": name
                 for path in sorted(WORKLOADS.rglob("*.py"))
                 for line, name in calls_in_handlers(path.read_text())}
    assert offenders == {}
