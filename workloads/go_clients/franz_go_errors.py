"""franz-go's errors, definite (`fail`) or indefinite (`info`): the same rules as
workloads/errors.py (librdkafka's) and the Java client's table, keyed by the name the
Go program sends (src/errors.go): Kafka's error code name as franz-go's kerr package
spells it (NOT_LEADER_FOR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION), or kgo's own error
(ErrRecordTimeout, context.DeadlineExceeded, ...). The name goes into the history's
`error` field.

Anything not in the table is indefinite. Where the program already knows better
(an abort that succeeded; a commit whose outcome is unknown) it says so, and the
table is not asked (`how`, workloads/bridge/outcome.py)."""
from __future__ import annotations

from workloads.bridge.outcome import classify_reply
from workloads.errors import ERROR_TABLE, FAIL, INFO, Classified, Outcome

# Kafka's protocol errors that librdkafka names as franz-go's kerr does: the same
# verdict and reason as librdkafka's table (workloads/errors.py), not written twice
SHARED_WITH_LIBRDKAFKA: tuple[str, ...] = (
    "RECORD_LIST_TOO_LARGE", "INVALID_RECORD", "INVALID_REQUIRED_ACKS", "INVALID_TIMESTAMP",
    "TOPIC_AUTHORIZATION_FAILED", "CLUSTER_AUTHORIZATION_FAILED", "GROUP_AUTHORIZATION_FAILED",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "UNSUPPORTED_VERSION",
    "UNSUPPORTED_FOR_MESSAGE_FORMAT", "POLICY_VIOLATION", "INVALID_CONFIG", "OFFSET_OUT_OF_RANGE",
    "NOT_ENOUGH_REPLICAS", "DUPLICATE_SEQUENCE_NUMBER", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "NOT_LEADER_FOR_PARTITION", "LEADER_NOT_AVAILABLE", "OUT_OF_ORDER_SEQUENCE_NUMBER",
    "UNKNOWN_PRODUCER_ID", "INVALID_PRODUCER_EPOCH", "PRODUCER_FENCED", "REQUEST_TIMED_OUT",
    "NETWORK_EXCEPTION", "KAFKA_STORAGE_ERROR", "REPLICA_NOT_AVAILABLE", "UNKNOWN_LEADER_EPOCH",
    "FENCED_LEADER_EPOCH", "BROKER_NOT_AVAILABLE", "THROTTLING_QUOTA_EXCEEDED",
    "TRANSACTION_ABORTABLE", "CONCURRENT_TRANSACTIONS", "COORDINATOR_NOT_AVAILABLE",
    "NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "INVALID_TXN_STATE",
    "TRANSACTION_COORDINATOR_FENCED", "INVALID_PRODUCER_ID_MAPPING", "UNSTABLE_OFFSET_COMMIT",
    "REBALANCE_IN_PROGRESS", "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID",
)
FRANZ_GO_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    **{name: ERROR_TABLE[name] for name in SHARED_WITH_LIBRDKAFKA},
    # --- broker errors: the request was refused before anything was written ---------
    # (kgo retries the retryable ones itself; one that reaches a record is final)
    "UNKNOWN_TOPIC_OR_PARTITION": (FAIL, "the broker has no such partition: nothing was appended"),
    "INVALID_TOPIC_EXCEPTION": (FAIL, "the topic name is invalid: refused before any append"),
    "MESSAGE_TOO_LARGE": (FAIL, "rejected by size check before the append"),
    "CORRUPT_MESSAGE": (FAIL, "CRC/validation failure: the batch was rejected"),
    # --- the write may or may not be in the log ---------------------------------------
    "UNKNOWN_SERVER_ERROR": (INFO, "the broker failed unexpectedly: the request may have been processed"),
    # --- transactions ---------------------------------------------------------------
    # an EndTxn commit that franz-go did not send (its producer id had failed): it
    # aborts instead, and the program reports that abort as definite itself
    "OPERATION_NOT_ATTEMPTED": (FAIL, "franz-go did not attempt the request"),
    # --- consumer group errors: a poll/commit that did not complete -------------------
    "STALE_MEMBER_EPOCH": (INFO, "group member epoch moved on: offset commit outcome unknown"),
    "GROUP_ID_NOT_FOUND": (INFO, "the group's state vanished: offset commit outcome unknown"),
    # --- kgo's own errors ---------------------------------------------------------------
    # RecordDeliveryTimeout expired: the record may have been sent and written, and kgo
    # cannot fail a record whose request is in flight without risking a duplicate
    "ErrRecordTimeout": (INFO, "the delivery timeout expired; an attempt may have been written"),
    "ErrRecordRetries": (INFO, "retries ran out; an earlier attempt may have been written"),
    # refused when buffering: the record never left the client
    "ErrMaxBuffered": (FAIL, "the producer's buffer was full: the record was refused"),
    # AbortBufferedRecords fails records only at safe points: none of them was in flight
    "ErrAborting": (FAIL, "failed by an abort before it was sent"),
    "ErrClientClosed": (INFO, "the client closed with requests possibly in flight"),
    "ErrFirstReadEOF": (INFO, "the connection closed as the first response was read"),
    # a context the program gave up on: the request may still have been processed
    "context.DeadlineExceeded": (INFO, "the op's time ran out with the request possibly in flight"),
    "context.Canceled": (INFO, "the call was canceled with the request possibly in flight"),
    "net.OpError": (INFO, "connection failed with requests possibly in flight"),
    "io.EOF": (INFO, "connection closed with requests possibly in flight"),
    "io.ErrUnexpectedEOF": (INFO, "connection closed mid-response"),
    # the program's own: franz-go's End aborted instead of committing (a failed
    # offset commit it deems abortable), and the abort succeeded
    "COMMIT_ABORTED": (FAIL, "franz-go aborted the transaction instead of committing"),
    # the program's own: it refused the call
    "ErrNotAssigned": (FAIL, "a poll before any assign or subscribe: nothing was read"),
}


def classify_franz_go(name: str, message: str, how: str) -> Classified:
    """The verdict on one error the franz-go program reported with `how`."""
    return classify_reply(FRANZ_GO_ERROR_TABLE, name, message, how)
