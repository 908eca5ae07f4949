"""Dependency graphs of both workloads: the cycle search and its explanations
(cycles, search), process and realtime order edges (order_local, order_spark),
and the Spark shrink that keeps only what can hold a cycle (shrink_spark)."""
