"""The error table: every entry names a real KafkaError code, and the cases
the history's meaning depends on are classified the right way round."""
from confluent_kafka import KafkaError, KafkaException

from workloads.errors import ERROR_TABLE, HARNESS_OUTCOMES, NOT_PERSISTED, classify


def test_every_entry_is_a_kafka_error_name_with_an_explanation():
    for name, (outcome, why) in ERROR_TABLE.items():
        assert hasattr(KafkaError, name), f"{name} is not a KafkaError code"
        assert KafkaError(getattr(KafkaError, name)).name() == name
        assert outcome in ("fail", "info") and why
    assert not set(HARNESS_OUTCOMES) & {n for n in dir(KafkaError) if n.isupper()}


def test_indefinite_errors():
    for code in (KafkaError._MSG_TIMED_OUT, KafkaError._TIMED_OUT, KafkaError.NOT_LEADER_FOR_PARTITION,
                 KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                 KafkaError.REQUEST_TIMED_OUT, KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.NOT_COORDINATOR,
                 KafkaError._TRANSPORT, KafkaError._PURGE_INFLIGHT, KafkaError._PURGE_QUEUE,
                 KafkaError.NOT_ENOUGH_REPLICAS):
        verdict = classify(KafkaError(code))
        assert verdict.outcome == "info", verdict
        assert verdict.name == KafkaError(code).name()


def test_definite_errors():
    for code in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.MSG_SIZE_TOO_LARGE, KafkaError._QUEUE_FULL):
        assert classify(KafkaError(code)).outcome == "fail", KafkaError(code).name()


def test_timed_out_or_purged_messages_are_definite_only_when_known_not_persisted():
    # a message purged from the queue may be a retry of an attempt that was written
    for code in (KafkaError._MSG_TIMED_OUT, KafkaError._PURGE_QUEUE):
        err = KafkaError(code)
        assert classify(err).outcome == "info"
        assert classify(err, persistence=NOT_PERSISTED).outcome == "fail"


def test_fatal_errors_are_indefinite_even_when_the_code_is_definite():
    fatal = KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART, "boom", fatal=True)
    assert classify(fatal).outcome == "info"


def test_unknown_errors_are_indefinite_and_exceptions_are_unwrapped():
    verdict = classify(KafkaException(KafkaError(KafkaError.UNKNOWN_SUBSCRIPTION_ID, "no such")))
    assert (verdict.outcome, verdict.name, verdict.message) == ("info", "UNKNOWN_SUBSCRIPTION_ID", "no such")
    assert classify(RuntimeError("odd")).error == ["RuntimeError", "odd"]
    assert classify(BufferError("full"), definite=True).outcome == "fail"


def test_each_clients_name_for_out_of_order_sequence_is_one_the_checker_counts():
    """The checker finds the broker's OUT_OF_ORDER_SEQUENCE_NUMBER under whatever name the
    client wrote into the history (checkers/queue/producer_errors.py); a client whose
    name it lacks would show none."""
    from checkers.queue.producer_errors import OUT_OF_ORDER_NAMES
    from workloads.aiokafka_client.errors import AIOKAFKA_ERROR_TABLE
    from workloads.go_clients.franz_go_errors import FRANZ_GO_ERROR_TABLE
    from workloads.go_clients.sarama_errors import SARAMA_ERROR_TABLE
    from workloads.java_client.errors import JAVA_ERROR_TABLE
    from workloads.kafka_python.errors import KAFKA_PYTHON_ERROR_TABLE
    from workloads.kafkajs_client.errors import KAFKAJS_ERROR_TABLE
    tables = {"librdkafka": ERROR_TABLE, "java": JAVA_ERROR_TABLE, "franz-go": FRANZ_GO_ERROR_TABLE,
              "sarama": SARAMA_ERROR_TABLE, "kafkajs": KAFKAJS_ERROR_TABLE, "kafka-python": KAFKA_PYTHON_ERROR_TABLE,
              "aiokafka": AIOKAFKA_ERROR_TABLE}
    names = {client: sorted(n for n in table if n.replace("_", "").lower().startswith("outofordersequence"))
             for client, table in tables.items()}
    assert all(names.values()), names
    assert {client: set(found) - OUT_OF_ORDER_NAMES for client, found in names.items()} == dict.fromkeys(tables, set())
