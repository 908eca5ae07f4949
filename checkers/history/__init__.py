"""The history, end to end: writing it (writer), reading and validating it in
process (read, lines, errors, mop_rules, wellformed) or in Spark (spark_read,
spark_load), its Parquet companion (companion*), Jepsen/Elle EDN (edn), and the
tolerant stream the reports read (stream). The contract: docs/history-format.md."""
