"""franz-go's errors, definite (`fail`) or indefinite (`info`): the same rules as
workloads/errors.py (librdkafka's) and the Java client's table, keyed by the name the
Go program sends (src/franz_errors.go): Kafka's error code name as franz-go's kerr package
spells it (NOT_LEADER_FOR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION; their verdicts are
kafka_errors.py's, shared with Sarama), or kgo's own error (ErrRecordTimeout,
context.DeadlineExceeded, ...). The name goes into the history's `error` field.

Anything not in the table is indefinite. Where the program already knows better
(an abort that succeeded; a commit whose outcome is unknown) it says so, and the
table is not asked (`how`, workloads/bridge/outcome.py)."""
from __future__ import annotations

from workloads.bridge.outcome import classify_reply
from workloads.errors import FAIL, INFO, Classified, Outcome
from workloads.go_clients.kafka_errors import GO_ERRORS, KAFKA_ERRORS

FRANZ_GO_ERROR_TABLE: dict[str, tuple[Outcome, str]] = {
    **KAFKA_ERRORS,
    **GO_ERRORS,
    # --- transactions ---------------------------------------------------------------
    # an EndTxn commit that franz-go did not send (its producer id had failed): it
    # aborts instead, and the program reports that abort as definite itself
    "OPERATION_NOT_ATTEMPTED": (FAIL, "franz-go did not attempt the request"),
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
    # the program's own: franz-go's End aborted instead of committing (a failed
    # offset commit it deems abortable), and the abort succeeded
    "COMMIT_ABORTED": (FAIL, "franz-go aborted the transaction instead of committing"),
}


def classify_franz_go(name: str, message: str, how: str) -> Classified:
    """The verdict on one error the franz-go program reported with `how`."""
    return classify_reply(FRANZ_GO_ERROR_TABLE, name, message, how)
