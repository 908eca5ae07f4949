"""Exit codes shared by every logtrial command (documented in the README)."""

VALID = 0  # the history was checked and is valid
INVALID = 1  # the checker found a forbidden anomaly
UNKNOWN = 2  # the checker could not decide (e.g. incomplete history)
BAD_INPUT = 3  # unreadable/malformed history, inventory or options
HARNESS_ERROR = 4  # the harness itself failed (cluster, SSH, crash)
INTERRUPTED = 130  # Ctrl-C; the run directory is kept and marked incomplete
