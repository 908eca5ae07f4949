"""Kafka's own Java client (org.apache.kafka:kafka-clients) behind the workloads'
client seam: a small Java server (src/logtrial/) compiled against the cluster's
kafka-clients jar, one JVM per network namespace, driven over a pipe (jvm.py)."""
