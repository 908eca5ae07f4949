"""Kafka's protocol errors, and Go's own, as the Go program names them (franz-go's kerr spelling, which
its Sarama side uses too: src/sarama_errors.go), each definite (`fail`) or indefinite
(`info`) with the reason: the verdicts both Go clients share. Each client's table adds
its own errors, and overrides a verdict where its retries change what an error means
(sarama_errors.py)."""
from __future__ import annotations

from workloads.errors import ERROR_TABLE, FAIL, INFO, Outcome

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
KAFKA_ERRORS: dict[str, tuple[Outcome, str]] = {
    **{name: ERROR_TABLE[name] for name in SHARED_WITH_LIBRDKAFKA},
    # --- broker errors: the request was refused before anything was written ---------
    # (as franz-go reports them; Sarama's table overrides those its producer retries)
    "UNKNOWN_TOPIC_OR_PARTITION": (FAIL, "the broker has no such partition: nothing was appended"),
    "INVALID_TOPIC_EXCEPTION": (FAIL, "the topic name is invalid: refused before any append"),
    "MESSAGE_TOO_LARGE": (FAIL, "rejected by size check before the append"),
    "CORRUPT_MESSAGE": (FAIL, "CRC/validation failure: the batch was rejected"),
    # --- the write may or may not be in the log ---------------------------------------
    "UNKNOWN_SERVER_ERROR": (INFO, "the broker failed unexpectedly: the request may have been processed"),
    # --- consumer group errors: a poll/commit that did not complete -------------------
    "STALE_MEMBER_EPOCH": (INFO, "group member epoch moved on: offset commit outcome unknown"),
    "GROUP_ID_NOT_FOUND": (INFO, "the group's state vanished: offset commit outcome unknown"),
}

# Go's own errors, which both clients' calls return alike
GO_ERRORS: dict[str, tuple[Outcome, str]] = {
    # a context the program gave up on: the request may still have been processed
    "context.DeadlineExceeded": (INFO, "the op's time ran out with the request possibly in flight"),
    "context.Canceled": (INFO, "the call was canceled with the request possibly in flight"),
    "net.OpError": (INFO, "connection failed with requests possibly in flight"),
    "io.EOF": (INFO, "connection closed with requests possibly in flight"),
    "io.ErrUnexpectedEOF": (INFO, "connection closed mid-response"),
    # the program's own: it refused the call
    "ErrNotAssigned": (FAIL, "a poll before any assign or subscribe: nothing was read"),
}
