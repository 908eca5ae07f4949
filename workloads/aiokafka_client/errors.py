"""aiokafka's errors, definite (`fail`) or indefinite (`info`): the same rules as
workloads/errors.py (librdkafka's) and kafka-python's table, keyed by the name of
the exception class aiokafka raised (aiokafka/errors.py of the pinned version:
every class there but NoError, which is never raised). The name goes into the
history's `error` field.

aiokafka was forked from kafka-python and kept most of its class names: where
both name an error alike, the verdict is kafka-python's (not written twice);
where aiokafka names a Kafka protocol error its own way (ProducerFenced,
OutOfOrderSequenceNumber, ...), it is librdkafka's for that error code. The rest
are aiokafka's own, each with its reason.

Anything not in the table is indefinite. Where the caller knows better (send()
itself raised, so the record never left the client) it says so with `definite`;
a commit or an abort decides its own outcome (clients.py, Transaction)."""
from __future__ import annotations

import functools

from workloads.errors import ERROR_TABLE, FAIL, INFO, Outcome, classify_by_class
from workloads.kafka_python.errors import KAFKA_PYTHON_ERROR_TABLE

SHARED_WITH_KAFKA_PYTHON: tuple[str, ...] = (
    "BrokerNotAvailableError", "Cancelled", "ClusterAuthorizationFailedError", "CommitFailedError",
    "CoordinatorLoadInProgressError", "CoordinatorNotAvailableError", "CorrelationIdError",
    "GroupAuthorizationFailedError", "IllegalArgumentError", "IllegalGenerationError", "IllegalStateError",
    "IncompatibleBrokerVersion", "InvalidConfigurationError", "InvalidRequiredAcksError", "InvalidTimestampError",
    "InvalidTopicError", "KafkaConfigurationError", "KafkaConnectionError", "KafkaError", "KafkaProtocolError",
    "KafkaStorageError", "KafkaTimeoutError", "LeaderNotAvailableError", "MessageSizeTooLargeError",
    "MetadataEmptyBrokerList", "NoOffsetForPartitionError", "NodeNotReadyError", "NotCoordinatorError",
    "NotEnoughReplicasAfterAppendError", "NotEnoughReplicasError", "NotLeaderForPartitionError",
    "OffsetOutOfRangeError", "PolicyViolationError", "RebalanceInProgressError", "RecordListTooLargeError",
    "RecordTooLargeError", "ReplicaNotAvailableError", "RequestTimedOutError", "StaleMetadata",
    "TooManyInFlightRequests", "TopicAuthorizationFailedError", "UnknownError", "UnknownMemberIdError",
    "UnknownTopicOrPartitionError", "UnsupportedCodecError", "UnsupportedForMessageFormatError",
    "UnsupportedVersionError",
)
# aiokafka's class -> the Kafka error code it stands for, as librdkafka's table names it
SHARED_WITH_LIBRDKAFKA: dict[str, str] = {
    "ConcurrentTransactions": "CONCURRENT_TRANSACTIONS",
    "DuplicateSequenceNumber": "DUPLICATE_SEQUENCE_NUMBER",
    "GroupCoordinatorNotAvailableError": "COORDINATOR_NOT_AVAILABLE",
    "GroupLoadInProgressError": "COORDINATOR_LOAD_IN_PROGRESS",
    "InvalidPartitionsError": "INVALID_PARTITIONS",
    "InvalidProducerEpoch": "INVALID_PRODUCER_EPOCH",
    "InvalidProducerIdMapping": "INVALID_PRODUCER_ID_MAPPING",
    "InvalidReplicationFactorError": "INVALID_REPLICATION_FACTOR",
    "InvalidTxnState": "INVALID_TXN_STATE",
    "NotCoordinatorForGroupError": "NOT_COORDINATOR",
    "OutOfOrderSequenceNumber": "OUT_OF_ORDER_SEQUENCE_NUMBER",
    "TransactionCoordinatorFenced": "TRANSACTION_COORDINATOR_FENCED",
    "TransactionalIdAuthorizationFailed": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    "UnknownProducerId": "UNKNOWN_PRODUCER_ID",
}
# errors of requests the producer and consumer never send: refused before any effect
ADMIN_ERRORS: tuple[str, ...] = (
    "InvalidReplicationAssignmentError", "TopicAlreadyExistsError", "ReassignmentInProgress", "NotControllerError",
    "NonEmptyGroup", "LogDirNotFound", "SecurityDisabled", "InvalidPrincipalType", "DelegationTokenAuthDisabled",
    "DelegationTokenAuthorizationFailed", "DelegationTokenExpired", "DelegationTokenNotFound",
    "DelegationTokenOwnerMismatch", "DelegationTokenRequestNotAllowed",
)
# the connection was refused at authentication, before any request
AUTH_ERRORS: tuple[str, ...] = (
    "AuthenticationFailedError", "AuthenticationMethodNotSupported", "SaslAuthenticationFailed",
    "IllegalSaslStateError", "UnsupportedSaslMechanismError",
)

AIOKAFKA_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    **{name: KAFKA_PYTHON_ERROR_TABLE[name] for name in SHARED_WITH_KAFKA_PYTHON},
    **{name: ERROR_TABLE[code] for name, code in SHARED_WITH_LIBRDKAFKA.items()},
    **{name: (FAIL, "an admin or inter-broker request's error: never sent by this client") for name in ADMIN_ERRORS},
    **{name: (FAIL, "refused at authentication, before any request") for name in AUTH_ERRORS},
    # --- broker errors: the request was refused before anything was written ---------
    "CorruptRecordException": (FAIL, "CRC/validation failure: the batch was rejected (or a fetched one unread)"),
    "InvalidMessageError": (FAIL, "CRC/validation failure: the batch was rejected"),
    "InvalidRequestError": (FAIL, "the broker could not read the request: not processed"),
    "InvalidTransactionTimeout": (FAIL, "InitProducerId refused the transaction timeout: no producer id"),
    "InvalidCommitOffsetSizeError": (FAIL, "the offset commit was refused"),
    "OffsetMetadataTooLargeError": (FAIL, "the offset commit was refused"),
    "InvalidFetchRequestError": (FAIL, "the fetch was refused: nothing read"),
    "FetchSessionIdNotFound": (FAIL, "the fetch was refused: nothing read"),
    "InvalidFetchSessionEpoch": (FAIL, "the fetch was refused: nothing read"),
    "InvalidGroupIdError": (FAIL, "the group request was refused"),
    "InvalidSessionTimeoutError": (FAIL, "JoinGroup refused the session timeout: not joined"),
    "InconsistentGroupProtocolError": (FAIL, "JoinGroup refused: not joined"),
    "ListenerNotFound": (FAIL, "the broker has no such listener: nothing was sent to the leader"),
    # --- refused by the client itself ---------------------------------------------------
    "IllegalOperation": (FAIL, "refused locally (not in a transaction, no group id): nothing was sent"),
    "ProducerClosed": (FAIL, "the producer was closed: the record never reached a batch"),
    "ConsumerStoppedError": (FAIL, "the consumer was stopped: nothing was read"),
    "UnrecognizedBrokerVersion": (FAIL, "bootstrap could not tell the broker's version: nothing was sent"),
    # --- the write may or may not be in the log ---------------------------------------
    # the sender raises this after InvalidProducerEpoch (fencing, or an epoch bumped
    # behind its back); batches in flight before it may have been appended
    "ProducerFenced": (INFO, "fatal: fenced by a newer epoch of the transactional id; earlier batches' fate unknown"),
    "BrokerResponseError": (INFO, "a broker error code aiokafka has no class for: fate unknown"),
    "OperationNotAttempted": (INFO, "a partition not added to the txn because others failed: txn fate unknown"),
    "NoBrokersAvailable": (INFO, "no broker reachable; earlier in-flight requests' fate unknown"),
    "KafkaUnavailableError": (INFO, "no broker reachable; earlier in-flight requests' fate unknown"),
    "QuotaViolationError": (INFO, "throttled; retried attempts' fate unknown"),
    "StaleControllerEpochError": (INFO, "an inter-broker error code out of place: assume it may have happened"),
    "StaleLeaderEpochCodeError": (INFO, "metadata race during leadership change"),
    # --- consumer group errors: a poll/commit that did not complete -------------------
    "GroupIdNotFound": (INFO, "the group's state vanished: offset commit outcome unknown"),
    "MemberIdRequired": (INFO, "joining the group: offset commit outcome unknown"),
}


# the verdict on one exception aiokafka raised (or a future failed with); definite=True:
# the caller knows the request never left the client
classify_aiokafka = functools.partial(classify_by_class, AIOKAFKA_ERROR_TABLE)
