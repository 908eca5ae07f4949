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
from workloads.errors import FAIL, INFO, Classified, Outcome

FRANZ_GO_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    # --- broker errors: the request was refused before anything was written ---------
    # (kgo retries the retryable ones itself; one that reaches a record is final)
    "UNKNOWN_TOPIC_OR_PARTITION": (FAIL, "the broker has no such partition: nothing was appended"),
    "INVALID_TOPIC_EXCEPTION": (FAIL, "the topic name is invalid: refused before any append"),
    "MESSAGE_TOO_LARGE": (FAIL, "rejected by size check before the append"),
    "RECORD_LIST_TOO_LARGE": (FAIL, "rejected by size check before the append"),
    "CORRUPT_MESSAGE": (FAIL, "CRC/validation failure: the batch was rejected"),
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
    "OFFSET_OUT_OF_RANGE": (FAIL, "a fetch/seek outside the log: nothing read"),
    # checked before the append, but kgo retries: an earlier attempt may have been
    # appended and then timed out waiting for replicas (as librdkafka's table)
    "NOT_ENOUGH_REPLICAS": (INFO, "ISR too small for this attempt; an earlier attempt may have been appended"),
    "DUPLICATE_SEQUENCE_NUMBER": (INFO, "the broker already has this batch: it was written earlier"),
    # --- the write may or may not be in the log ---------------------------------------
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": (INFO, "appended to the leader, then too few replicas acked"),
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
    "UNKNOWN_SERVER_ERROR": (INFO, "the broker failed unexpectedly: the request may have been processed"),
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
    # an EndTxn commit that franz-go did not send (its producer id had failed): it
    # aborts instead, and the program reports that abort as definite itself
    "OPERATION_NOT_ATTEMPTED": (FAIL, "franz-go did not attempt the request"),
    # --- consumer group errors: a poll/commit that did not complete -------------------
    "REBALANCE_IN_PROGRESS": (INFO, "group rebalancing: offset commit outcome unknown"),
    "ILLEGAL_GENERATION": (INFO, "group generation changed under us"),
    "UNKNOWN_MEMBER_ID": (INFO, "removed from the group"),
    "FENCED_INSTANCE_ID": (INFO, "static member fenced"),
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
