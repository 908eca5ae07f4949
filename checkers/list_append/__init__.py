"""The list-append checker: Elle's analysis, in-process (checker) or on Spark
(spark), per key (keys) and per transaction (txn)."""
