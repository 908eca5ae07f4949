"""The packet fault's userspace holder: delays, reorders, duplicates and corrupts the
packets an NFQUEUE rule hands it, on a node whose kernel has no netem.

It runs ON THE NODE (uploaded and started over SSH as a daemon under a pid file), so it
is one file with the standard library only: raw nfnetlink over a netlink socket, no
binding to install on every machine. Python >= 3.8.

Per packet: with probability `reorder` it is released at once (so it overtakes the held
ones, as netem's reorder), otherwise held `delay` +- `jitter` ms; when released it may be
sent twice (`duplicate`: a copy through a raw socket, marked so our rule lets it pass)
or with one bit flipped past the IP header (`corrupt`: the receiver's checksum drops it,
as a bit error on the wire would). On SIGTERM every held packet is released (ACCEPT)
before exiting; if the holder dies anyway, `--queue-bypass` on the rule lets traffic
flow and the kernel drops only what was held.
"""
from __future__ import annotations

import argparse
import heapq
import os
import random
import select
import signal
import socket
import struct
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR, NLMSG_DONE = 2, 3
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 3, 4, 5
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_PACKET = 2
NFQA_CFG_F_FAIL_OPEN = 1  # a full queue accepts rather than drops
NFQA_PACKET_HDR, NFQA_VERDICT_HDR, NFQA_PAYLOAD = 1, 2, 10
NF_ACCEPT = 1
SOL_NETLINK, NETLINK_NO_ENOBUFS = 270, 5
SO_MARK = 36
QUEUE_MAXLEN = 4096


def attr(kind: int, data: bytes) -> bytes:
    length = 4 + len(data)
    return struct.pack("=HH", length, kind) + data + b"\0" * (-length % 4)


def message(msg_type: int, flags: int, queue: int, attrs: bytes, seq: int = 0) -> bytes:
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    kind = (NFNL_SUBSYS_QUEUE << 8) | msg_type
    return struct.pack("=IHHII", 16 + len(body), kind, flags, seq, 0) + body


def parse_attrs(data: bytes) -> dict[int, bytes]:
    found, offset = {}, 0
    while offset + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, offset)
        if length < 4:
            break
        found[kind & 0x3FFF] = data[offset + 4:offset + length]
        offset += (length + 3) & ~3
    return found


def messages(buffer: bytes):
    """(type, payload after nlmsghdr) for each netlink message in a datagram."""
    offset = 0
    while offset + 16 <= len(buffer):
        length, kind = struct.unpack_from("=IH", buffer, offset)
        if length < 16:
            break
        yield kind, buffer[offset + 16:offset + length]
        offset += (length + 3) & ~3


class Queue:
    """One bound NFQUEUE: receive packets, send verdicts."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
        self.sock.bind((0, 0))
        self.config(attr(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, 0)))
        self.config(attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0xFFFF, NFQNL_COPY_PACKET))
                    + attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", QUEUE_MAXLEN))
                    + attr(NFQA_CFG_MASK, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN))
                    + attr(NFQA_CFG_FLAGS, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)))

    def config(self, attrs: bytes) -> None:
        self.sock.send(message(NFQNL_MSG_CONFIG, NLM_F_REQUEST | NLM_F_ACK, self.number, attrs, 1))
        for kind, payload in messages(self.sock.recv(65536)):
            if kind == NLMSG_ERROR:
                (error,) = struct.unpack_from("=i", payload)
                if error:
                    raise OSError(-error, f"nfqueue {self.number} config: {os.strerror(-error)}")

    def receive(self) -> list[tuple[int, bytes]]:
        """(packet id, payload) of every packet in the next datagram."""
        packets = []
        for kind, payload in messages(self.sock.recv(1 << 17)):
            if kind != (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                continue
            attrs = parse_attrs(payload[4:])  # past nfgenmsg
            (packet_id,) = struct.unpack_from("!I", attrs[NFQA_PACKET_HDR])
            packets.append((packet_id, attrs.get(NFQA_PAYLOAD, b"")))
        return packets

    def accept(self, packet_id: int, payload: bytes | None = None) -> None:
        attrs = attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id))
        if payload is not None:  # replaces the packet's bytes (corruption)
            attrs += attr(NFQA_PAYLOAD, payload)
        self.sock.send(message(NFQNL_MSG_VERDICT, NLM_F_REQUEST, self.number, attrs))

    def close(self) -> None:
        # closing unbinds; the heal removes our rule first, so nothing new is queued
        self.sock.close()


def flip_one_bit(packet: bytes, rng: random.Random) -> bytes:
    """The packet with one bit flipped past its IPv4 header (so it is still routed)."""
    start = (packet[0] & 0x0F) * 4
    if len(packet) <= start:
        return packet
    at = rng.randrange(start, len(packet))
    return packet[:at] + bytes([packet[at] ^ (1 << rng.randrange(8))]) + packet[at + 1:]


class Holder:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random()
        self.queue = Queue(args.queue)
        self.held: list[tuple[float, int, bytes]] = []  # (release at, id, payload)
        self.raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.raw.setsockopt(socket.SOL_SOCKET, SO_MARK, args.mark)
        self.stopping = False

    def chance(self, percent: float) -> bool:
        return percent > 0 and self.rng.random() * 100 < percent

    def hold_for(self) -> float:
        if self.chance(self.args.reorder):
            return 0.0
        jitter = self.rng.uniform(-self.args.jitter_ms, self.args.jitter_ms)
        return max(0.0, self.args.delay_ms + jitter) / 1000

    def release(self, packet_id: int, payload: bytes) -> None:
        corrupt = self.chance(self.args.corrupt) and payload
        self.queue.accept(packet_id, flip_one_bit(payload, self.rng) if corrupt else None)
        if self.chance(self.args.duplicate) and len(payload) >= 20:
            destination = socket.inet_ntoa(payload[16:20])
            try:
                self.raw.sendto(payload, (destination, 0))
            except OSError:
                pass  # a lost duplicate is still no duplicate: nothing to report

    def release_due(self, now: float) -> None:
        while self.held and self.held[0][0] <= now:
            _, packet_id, payload = heapq.heappop(self.held)
            self.release(packet_id, payload)

    def run(self) -> None:
        while not self.stopping:
            now = time.monotonic()
            self.release_due(now)
            wait = min(0.5, self.held[0][0] - now) if self.held else 0.5
            ready, _, _ = select.select([self.queue.sock], [], [], max(0.0, wait))
            if not ready:
                continue
            try:
                packets = self.queue.receive()
            except OSError:
                continue  # ENOBUFS and the like: the kernel fails open (queue flags)
            for packet_id, payload in packets:
                heapq.heappush(self.held, (time.monotonic() + self.hold_for(), packet_id,
                                           payload))
            self.release_due(time.monotonic())
        self.drain()

    def drain(self) -> None:
        """Releases every held packet now: stopping must never drop traffic."""
        while self.held:
            _, packet_id, payload = heapq.heappop(self.held)
            self.queue.accept(packet_id)
        self.queue.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queue", type=int, required=True)
    parser.add_argument("--mark", type=lambda s: int(s, 0), required=True,
                        help="firewall mark of duplicates (our rule lets them pass)")
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    for percent in ("reorder", "duplicate", "corrupt"):
        parser.add_argument(f"--{percent}", type=float, default=0.0, help="percent")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    holder = Holder(parse_args(argv))

    def stop(signum, frame) -> None:
        holder.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"holding queue {holder.args.queue}: {vars(holder.args)}", flush=True)
    holder.run()
    print("released every held packet; exiting", flush=True)


if __name__ == "__main__":
    main()
