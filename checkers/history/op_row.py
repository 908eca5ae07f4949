"""One paired operation (its invoke and its completion) as both readers give it:
the columns of a row, in order, and the parts of a row that come from its
events' optional fields. The in-process reader adds the events' lines."""
from __future__ import annotations

import json

# as Spark pairs them (checkers/history/spark_read.pair_operations)
OP_COLUMNS = ("process", "f", "invoke_index", "invoke_time", "complete_index", "complete_time",
              "type", "invoke_value", "complete_value", "error_name", "error_message",
              "idempotent", "transactional", "starts", "rebalance_log")
# as the in-process reader does (checkers/history/read.py): the same, and where the events are
ROW_COLUMNS = OP_COLUMNS + ("invoke_line", "complete_line")


def error_parts(error) -> tuple[str | None, str | None]:
    """(error_name, error_message) of a completion's `error` field."""
    if error is None:
        return None, None
    if isinstance(error, list) and error:
        return str(error[0]), (str(error[1]) if len(error) > 1 else None)
    return str(error) if isinstance(error, str) else json.dumps(error), None


def producer_flags(p) -> tuple:
    """(idempotent, transactional) of an event's `producer` field (None: absent)."""
    if isinstance(p, str):
        try:
            p = json.loads(p)
        except json.JSONDecodeError:
            p = None
    if not isinstance(p, dict):
        return None, None
    return p.get("idempotent"), p.get("transactional")
