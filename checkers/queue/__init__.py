"""The queue checker: Jepsen's Kafka analysis. One pass per bucket of keys
(bucket and the finders it calls), run in-process (local) or on Spark (spark),
assembled into results by checker; cycles for G0/G1c over the queue's edges."""
