"""Sarama's errors, definite (`fail`) or indefinite (`info`): the same rules as
workloads/errors.py (librdkafka's), keyed by the name the Go program sends
(src/sarama_errors.go): Kafka's error code name (kafka_errors.py's verdicts, shared
with franz-go, less those Sarama's retries change), or the name of Sarama's own
sentinel error (ErrOutOfBrokers, ErrTxnOffsetCommit, ...), or a Go type
(sarama.ConfigurationError). Read from Sarama v1.61.1's errors.go, async_producer.go,
transaction_manager.go and consumer.go.

Anything not in the table is indefinite. Where the program already knows better (an
abort that succeeded; a commit whose outcome is unknown) it says so, and the table is
not asked (`how`, workloads/bridge/outcome.py)."""
from __future__ import annotations

from workloads.bridge.outcome import classify_reply
from workloads.errors import FAIL, INFO, Classified, Outcome
from workloads.go_clients.kafka_errors import GO_ERRORS, KAFKA_ERRORS

RETRIED = "Sarama's producer retries it (async_producer.go, handleSuccess): it reaches a record only when " \
          "retries ran out, and an earlier attempt (one that timed out, say) may have been written"

SARAMA_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    **KAFKA_ERRORS,
    **GO_ERRORS,
    # --- broker errors the producer retries: only the last attempt's error is returned ---
    "CORRUPT_MESSAGE": (INFO, RETRIED),  # Sarama's ErrInvalidMessage
    "UNKNOWN_TOPIC_OR_PARTITION": (INFO, RETRIED),
    "LEADER_NOT_AVAILABLE": (INFO, RETRIED),
    "NOT_LEADER_FOR_PARTITION": (INFO, RETRIED),
    "REQUEST_TIMED_OUT": (INFO, RETRIED),
    "NOT_ENOUGH_REPLICAS": (INFO, RETRIED),
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": (INFO, RETRIED),
    "KAFKA_STORAGE_ERROR": (INFO, RETRIED),
    # --- transactions ---------------------------------------------------------------
    # AddPartitionsToTxn's answer for the other partitions of a request that failed: the
    # transaction turns abortable and its records are never sent
    "OPERATION_NOT_ATTEMPTED": (FAIL, "the coordinator did not add the partition: its records were not sent"),
    # --- Sarama's own errors: the client gave up -------------------------------------------
    # no broker answered metadata or a coordinator lookup: a produce retried this far may
    # have been written by an earlier attempt
    "ErrOutOfBrokers": (INFO, "no broker reachable; an earlier attempt may have been written"),
    "ErrBrokerNotFound": (INFO, "the broker left the metadata; an earlier attempt may have been written"),
    "ErrClosedClient": (INFO, "the client closed with requests possibly in flight"),
    "ErrNotConnected": (INFO, "the connection was gone; an earlier attempt may have been written"),
    "ErrAlreadyConnected": (INFO, "a connection race in the client: requests possibly in flight"),
    # a response Sarama could not read: the broker processed the request
    "ErrIncompleteResponse": (INFO, "the broker's response lacked the partition: the request was processed"),
    "ErrInsufficientData": (INFO, "a truncated response: the request may have been processed"),
    "sarama.PacketDecodingError": (INFO, "a response Sarama could not decode: the request was processed"),
    # the request never left: refused while being encoded or queued
    "sarama.PacketEncodingError": (FAIL, "the request could not be encoded: it was never sent"),
    "sarama.ConfigurationError": (FAIL, "Sarama refused its configuration: nothing was sent"),
    "ErrInvalidPartition": (FAIL, "refused by the partitioner before sending"),
    "ErrShuttingDown": (INFO, "the producer shut down with the record possibly in flight (retries)"),
    "ErrProducerRetryBufferOverflow": (INFO, "a retry was dropped: an earlier attempt may have been written"),
    # the consumer's: a poll or fetch that returned nothing
    "ErrMessageTooLarge": (FAIL, "a fetched record beyond Consumer.Fetch.Max: nothing was read"),
    "ErrDecompressedBatchTooLarge": (FAIL, "a fetched batch too large to decompress: nothing was read"),
    "ErrConsumerOffsetNotAdvanced": (FAIL, "a fetch that did not advance: nothing was read"),
    "ErrConsumerRetriesExhausted": (FAIL, "the partition's consumer gave up: nothing more was read"),
    "ErrClosedConsumerGroup": (FAIL, "the consumer group was closed: nothing was read"),
    "ErrUnknownMessage": (INFO, "a response of an unknown kind: the request may have been processed"),
    # --- the transaction manager's own -----------------------------------------------------
    # its retries of AddPartitionsToTxn / TxnOffsetCommit ran out: neither commits
    # anything, and the records of the transaction are aborted with it
    "ErrAddPartitionsToTxn": (FAIL, "the partitions were not added to the transaction: nothing committed"),
    "ErrTxnOffsetCommit": (INFO, "the offsets' commit failed after retries; the transaction's end is separate"),
    # a call refused in the wrong state: nothing sent for it
    "ErrTransactionNotReady": (FAIL, "the transaction manager was not ready: the call sent nothing"),
    "ErrNonTransactedProducer": (FAIL, "a transaction call on a plain producer: nothing sent"),
    "ErrTransitionNotAllowed": (FAIL, "the transaction manager refused the state change: nothing sent"),
    "ErrCannotTransitionNilError": (FAIL, "the transaction manager refused the state change: nothing sent"),
    "ErrTxnUnableToParseResponse": (INFO, "a transaction response Sarama could not read: it was processed"),
    # an error the program could not name: may have happened
    "sarama.Error": (INFO, "an error without a type: assume it may have happened"),
}

# Sarama's sentinels that the program never meets: they belong to calls it does not
# make (admin, SASL, the controller), so they have no verdict
NOT_RAISED: dict[str, str] = {
    "ErrControllerNotAvailable": "admin requests to the controller",
    "ErrNoTopicsToUpdateMetadata": "Metadata.Full is left on",
    "ErrUnknownScramMechanism": "SCRAM credentials (admin)",
    "ErrReassignPartitions": "partition reassignment (admin)",
    "ErrDeleteRecords": "DeleteRecords (admin)",
    "ErrCreateACLs": "CreateACLs (admin)",
    "ErrSessionPartitionCountChanged": "consumer groups (the program assigns)",
    "ErrSessionConsumeClaimExited": "consumer groups (the program assigns)",
    "ErrSessionHeartbeatFailed": "consumer groups (the program assigns)",
    "ErrRebalanceTimedOut": "consumer groups (the program assigns)",
}


def classify_sarama(name: str, message: str, how: str) -> Classified:
    """The verdict on one error the Sarama side of the program reported with `how`."""
    return classify_reply(SARAMA_ERROR_TABLE, name, message, how)
