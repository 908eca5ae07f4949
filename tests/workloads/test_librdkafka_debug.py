"""LOGTRIAL_LIBRDKAFKA_DEBUG: librdkafka's debug contexts reach the run's log through
the clients' logger (what a client crash or a lost write is explained from)."""
from __future__ import annotations


from confluent_kafka import Producer

from common.client_logging import DEBUG_ENV, LIBRDKAFKA_LOG, librdkafka_logging
from tests.fixtures.log_lines import LogLines
from workloads.clients import producer_config
from workloads.settings import WorkloadSettings



def test_without_the_variable_a_client_has_no_debug_contexts(monkeypatch):
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    assert librdkafka_logging() == {"logger": LIBRDKAFKA_LOG}


def test_the_variable_gives_every_client_its_contexts_and_their_lines_reach_the_log(monkeypatch):
    monkeypatch.setenv(DEBUG_ENV, "broker,metadata")
    monkeypatch.setattr(LIBRDKAFKA_LOG, "level", LIBRDKAFKA_LOG.level)  # restored after the test
    config = producer_config("127.0.0.1:1", WorkloadSettings(), "debug-test", None)
    assert config["debug"] == "broker,metadata"
    lines = LogLines()
    LIBRDKAFKA_LOG.addHandler(lines)
    try:
        producer = Producer(config)
        producer.poll(1.0)  # the broker thread tries 127.0.0.1:1 and says so at debug level
        producer.flush(0)
    finally:
        LIBRDKAFKA_LOG.removeHandler(lines)
    assert any("127.0.0.1:1" in line and "BROKER" in line.upper() for line in lines.lines), lines.lines[:5]
