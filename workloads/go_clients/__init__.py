"""franz-go (github.com/twmb/franz-go, its kgo client) behind the workloads' client
seam: a small Go program (src/, pinned by its go.mod and go.sum) built on first use
into the cache (build.py), one process per network namespace, driven over a pipe by
the bridge the Java client shares (workloads/bridge/)."""
