"""kafka-python's errors, definite (`fail`) or indefinite (`info`): the same rules
as workloads/errors.py (librdkafka's) and workloads/java_client/errors.py, keyed by
the name of the exception class kafka-python raised (kafka/errors.py of the pinned
version, and the few it defines elsewhere). The name goes into the history's
`error` field.

Anything not in the table is indefinite. Where the caller knows better (send()
itself raised, so the record never left the client) it says so with `definite`;
a commit or an abort decides its own outcome (clients.py, Transaction)."""
from __future__ import annotations

from workloads.errors import FAIL, INFO, Classified, Outcome, classify_by_class

KAFKA_PYTHON_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    # --- broker errors: the request was refused before anything was written ---------
    # (topics are created before first use and never deleted during a run, as
    # librdkafka's table says)
    "UnknownTopicOrPartitionError": (FAIL, "the broker has no such partition: nothing was appended"),
    "InvalidTopicError": (FAIL, "the topic name is invalid: refused before any append"),
    "MessageSizeTooLargeError": (FAIL, "rejected by size check before the append"),
    "RecordListTooLargeError": (FAIL, "rejected by size check before the append"),
    "CorruptRecordError": (FAIL, "CRC/validation failure: the batch was rejected"),
    "InvalidRecordError": (FAIL, "record failed broker validation: the batch was rejected"),
    "InvalidRequiredAcksError": (FAIL, "bad acks setting: request refused"),
    "InvalidTimestampError": (FAIL, "rejected by timestamp validation"),
    "AuthorizationError": (FAIL, "refused by authorization"),
    "TopicAuthorizationFailedError": (FAIL, "refused by authorization"),
    "ClusterAuthorizationFailedError": (FAIL, "refused by authorization"),
    "GroupAuthorizationFailedError": (FAIL, "refused by authorization"),
    "TransactionalIdAuthorizationFailedError": (FAIL, "refused by authorization"),
    "UnsupportedVersionError": (FAIL, "protocol version refused: request not processed"),
    "IncompatibleBrokerVersion": (FAIL, "the client refused the call for the broker's version"),
    "UnsupportedForMessageFormatError": (FAIL, "refused before the append"),
    "PolicyViolationError": (FAIL, "refused by a broker policy"),
    "InvalidConfigurationError": (FAIL, "refused: invalid configuration"),
    "OffsetOutOfRangeError": (FAIL, "a fetch/seek outside the log: nothing read"),
    "NoOffsetForPartitionError": (FAIL, "no committed offset and no reset policy: nothing read"),
    "LogTruncationError": (FAIL, "the fetch found the log truncated below the position: nothing read"),
    "RecordTooLargeError": (FAIL, "a fetched record is larger than the fetch size: nothing read"),
    # --- refused by the client itself ---------------------------------------------------
    "KafkaConfigurationError": (FAIL, "the client refused its configuration: nothing was sent"),
    "IllegalArgumentError": (FAIL, "the call was refused locally"),
    "IllegalStateError": (FAIL, "the client refused the call in its current state"),
    "UnsupportedCodecError": (FAIL, "no codec for the compression: the batch was never built"),
    # batches still in the accumulator when the transaction aborted (KIP-654): never sent
    "TransactionAbortedError": (FAIL, "an undrained batch of an aborted transaction: never sent"),
    # checked before the append, but the producer retries: an earlier attempt may have
    # been appended and then timed out waiting for replicas (as librdkafka's table)
    "NotEnoughReplicasError": (INFO, "ISR too small for this attempt; an earlier attempt may have been appended"),
    "DuplicateSequenceNumberError": (INFO, "the broker already has this batch: it was written earlier"),
    # --- the write may or may not be in the log ---------------------------------------
    # delivery_timeout_ms expired, or max_block_ms in a call that had sent requests
    "KafkaTimeoutError": (INFO, "a request or the delivery timeout expired; it may have been processed"),
    "NotEnoughReplicasAfterAppendError": (INFO, "appended to the leader, then too few replicas acked"),
    # Kafka calls code 6 NOT_LEADER_OR_FOLLOWER; kafka-python names it as librdkafka does
    "NotLeaderForPartitionError": (INFO, "leadership moved; an earlier attempt may have been appended"),
    "LeaderNotAvailableError": (INFO, "leader election in progress; retries may have been appended"),
    # kafka-python bumps the epoch after these (KIP-360) and fails the batches in flight
    "OutOfOrderSequenceNumberError": (INFO, "idempotence sequence gap: earlier batches' fate unknown"),
    "UnknownProducerIdError": (INFO, "producer state lost on the broker; earlier batches' fate unknown"),
    "InvalidProducerEpochError": (INFO, "producer was bumped/fenced mid-flight"),
    "ProducerFencedError": (INFO, "fatal: another producer took the transactional id"),
    "RequestTimedOutError": (INFO, "the broker timed out waiting for replication: may be appended"),
    "NetworkExceptionError": (INFO, "connection lost with the request in flight"),
    "KafkaConnectionError": (INFO, "connection lost with the request in flight"),
    "Cancelled": (INFO, "the request was cancelled in flight (connection closed)"),
    "NodeNotReadyError": (INFO, "broker not ready; earlier attempts' fate unknown"),
    "TooManyInFlightRequests": (INFO, "connection busy; earlier attempts' fate unknown"),
    "KafkaProtocolError": (INFO, "the answer could not be read: the request may have been processed"),
    "CorrelationIdError": (INFO, "an answer to another request: this one's fate unknown"),
    "InvalidReceiveError": (INFO, "a malformed answer: the request may have been processed"),
    "StaleMetadata": (INFO, "metadata race during leadership change"),
    "MetadataEmptyBrokerList": (INFO, "no broker known; earlier in-flight requests' fate unknown"),
    "KafkaStorageError": (INFO, "log dir failure on the broker mid-append"),
    "ReplicaNotAvailableError": (INFO, "replica missing; retried attempts' fate unknown"),
    "UnknownLeaderEpochError": (INFO, "metadata race during leadership change"),
    "FencedLeaderEpochError": (INFO, "metadata race during leadership change"),
    "BrokerNotAvailableError": (INFO, "broker went away with requests possibly in flight"),
    "ThrottlingQuotaExceededError": (INFO, "throttled; retried attempts' fate unknown"),
    "UnknownError": (INFO, "an unexpected server error: fate unknown"),
    "UnrecognizedBrokerError": (INFO, "an error code this client does not know: fate unknown"),
    # --- transactions (mostly decided by the coordinator, which we cannot see) -------
    "TransactionAbortableError": (INFO, "the txn must abort; whether the abort lands is separate"),
    "ConcurrentTransactionsError": (INFO, "coordinator still completing an earlier txn"),
    "CoordinatorNotAvailableError": (INFO, "commit may have been logged before the coordinator moved"),
    "NotCoordinatorError": (INFO, "coordinator moved during the commit"),
    "CoordinatorLoadInProgressError": (INFO, "coordinator loading: the commit's fate is unknown"),
    "InvalidTxnStateError": (INFO, "producer/coordinator disagree about the txn state"),
    "TransactionCoordinatorFencedError": (INFO, "coordinator fenced mid-commit"),
    "InvalidProducerIdMappingError": (INFO, "coordinator lost the producer id mapping"),
    "UnstableOffsetCommitError": (INFO, "pending txn offsets: commit outcome not yet known"),
    "OperationNotAttemptedError": (INFO, "a partition not added to the txn because others failed: txn fate unknown"),
    # the client's catch-all: an error state ("at least one previous transactional or
    # idempotent request has failed"), or an answer it does not know how to read
    "KafkaError": (INFO, "a client error without a more precise type: fate unknown"),
    # --- consumer group errors: a poll/commit that did not complete -------------------
    "RebalanceInProgressError": (INFO, "group rebalancing: offset commit outcome unknown"),
    "CommitFailedError": (INFO, "the group moved on: offset commit outcome unknown"),
    "IllegalGenerationError": (INFO, "group generation changed under us"),
    "UnknownMemberIdError": (INFO, "removed from the group"),
    "FencedInstanceIdError": (INFO, "static member fenced"),
    "UnjoinedGroupException": (INFO, "not (or no longer) in the group: commit fate unknown"),
}


def classify_kafka_python(error: BaseException, definite: bool = False) -> Classified:
    """The verdict on one exception kafka-python raised (or a future failed with)."""
    return classify_by_class(KAFKA_PYTHON_ERROR_TABLE, error, definite)
