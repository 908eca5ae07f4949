"""The late-batch round's clock, shared by the clients' steps and the command line
(kept apart so that `logtrial probe --help` loads no client)."""

OP_TIMEOUT = 10.0  # how long A waits for its delivery report before it is aborted
HOLD_FACTOR = 1.5  # the leader holds what clients send it this many op timeouts
RELEASE_AFTER_S = 1.0  # B's AddPartitionsToTxn reaches the coordinator in this time
# when librdkafka's round lifts the hold, counted from A's send: A's wait, then B's release
LIBRDKAFKA_LIFT_S = OP_TIMEOUT + RELEASE_AFTER_S
