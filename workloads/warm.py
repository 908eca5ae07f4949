"""A client's warm-up before the run's clock (harness/client_open.py): what its first
ops would otherwise make lazily (its clients, their first connections and metadata,
the group's coordinator) made at open, so no op in the history pays for it. Each
client's `warm(keys)` (workloads/base.py, Client) is built from these."""
from __future__ import annotations

from typing import Any, Callable

from workloads.base import ClientOpenError
from workloads.clients import ClientPair, Indefinite, ProcessClient, guarded


def opened(warm: Callable[[], Any]) -> None:
    """Runs a warm-up; a classified failure becomes ClientOpenError, raised outside the
    except block (workloads/clients.py, "Calls into librdkafka ...")."""
    try:
        warm()
        return
    except Indefinite as e:
        failure = f"{e.classified.name}: {e.classified.message}"
    raise ClientOpenError(failure)


def warm_pair(pair: ClientPair, topics: list[str]) -> None:
    """librdkafka's producer (init_transactions when transactional) and consumer made, each
    fetching the topics' metadata: librdkafka connects only when first asked."""
    for client in (pair.producer, pair.consumer):
        for topic in topics:
            guarded(lambda: client.list_topics(topic, pair.settings.op_timeout))


def warm_process_client(client: ProcessClient, keys: list[int]) -> None:
    """A librdkafka client's pair made and connected for the first keys' topics."""
    opened(lambda: warm_pair(client.pair, sorted({client.w.keys.topic(k) for k in keys})))
