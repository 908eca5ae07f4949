"""aiokafka (PyPI `aiokafka`, pinned in install.py), an asyncio client, behind the
workloads' client seam: installed on first use into the cache, outside the
harness's venv and apart from kafka-python's, and run in the worker processes,
each logical process on an event loop thread of its own (loop.py says why). One
module per concern: install.py (pin, install, import), config.py (settings -> its
keyword arguments, and what it cannot do), errors.py (its error table), loop.py
(the event loop thread), clients.py (its producer, consumer and transactions),
queue_client.py (the queue workload's ops), factory.py (the ClientKind's factory)."""
