"""The Java client's errors, definite (`fail`) or indefinite (`info`): the same
rules as workloads/errors.py (which has librdkafka's), keyed by the simple name
of the exception kafka-clients raised (an ExecutionException's cause). The name
goes into the history's `error` field.

Anything not in the table is indefinite. Where the server already knows better
(a send() that threw never left the client; an abort that succeeded; a commit
whose outcome is unknown) it says so, and the table is not asked
(src/logtrial/OpError.java, `how`)."""
from __future__ import annotations

from workloads.bridge.outcome import classify_reply
from workloads.errors import FAIL, INFO, Classified, Outcome

JAVA_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    # --- broker errors: the request was refused before anything was written ---------
    "UnknownTopicOrPartitionException": (FAIL, "the broker has no such partition: nothing was appended"),
    "InvalidTopicException": (FAIL, "the topic name is invalid: refused before any append"),
    "RecordTooLargeException": (FAIL, "rejected by size check before the append"),
    "RecordBatchTooLargeException": (FAIL, "rejected by size check before the append"),
    "CorruptRecordException": (FAIL, "CRC/validation failure: the batch was rejected"),
    "InvalidRecordException": (FAIL, "record failed broker validation: the batch was rejected"),
    "InvalidRequiredAcksException": (FAIL, "bad acks setting: request refused"),
    "InvalidTimestampException": (FAIL, "rejected by timestamp validation"),
    "TopicAuthorizationException": (FAIL, "refused by authorization"),
    "ClusterAuthorizationException": (FAIL, "refused by authorization"),
    "GroupAuthorizationException": (FAIL, "refused by authorization"),
    "TransactionalIdAuthorizationException": (FAIL, "refused by authorization"),
    "PolicyViolationException": (FAIL, "refused by a broker policy"),
    "InvalidConfigurationException": (FAIL, "refused: invalid configuration"),
    "OffsetOutOfRangeException": (FAIL, "a fetch/seek outside the log: nothing read"),
    "NoOffsetForPartitionException": (FAIL, "no committed offset and no reset policy: nothing read"),
    "SerializationException": (FAIL, "the record could not be serialized: it never left the client"),
    "IllegalStateException": (FAIL, "the client refused the call in its current state"),
    "IllegalArgumentException": (FAIL, "the call was refused locally"),
    "InterruptException": (FAIL, "the calling thread was interrupted before the request"),
    "BufferExhaustedException": (FAIL, "no room in the producer's buffer: send() refused the record"),
    # checked before the append, but the producer retries: an earlier attempt may have
    # been appended and then timed out waiting for replicas (as librdkafka's table)
    "NotEnoughReplicasException": (INFO, "ISR too small for this attempt; an earlier attempt may have been appended"),
    "DuplicateSequenceException": (INFO, "the broker already has this batch: it was written earlier"),
    # --- the write may or may not be in the log ---------------------------------------
    # delivery.timeout.ms expired or a request timed out: the batch may have been written
    "TimeoutException": (INFO, "a request or the delivery timeout expired; it may have been processed"),
    "NotEnoughReplicasAfterAppendException": (INFO, "appended to the leader, then too few replicas acked"),
    "NotLeaderOrFollowerException": (INFO, "leadership moved; an earlier attempt may have been appended"),
    "LeaderNotAvailableException": (INFO, "leader election in progress; retries may have been appended"),
    "OutOfOrderSequenceException": (INFO, "idempotence sequence gap: earlier batches' fate unknown"),
    "UnknownProducerIdException": (INFO, "producer state lost on the broker; earlier batches' fate unknown"),
    "InvalidProducerEpochException": (INFO, "producer was bumped/fenced mid-flight"),
    # fatal: another producer took the transactional id; what this one sent last is unknown
    "ProducerFencedException": (INFO, "fatal: another producer took the transactional id"),
    "NetworkException": (INFO, "connection lost with the request in flight"),
    "DisconnectException": (INFO, "connection lost with the request in flight"),
    "KafkaStorageException": (INFO, "log dir failure on the broker mid-append"),
    "ReplicaNotAvailableException": (INFO, "replica missing; retried attempts' fate unknown"),
    "UnknownLeaderEpochException": (INFO, "metadata race during leadership change"),
    "FencedLeaderEpochException": (INFO, "metadata race during leadership change"),
    "BrokerNotAvailableException": (INFO, "broker went away with requests possibly in flight"),
    "ThrottlingQuotaExceededException": (INFO, "throttled; retried attempts' fate unknown"),
    # --- transactions (mostly decided by the coordinator, which we cannot see) -------
    "TransactionAbortableException": (INFO, "the txn must abort; whether the abort lands is separate"),
    "ConcurrentTransactionsException": (INFO, "coordinator still completing an earlier txn"),
    "CoordinatorNotAvailableException": (INFO, "commit may have been logged before the coordinator moved"),
    "NotCoordinatorException": (INFO, "coordinator moved during the commit"),
    "CoordinatorLoadInProgressException": (INFO, "coordinator loading: the commit's fate is unknown"),
    "InvalidTxnStateException": (INFO, "producer/coordinator disagree about the txn state"),
    "TransactionCoordinatorFencedException": (INFO, "coordinator fenced mid-commit"),
    "InvalidPidMappingException": (INFO, "coordinator lost the producer id mapping"),
    "UnstableOffsetCommitException": (INFO, "pending txn offsets: commit outcome not yet known"),
    # the client's catch-all for a request whose answer it does not know how to read
    "KafkaException": (INFO, "a client error without a more precise type: fate unknown"),
    # --- consumer group errors: a poll/commit that did not complete -------------------
    "RebalanceInProgressException": (INFO, "group rebalancing: offset commit outcome unknown"),
    "CommitFailedException": (INFO, "the group moved on: offset commit outcome unknown"),
    "IllegalGenerationException": (INFO, "group generation changed under us"),
    "UnknownMemberIdException": (INFO, "removed from the group"),
    "FencedInstanceIdException": (INFO, "static member fenced"),
    "WakeupException": (INFO, "woken up mid-call: fate unknown"),
}


def classify_java(name: str, message: str, how: str) -> Classified:
    """The verdict on one error the Java server reported with `how` (OpError.java):
    "definite" and "indefinite" decide; "table" looks `name` up here, then among the
    harness's own outcomes (OP_TIMEOUT, CLIENT_CRASH); unknown names are indefinite."""
    return classify_reply(JAVA_ERROR_TABLE, name, message, how)
