"""kafkajs's errors, definite (`fail`) or indefinite (`info`): the same rules as
workloads/errors.py (librdkafka's) and the other clients' tables, keyed by the name the
Node program sends (src/errors.js): Kafka's error type as kafkajs 2.2.4 spells it
(src/protocol/error.js: NOT_LEADER_FOR_PARTITION, GROUP_COORDINATOR_NOT_AVAILABLE), or
kafkajs's own error class (src/errors.js: KafkaJSRequestTimeoutError, ...). kafkajs
wraps what its retrier gives up on: a non-retriable error is named by its cause, and
KafkaJSNumberOfRetriesExceeded by itself, whatever its last attempt said.

Anything not in the table is indefinite. Where the program already knows better (an
abort that succeeded; a commit whose outcome is unknown) it says so, and the table is
not asked (`how`, workloads/bridge/outcome.py)."""
from __future__ import annotations

from workloads.bridge.outcome import classify_reply
from workloads.errors import ERROR_TABLE, FAIL, INFO, Classified, Outcome

# Kafka's protocol errors that librdkafka names as kafkajs does: the same verdict and
# reason as librdkafka's table (workloads/errors.py), not written twice
SHARED_WITH_LIBRDKAFKA: tuple[str, ...] = (
    "OFFSET_OUT_OF_RANGE", "LEADER_NOT_AVAILABLE", "NOT_LEADER_FOR_PARTITION", "REQUEST_TIMED_OUT",
    "BROKER_NOT_AVAILABLE", "REPLICA_NOT_AVAILABLE", "NETWORK_EXCEPTION", "RECORD_LIST_TOO_LARGE",
    "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "INVALID_REQUIRED_ACKS", "ILLEGAL_GENERATION",
    "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS", "TOPIC_AUTHORIZATION_FAILED", "GROUP_AUTHORIZATION_FAILED",
    "CLUSTER_AUTHORIZATION_FAILED", "INVALID_TIMESTAMP", "UNSUPPORTED_VERSION", "INVALID_PARTITIONS",
    "INVALID_REPLICATION_FACTOR", "INVALID_CONFIG", "UNSUPPORTED_FOR_MESSAGE_FORMAT", "POLICY_VIOLATION",
    "OUT_OF_ORDER_SEQUENCE_NUMBER", "DUPLICATE_SEQUENCE_NUMBER", "INVALID_PRODUCER_EPOCH", "INVALID_TXN_STATE",
    "INVALID_PRODUCER_ID_MAPPING", "CONCURRENT_TRANSACTIONS", "TRANSACTION_COORDINATOR_FENCED",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "KAFKA_STORAGE_ERROR", "UNKNOWN_PRODUCER_ID",
    "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH", "FENCED_INSTANCE_ID", "INVALID_RECORD",
    "UNSTABLE_OFFSET_COMMIT",
)

# kafkajs's names for errors librdkafka names otherwise (Kafka renamed codes 14-16 and
# 3, 10, 2): librdkafka's verdict and reason, under kafkajs's name
RENAMED_FROM_LIBRDKAFKA: dict[str, str] = {
    "GROUP_LOAD_IN_PROGRESS": "COORDINATOR_LOAD_IN_PROGRESS",
    "GROUP_COORDINATOR_NOT_AVAILABLE": "COORDINATOR_NOT_AVAILABLE",
    "NOT_COORDINATOR_FOR_GROUP": "NOT_COORDINATOR",
    "UNKNOWN_TOPIC_OR_PARTITION": "UNKNOWN_TOPIC_OR_PART",
    "MESSAGE_TOO_LARGE": "MSG_SIZE_TOO_LARGE",
    "CORRUPT_MESSAGE": "INVALID_MSG",
}

# Kafka's errors for requests the queue workload never makes with kafkajs (admin,
# SASL, delegation tokens, group membership): a refusal, nothing written
REFUSED_REQUESTS: tuple[str, ...] = (
    "INVALID_FETCH_SIZE", "STALE_CONTROLLER_EPOCH", "INCONSISTENT_GROUP_PROTOCOL", "INVALID_GROUP_ID",
    "INVALID_SESSION_TIMEOUT", "UNSUPPORTED_SASL_MECHANISM", "ILLEGAL_SASL_STATE", "TOPIC_ALREADY_EXISTS",
    "INVALID_REPLICA_ASSIGNMENT", "NOT_CONTROLLER", "SECURITY_DISABLED", "LOG_DIR_NOT_FOUND",
    "SASL_AUTHENTICATION_FAILED", "REASSIGNMENT_IN_PROGRESS", "DELEGATION_TOKEN_AUTH_DISABLED",
    "DELEGATION_TOKEN_NOT_FOUND", "DELEGATION_TOKEN_OWNER_MISMATCH", "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
    "DELEGATION_TOKEN_AUTHORIZATION_FAILED", "DELEGATION_TOKEN_EXPIRED", "INVALID_PRINCIPAL_TYPE",
    "NON_EMPTY_GROUP", "TOPIC_DELETION_DISABLED", "STALE_BROKER_EPOCH", "MEMBER_ID_REQUIRED",
    "PREFERRED_LEADER_NOT_AVAILABLE", "GROUP_MAX_SIZE_REACHED", "ELIGIBLE_LEADERS_NOT_AVAILABLE",
    "ELECTION_NOT_NEEDED", "NO_REASSIGNMENT_IN_PROGRESS", "GROUP_SUBSCRIBED_TO_TOPIC",
    "KafkaJSDeleteGroupsError", "KafkaJSDeleteTopicRecordsError", "KafkaJSCreateTopicError",
    "KafkaJSAlterPartitionReassignmentsError", "KafkaJSSASLAuthenticationError", "KafkaJSMemberIdRequired",
    "KafkaJSStaleTopicMetadataAssignment", "KafkaJSFetcherRebalanceError",
)

KAFKAJS_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    **{name: ERROR_TABLE[name] for name in SHARED_WITH_LIBRDKAFKA},
    **{name: ERROR_TABLE[theirs] for name, theirs in RENAMED_FROM_LIBRDKAFKA.items()},
    **{name: (FAIL, "a request the queue workload does not make with kafkajs: refused") for name in REFUSED_REQUESTS},
    # --- broker errors: the request was refused before anything was written ---------
    "INVALID_TOPIC_EXCEPTION": (FAIL, "the topic name is invalid: refused before any append"),
    "UNSUPPORTED_COMPRESSION_TYPE": (FAIL, "refused before the append"),
    "INVALID_REQUEST": (FAIL, "the broker could not parse the request: not processed"),
    "INVALID_TRANSACTION_TIMEOUT": (FAIL, "InitProducerId refused: no producer id, nothing sent"),
    "OFFSET_METADATA_TOO_LARGE": (FAIL, "the offset commit was refused"),
    "INVALID_COMMIT_OFFSET_SIZE": (FAIL, "the offset commit was refused"),
    "OFFSET_NOT_AVAILABLE": (FAIL, "a ListOffsets the leader could not answer yet: nothing read"),
    "LISTENER_NOT_FOUND": (FAIL, "metadata named no listener for a broker: nothing sent to it"),
    "FETCH_SESSION_ID_NOT_FOUND": (FAIL, "a fetch refused: nothing read"),
    "INVALID_FETCH_SESSION_EPOCH": (FAIL, "a fetch refused: nothing read"),
    "GROUP_ID_NOT_FOUND": (INFO, "the group's state vanished: offset commit outcome unknown"),
    # --- the write may or may not be in the log ---------------------------------------
    "UNKNOWN": (INFO, "the broker failed unexpectedly: the request may have been processed"),
    # a code kafkajs 2.2.4 does not know (PRODUCER_FENCED, TRANSACTION_ABORTABLE, ... came later)
    "KAFKAJS_UNKNOWN_ERROR_CODE": (INFO, "an error code kafkajs does not know: assume it may have happened"),
    # OPERATION_NOT_ATTEMPTED answers a request the broker did not attempt
    "OPERATION_NOT_ATTEMPTED": (FAIL, "the broker did not attempt the request"),
    # --- kafkajs's own errors -----------------------------------------------------------
    # its retrier gave up on retriable errors: any earlier attempt may have been written
    "KafkaJSNumberOfRetriesExceeded": (INFO, "retries ran out; an earlier attempt may have been written"),
    "KafkaJSRequestTimeoutError": (INFO, "no response in time; the request may have been processed"),
    "KafkaJSConnectionError": (INFO, "connection failed with requests possibly in flight"),
    "KafkaJSConnectionClosedError": (INFO, "connection closed with requests possibly in flight"),
    # thrown before any request of the call is sent (metadata, broker and coordinator
    # lookups; a state guard or bad argument without a cause)
    "KafkaJSMetadataNotLoaded": (FAIL, "no metadata for the topic: nothing was sent"),
    "KafkaJSTopicMetadataNotLoaded": (FAIL, "no metadata for the topic: nothing was sent"),
    "KafkaJSBrokerNotFound": (FAIL, "the broker is not in the metadata: nothing was sent to it"),
    "KafkaJSGroupCoordinatorNotFound": (FAIL, "no coordinator found: nothing was sent to it"),
    "KafkaJSNoBrokerAvailableError": (FAIL, "no broker reachable: nothing was sent"),
    "KafkaJSServerDoesNotSupportApiKey": (FAIL, "the broker offers no version of the request: not sent"),
    "KafkaJSNotImplemented": (FAIL, "kafkajs does not implement it: not sent"),
    "KafkaJSNonRetriableError": (FAIL, "refused by kafkajs itself (its transaction state machine): not sent"),
    # the broker lock waits before a produce; a retry may follow an attempt that was sent
    "KafkaJSLockTimeout": (INFO, "the broker lock timed out; an earlier attempt may have been written"),
    "KafkaJSTimeout": (INFO, "kafkajs stopped waiting; what it waited for may still happen"),
    # a response that could not be decoded was a response: the request was processed
    "KafkaJSPartialMessageError": (INFO, "the response could not be decoded; the request was processed"),
    "KafkaJSUnsupportedMagicByteInMessageSet": (INFO, "the response could not be decoded"),
    "KafkaJSInvalidVarIntError": (INFO, "the response could not be decoded"),
    "KafkaJSInvalidLongError": (INFO, "the response could not be decoded"),
    "KafkaJSInvariantViolation": (INFO, "kafkajs found a bug in itself mid-request"),
    "KafkaJSAggregateError": (INFO, "several errors at once; some requests may have been processed"),
    # the base class, as kafkajs throws it for a producer that disconnected meanwhile
    # (before sending) and an invalid partition in metadata: unsure which, so indefinite
    "KafkaJSError": (INFO, "a generic kafkajs error: assume it may have happened"),
    # --- the program's own ------------------------------------------------------------
    "ErrNotAssigned": (FAIL, "a poll before any assign: nothing was read"),
    "UnsupportedOperation": (FAIL, "the program refused the call: nothing was sent"),
    "UnknownCommand": (FAIL, "the program refused the call: nothing was sent"),
    "NoOffset": (INFO, "acknowledged without an offset: it was written, where is unknown"),
}


def classify_kafkajs(name: str, message: str, how: str) -> Classified:
    """The verdict on one error the kafkajs program reported with `how`."""
    return classify_reply(KAFKAJS_ERROR_TABLE, name, message, how)
