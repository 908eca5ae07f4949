"""The Python side of the clients that run in a child process (workloads/java_client/,
workloads/go_clients/): the process spoken to in JSON lines (process.py), one
per network namespace (pool.py), the queue workload's client on top (queue_client.py)
and the verdict on an error the child reported (outcome.py). A client brings only its
command line, its configuration builders and its error table."""
