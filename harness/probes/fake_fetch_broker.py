"""A one-topic Kafka broker on loopback that answers every Fetch as tansu 0.6.0 does
after its storage failed a topic-id lookup: UNKNOWN_TOPIC_OR_PARTITION, an all-zero
topic id, a CurrentLeader hint (leader 0, epoch 0) and an empty NodeEndpoints.

It speaks just enough of the protocol for a librdkafka consumer that assigns a
partition: ApiVersions (v3), Metadata (v12) and Fetch (v16). It is the reproduction for
librdkafka's maintainers, with no tansu and no PostgreSQL (docs/findings.md, "A crash
of the client process"): `logtrial probe fetch-answer`.
"""
from __future__ import annotations

import contextlib
import socket
import struct
import threading
import uuid

PRODUCE, API_VERSIONS, METADATA, FETCH = 0, 18, 3, 1
# Produce is offered, never served: librdkafka enables message format v2, which its Fetch
# needs, only for a broker that takes Produce v3 and Fetch v4
SUPPORTED = {PRODUCE: (3, 9), API_VERSIONS: (0, 3), METADATA: (12, 12), FETCH: (16, 16)}
NODE_ID = 1
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_ID = uuid.UUID("6f9b1c2e-4a8d-4b7e-9c3f-2d5e8a1b7c40").bytes


# -- the encoding of flexible versions -------------------------------------------------
def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def compact_string(text: str | None) -> bytes:
    if text is None:
        return uvarint(0)
    raw = text.encode()
    return uvarint(len(raw) + 1) + raw


def compact_array(items: list[bytes]) -> bytes:
    return uvarint(len(items) + 1) + b"".join(items)


def tagged(fields: dict[int, bytes] | None = None) -> bytes:
    fields = fields or {}
    return uvarint(len(fields)) + b"".join(uvarint(tag) + uvarint(len(v)) + v for tag, v in sorted(fields.items()))


def int32s(values: list[int]) -> bytes:
    return compact_array([struct.pack(">i", v) for v in values])


# -- reading a request header -----------------------------------------------------------
def request_header(data: bytes) -> tuple[int, int, int]:
    """(api key, version, correlation id)."""
    return struct.unpack(">hhi", data[:8])


# -- the answers -----------------------------------------------------------------------
def api_versions(version: int) -> bytes:
    keys = [struct.pack(">hhh", key, low, high) + (tagged() if version >= 3 else b"")
            for key, (low, high) in SUPPORTED.items()]
    if version >= 3:
        return struct.pack(">h", 0) + compact_array(keys) + struct.pack(">i", 0) + tagged()
    return struct.pack(">hi", 0, len(keys)) + b"".join(keys) + (struct.pack(">i", 0) if version >= 1 else b"")


def metadata(host: str, port: int, topic: str) -> bytes:
    broker = struct.pack(">i", NODE_ID) + compact_string(host) + struct.pack(">i", port) + compact_string(None) + tagged()
    partition = (struct.pack(">hiii", 0, 0, NODE_ID, 0) + int32s([NODE_ID]) + int32s([NODE_ID]) + int32s([])
                 + tagged())
    topic_entry = (struct.pack(">h", 0) + compact_string(topic) + TOPIC_ID + b"\x00" + compact_array([partition])
                   + struct.pack(">i", -2147483648) + tagged())
    return (struct.pack(">i", 0) + compact_array([broker]) + compact_string("fake") + struct.pack(">i", NODE_ID)
            + compact_array([topic_entry]) + tagged())


# How the fake broker answers a Fetch: tansu's answer, and the two that each lack one
# of its ingredients (a control for each: neither should crash a client)
TANSU, ECHOED_ID, NO_HINT = "tansu", "echoed-id", "no-hint"
ANSWERS = (TANSU, ECHOED_ID, NO_HINT)


def fetch_answer(answer: str = TANSU) -> bytes:
    """tansu-storage 0.6.0's `unknown_topic_response` (service/fetch.rs) in what matters:
    error 3, an all-zero topic id, CurrentLeader (tag 1) 0/0 and NodeEndpoints (tag 0) [].
    ECHOED_ID gives the topic's own id instead; NO_HINT leaves CurrentLeader out."""
    hint = {} if answer == NO_HINT else {1: struct.pack(">ii", 0, 0) + tagged()}
    partition = (struct.pack(">ihqqq", 0, UNKNOWN_TOPIC_OR_PARTITION, 0, 0, -1) + compact_array([])
                 + struct.pack(">i", -1) + uvarint(1) + tagged(hint))  # records: empty
    topic_id = TOPIC_ID if answer == ECHOED_ID else bytes(16)
    topic = topic_id + compact_array([partition]) + tagged()
    return struct.pack(">ihi", 0, 0, 0) + compact_array([topic]) + tagged({0: compact_array([])})


class FakeFetchBroker:
    """Listens on 127.0.0.1 (a free port) until closed; one thread per connection.
    Every Fetch is answered as `answer` says (TANSU, ECHOED_ID or NO_HINT)."""

    def __init__(self, topic: str, answer: str = TANSU) -> None:
        self.topic, self.answer = topic, answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.host, self.port = self.server.getsockname()
        self.fetches = 0
        threading.Thread(target=self._accept, daemon=True, name="fake-broker").start()

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # a client that dies or hangs up ends it
            while (request := _read_frame(conn)) is not None:
                key, version, correlation = request_header(request)
                answer = self._answer(key, version)
                if answer is None:
                    return  # a request this broker does not serve: the client sees a closed connection
                conn.sendall(_frame(correlation, key, answer))

    def _answer(self, key: int, version: int) -> bytes | None:
        if key == API_VERSIONS:
            return api_versions(version)
        if key == METADATA:
            return metadata(self.host, self.port, self.topic)
        if key == FETCH:
            self.fetches += 1
            return fetch_answer(self.answer)
        return None


def _frame(correlation: int, key: int, body: bytes) -> bytes:
    # ApiVersions answers with header v0 whatever its version; the others here are flexible (v1)
    header = struct.pack(">i", correlation) + (b"" if key == API_VERSIONS else tagged())
    return struct.pack(">i", len(header) + len(body)) + header + body


def _read_frame(conn: socket.socket) -> bytes | None:
    size = _read_exactly(conn, 4)
    return None if size is None else _read_exactly(conn, struct.unpack(">i", size)[0])


def _read_exactly(conn: socket.socket, n: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = conn.recv(n - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)
