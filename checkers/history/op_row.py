"""One paired operation (its invoke and its completion) as both readers give it:
the columns of a row, in order. The in-process reader adds the events' lines."""

# as Spark pairs them (checkers/history/spark_read.pair_operations)
OP_COLUMNS = ("process", "f", "invoke_index", "invoke_time", "complete_index", "complete_time",
              "type", "invoke_value", "complete_value", "error_name", "error_message",
              "idempotent", "transactional", "starts", "rebalance_log")
# as the in-process reader does (checkers/history/read.py): the same, and where the events are
ROW_COLUMNS = OP_COLUMNS + ("invoke_line", "complete_line")
