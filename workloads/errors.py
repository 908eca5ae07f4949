"""The one table that says whether a client error is definite or indefinite.

`fail` (definite): the operation certainly did not take effect.
`info` (indefinite): it may or may not have taken effect; the history records
`info` and the process that ran it is retired.

Keys are confluent-kafka `KafkaError` code names (librdkafka's local errors
start with an underscore). The name goes into the history's `error` field.
Anything not in the table is indefinite: when unsure, never claim "it didn't
happen".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from confluent_kafka import KafkaError, KafkaException

Outcome = Literal["fail", "info"]
FAIL: Outcome = "fail"
INFO: Outcome = "info"

# librdkafka message persistence status (rd_kafka_msg_status_t). confluent-kafka does
# not expose it, so today every purged or timed-out message is indefinite; a client
# that can read the status passes it to classify() and gets the definite verdict.
NOT_PERSISTED = "NOT_PERSISTED"
POSSIBLY_PERSISTED = "POSSIBLY_PERSISTED"
PERSISTED = "PERSISTED"

ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    # --- broker errors: the request was refused before anything was written ---------
    # (topics are created before first use and never deleted during a run, so no
    # earlier attempt of the same message can have found the partition)
    "UNKNOWN_TOPIC_OR_PART": (FAIL, "the broker has no such partition: nothing was appended"),
    "MSG_SIZE_TOO_LARGE": (FAIL, "rejected by size check before the append"),
    "RECORD_LIST_TOO_LARGE": (FAIL, "rejected by size check before the append"),
    "INVALID_MSG_SIZE": (FAIL, "rejected by validation before the append"),
    "INVALID_MSG": (FAIL, "CRC/validation failure: the batch was rejected"),
    "INVALID_RECORD": (FAIL, "record failed broker validation: the batch was rejected"),
    "INVALID_REQUIRED_ACKS": (FAIL, "bad acks setting: request refused"),
    "INVALID_TIMESTAMP": (FAIL, "rejected by timestamp validation"),
    "TOPIC_AUTHORIZATION_FAILED": (FAIL, "refused by authorization"),
    "CLUSTER_AUTHORIZATION_FAILED": (FAIL, "refused by authorization"),
    "GROUP_AUTHORIZATION_FAILED": (FAIL, "refused by authorization"),
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": (FAIL, "refused by authorization"),
    "UNSUPPORTED_VERSION": (FAIL, "protocol version refused: request not processed"),
    "UNSUPPORTED_FOR_MESSAGE_FORMAT": (FAIL, "refused before the append"),
    "POLICY_VIOLATION": (FAIL, "refused by a broker policy"),
    "INVALID_CONFIG": (FAIL, "refused: invalid configuration"),
    "INVALID_REPLICATION_FACTOR": (FAIL, "topic creation refused"),
    "INVALID_PARTITIONS": (FAIL, "topic creation refused"),
    "OFFSET_OUT_OF_RANGE": (FAIL, "a fetch/seek outside the log: nothing read"),
    # checked before the append, but the producer retries: an earlier attempt may have
    # been appended and then timed out waiting for replicas (see _PURGE_QUEUE)
    "NOT_ENOUGH_REPLICAS": (INFO, "ISR too small for this attempt; an earlier attempt may have been appended"),
    "DUPLICATE_SEQUENCE_NUMBER": (INFO, "the broker already has this batch: it was written earlier"),
    # --- the write may or may not be in the log ---------------------------------------
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": (INFO, "appended to the leader, then too few replicas acked"),
    # Kafka calls code 6 NOT_LEADER_OR_FOLLOWER; librdkafka still names it NOT_LEADER_FOR_PARTITION
    "NOT_LEADER_FOR_PARTITION": (INFO, "leadership moved; an earlier attempt may have been appended"),
    "LEADER_NOT_AVAILABLE": (INFO, "leader election in progress; retries may have been appended"),
    "OUT_OF_ORDER_SEQUENCE_NUMBER": (INFO, "idempotence sequence gap: earlier batches' fate unknown"),
    "UNKNOWN_PRODUCER_ID": (INFO, "producer state lost on the broker; earlier batches' fate unknown"),
    "INVALID_PRODUCER_EPOCH": (INFO, "producer was bumped/fenced mid-flight"),
    "PRODUCER_FENCED": (INFO, "fatal: another producer took the transactional id"),
    "REQUEST_TIMED_OUT": (INFO, "the broker timed out waiting for replication: may be appended"),
    "NETWORK_EXCEPTION": (INFO, "connection lost with the request in flight"),
    "KAFKA_STORAGE_ERROR": (INFO, "log dir failure on the broker mid-append"),
    "REPLICA_NOT_AVAILABLE": (INFO, "replica missing; retried attempts' fate unknown"),
    "UNKNOWN_LEADER_EPOCH": (INFO, "metadata race during leadership change"),
    "FENCED_LEADER_EPOCH": (INFO, "metadata race during leadership change"),
    "BROKER_NOT_AVAILABLE": (INFO, "broker went away with requests possibly in flight"),
    "THROTTLING_QUOTA_EXCEEDED": (INFO, "throttled; retried attempts' fate unknown"),
    # --- transactions (mostly decided by the coordinator, which we cannot see) -------
    "TRANSACTION_ABORTABLE": (INFO, "the txn must abort; whether the abort lands is separate"),
    "CONCURRENT_TRANSACTIONS": (INFO, "coordinator still completing an earlier txn"),
    "COORDINATOR_NOT_AVAILABLE": (INFO, "commit may have been logged before the coordinator moved"),
    "NOT_COORDINATOR": (INFO, "coordinator moved during the commit"),
    "COORDINATOR_LOAD_IN_PROGRESS": (INFO, "coordinator loading: the commit's fate is unknown"),
    "INVALID_TXN_STATE": (INFO, "producer/coordinator disagree about the txn state"),
    "TRANSACTION_COORDINATOR_FENCED": (INFO, "coordinator fenced mid-commit"),
    "INVALID_PRODUCER_ID_MAPPING": (INFO, "coordinator lost the producer id mapping"),
    "UNSTABLE_OFFSET_COMMIT": (INFO, "pending txn offsets: commit outcome not yet known"),
    # --- consumer group errors: a poll/commit that did not complete -------------------
    "REBALANCE_IN_PROGRESS": (INFO, "group rebalancing: offset commit outcome unknown"),
    "ILLEGAL_GENERATION": (INFO, "group generation changed under us"),
    "UNKNOWN_MEMBER_ID": (INFO, "removed from the group"),
    "FENCED_INSTANCE_ID": (INFO, "static member fenced"),
    # --- librdkafka local errors -------------------------------------------------------
    "_MSG_TIMED_OUT": (INFO, "message.timeout.ms expired; may have been sent (see the persisted override)"),
    "_TIMED_OUT": (INFO, "the call timed out; the request may have been processed"),
    "_TIMED_OUT_QUEUE": (INFO, "timed out in a queue; fate unknown"),
    "_TRANSPORT": (INFO, "broker connection failed with requests possibly in flight"),
    "_ALL_BROKERS_DOWN": (INFO, "no broker reachable; earlier in-flight requests' fate unknown"),
    "_FATAL": (INFO, "fatal producer error: the client is unusable, in-flight fate unknown"),
    "_FENCED": (INFO, "producer fenced: in-flight fate unknown"),
    "_PURGE_INFLIGHT": (INFO, "purged while in flight: may have been written"),
    # A message back in the local queue for a retry (after an attempt that timed out
    # in flight) is purged with this code too, and that earlier attempt may have been
    # written: a logtrial run read such a value back. Definite only when the
    # persistence status says NOT_PERSISTED, which confluent-kafka does not expose.
    "_PURGE_QUEUE": (INFO, "purged from the local queue; an earlier attempt may have been written"),
    "_QUEUE_FULL": (FAIL, "local queue full: produce() refused the message"),
    "_UNKNOWN_TOPIC": (FAIL, "topic unknown to the client: produce() refused"),
    "_UNKNOWN_PARTITION": (FAIL, "partition unknown to the client: produce() refused"),
    "_INVALID_ARG": (FAIL, "the call was refused locally"),
    "_STATE": (FAIL, "the client refused the call in its current state"),
    "_PREV_IN_PROGRESS": (FAIL, "refused: an earlier txn call is still in progress"),
    "_CONFLICT": (FAIL, "refused locally: conflicting call"),
    "_DESTROY": (INFO, "client closed with work possibly in flight"),
    "_PARTIAL": (INFO, "partial result"),
    "_UNKNOWN_GROUP": (INFO, "group coordinator unknown: commit fate unknown"),
    "_WAIT_COORD": (INFO, "waiting for coordinator: commit fate unknown"),
    "_NO_OFFSET": (FAIL, "no committed offset: nothing read"),
    "_ASSIGNMENT_LOST": (INFO, "assignment lost: commit fate unknown"),
    "_MAX_POLL_EXCEEDED": (INFO, "left the group for being too slow: commit fate unknown"),
}

# Outcomes the harness decides itself; same shape, names that are not KafkaError codes.
HARNESS_OUTCOMES: dict[str, tuple[Outcome, str]] = {
    "ABORTED": (FAIL, "abort_transaction() succeeded: nothing in the txn is visible"),
    "ABORTED_ON_PURPOSE": (FAIL, "--abort-p aborted the txn and the abort succeeded"),
    "OP_TIMEOUT": (INFO, "the harness gave up waiting: fate unknown"),
    "CLIENT_CRASH": (INFO, "the client raised something unexpected: fate unknown"),
}


@dataclass(frozen=True)
class Classified:
    outcome: Outcome
    name: str
    message: str

    @property
    def error(self) -> list[str]:
        return [self.name, self.message]


def error_name(error: KafkaError | KafkaException | BaseException) -> str:
    kafka_error = _kafka_error(error)
    if kafka_error is not None:
        return kafka_error.name()
    return type(error).__name__


def classify(error: KafkaError | KafkaException | BaseException, persistence: str | None = None,
             definite: bool = False) -> Classified:
    """Classifies an error.

    `persistence`: the message's librdkafka persistence status when the caller
    knows it: a message that was NOT_PERSISTED failed definitely, whatever the
    error (e.g. _MSG_TIMED_OUT while still in the local queue).
    `definite`: the caller knows the request never left the client (e.g.
    produce() itself raised), which makes any error definite.
    """
    kafka_error = _kafka_error(error)
    name = error_name(error)
    message = kafka_error.str() if kafka_error is not None else str(error)
    if definite or persistence == NOT_PERSISTED:
        return Classified(FAIL, name, message)
    outcome, _why = ERROR_TABLE.get(name, (INFO, "not in the table: assume it may have happened"))
    if kafka_error is not None and kafka_error.fatal():
        outcome = INFO
    return Classified(outcome, name, message)


def classify_by_class(table: dict[str, tuple[Outcome, str]], error: BaseException,
                      definite: bool = False) -> Classified:
    """The verdict of a Python client's table (keyed by the exception class's name)
    on one exception; `definite`: the caller knows the request never left the client."""
    name = type(error).__name__
    if definite:
        return Classified(FAIL, name, str(error))
    outcome, _why = table.get(name, (INFO, "not in the table: assume it may have happened"))
    return Classified(outcome, name, str(error))


def harness_error(name: str, message: str) -> Classified:
    """An outcome the harness decides itself (ABORTED_ON_PURPOSE, OP_TIMEOUT, ...)."""
    return Classified(HARNESS_OUTCOMES[name][0], name, message)


def _kafka_error(error: object) -> KafkaError | None:
    if isinstance(error, KafkaError):
        return error
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return error.args[0]
    return None
