"""Where librdkafka's own log goes. Without a `logger` in its config, librdkafka writes
its log lines to the process's stderr itself, each with its own timestamp; Python's
logging never sees them (a `logger` would get them only when poll() serves them, late by
up to a blocking call's timeout, which would blur the order of events the log is for)."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def stderr_appended_to(path: str) -> Iterator[None]:
    """While inside, file descriptor 2 (librdkafka's log, and anything else written to
    stderr) is appended to `path`; restored after."""
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)
