"""The Go clients behind the workloads' client seam: franz-go (github.com/twmb/franz-go,
its kgo client) and Sarama (github.com/IBM/sarama), each a side of one small Go program
(src/, pinned by its go.mod and go.sum; `-client` picks the side) built on first use into
the cache (build.py), one process per network namespace, driven over a pipe by the
bridge the Java client shares (workloads/bridge/). They share the program's
configuration (config.py) and Kafka's errors (kafka_errors.py); each has its own
error table (franz_go_errors.py, sarama_errors.py)."""
