"""logtrial: workloads."""
