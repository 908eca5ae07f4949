"""kafka-python (PyPI `kafka-python`, pinned in install.py) behind the workloads'
client seam: installed on first use into the cache, outside the harness's venv,
and run in the worker processes as librdkafka's clients are. One module per
concern: install.py (pin, install, import), config.py (settings -> its keyword
arguments), errors.py (its error table), clients.py (its producer, consumer and
transactions), queue_client.py (the queue workload's ops), factory.py (the
ClientKind's factory)."""
