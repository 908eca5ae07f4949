"""Where librdkafka's own log lines go. A client built without a `logger` writes them to
stderr (`%3|...|FAIL|rdkafka#producer-38| ... Connection refused`), between the progress
lines whenever a broker dies; every client of logtrial's is given one of these."""
from __future__ import annotations

import logging
import os

# the run's clients: into logtrial.log (the runner's handler on the root logger)
LIBRDKAFKA_LOG = logging.getLogger("librdkafka")
# outside a run (a check after it, test-all between cells) there is no handler: without
# this one, logging's last resort would print the lines on the terminal after all
LIBRDKAFKA_LOG.addHandler(logging.NullHandler())


class _QuietLogger(logging.Logger):
    """librdkafka reports every refused connection; during start-up and heals those are expected."""

    def __init__(self) -> None:
        super().__init__("logtrial.kafka.client", level=logging.CRITICAL)


QUIET_CLIENT_LOGGER = _QuietLogger()


# librdkafka's own debug contexts for every client of a run (`broker,metadata`,
# `msg,eos`, `all`), into logtrial.log: what a crash or a lost write is explained from
DEBUG_ENV = "LOGTRIAL_LIBRDKAFKA_DEBUG"


def librdkafka_logging() -> dict:
    """The logging part of every librdkafka client's configuration."""
    contexts = os.environ.get(DEBUG_ENV, "").strip()
    if contexts:
        LIBRDKAFKA_LOG.setLevel(logging.DEBUG)  # the run's log is at INFO otherwise
    return {"logger": LIBRDKAFKA_LOG, **({"debug": contexts} if contexts else {})}
