"""The queue workload's client on a client in a child process: the same ops, values
and error shape as workloads/queue.py's QueueClient (docs/history-format.md), each op
one request to the process's session in the child (the Java server's Session.java,
the Go clients' program's session.go run it). Keys become topic-partitions here, and
back. What differs per client is its Dialect: how its configurations are written and
how its errors are judged."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from workloads.base import ClientOpenError, Completion, Op
from workloads.clients import Indefinite, ensure_topic
from workloads.errors import Classified, harness_error
from workloads.bridge.pool import ProcessPool
from workloads.bridge.process import BridgeGone
from workloads.settings import WorkloadSettings

# how long past the op timeout a reply may take: a txn awaits its sends, commits
# (retrying) and may abort, each bounded by the op timeout in the child
REPLY_OP_TIMEOUTS = 3
REPLY_SLACK_S = 10.0


@dataclass(frozen=True)
class Dialect:
    """One client's side of the protocol: the `open` request's configurations and the
    verdict on the errors it reports."""
    # (bootstrap, settings, client id, transactional id or None)
    producer_config: Callable[[str, WorkloadSettings, str, str | None], dict]
    # (bootstrap, settings, client id, group id, auto.offset.reset override or None)
    consumer_config: Callable[..., dict]
    lookup_config: Callable[[str, str, str], dict]  # (bootstrap, client id, group id)
    classify: Callable[[str, str, str], Classified]  # (name, message, how)


class BridgeQueueClient:
    dialect: Dialect  # each client's subclass names its own

    def __init__(self, workload, process: int, pool: ProcessPool, final: bool = False):
        self.w = workload
        self.process = process
        self.final = final  # final reads: assign from the beginning of each partition
        self.rng = workload.process_rng(process)
        self.child = pool.process()
        self.session = pool.new_session()
        s, d = workload.settings, self.dialect
        txn_id = f"{workload.run_id}-q-p{process}" if s.txn else None
        self._open(producer=d.producer_config(workload.bootstrap, s, f"lt-p{process}", txn_id),
                   consumer=d.consumer_config(workload.bootstrap, s, f"lt-c{process}", workload.group_id,
                                              "earliest" if final else None),
                   lookup=d.lookup_config(workload.bootstrap, f"lt-o{process}", workload.group_id),
                   auto_offset_reset=s.auto_offset_reset, op_timeout_ms=int(s.op_timeout * 1000))

    def _open(self, **args: Any) -> None:
        """Makes the session (no network yet); a child that is gone is reported by the first op."""
        try:
            self._request("open", **args)
        except (TimeoutError, BridgeGone):
            pass  # the session's first op finds out again and says so

    def warm(self, keys: list[int]) -> None:
        """Makes in the child what the first ops would make lazily (clients, connections,
        the first keys' metadata, the group's coordinator) before the run's clock starts
        (harness/client_open.py); raises ClientOpenError if the child cannot."""
        partitions = [[self.w.keys.topic(k), self.w.keys.partition(k)] for k in keys]
        try:
            reply = self._request("warm", partitions=partitions)
        except (TimeoutError, BridgeGone) as e:
            raise ClientOpenError(f"{self.child.name}: {e}") from None
        if "error" in reply:
            name, message = reply["error"]
            raise ClientOpenError(f"{self.child.name}: {name}: {message}")

    def _request(self, cmd: str, **args: Any) -> dict:
        timeout = self.w.settings.op_timeout * REPLY_OP_TIMEOUTS + REPLY_SLACK_S
        return self.child.call(self.session, cmd, timeout, **args)

    def invoke(self, op: Op) -> Completion:
        try:
            return getattr(self, "_" + op.f)(op)
        except Indefinite as e:
            return Completion.failed(e.classified, op.value)
        except TimeoutError as e:
            return Completion.failed(harness_error("OP_TIMEOUT", str(e)), op.value)
        except BridgeGone as e:
            return Completion.failed(harness_error("CLIENT_CRASH", f"{self.child.name} gone: {e}"), op.value)

    def _outcome(self, op: Op, reply: dict, ok_value) -> Completion:
        """The completion for a reply: ok_value(result) when it succeeded."""
        if "error" in reply:
            classified = self.dialect.classify(*reply["error"], reply["how"])
            return Completion(classified.outcome, op.value, classified.error, retire=reply.get("retire", False))
        return Completion.ok(ok_value(reply["ok"]), **self._extra(reply) if op.f in ("poll", "txn") else {})

    def _extra(self, reply: dict) -> dict:
        extra: dict = {}
        if reply.get("poll_errors"):
            extra["poll_errors"] = reply["poll_errors"]
        if reply.get("rebalance_log"):
            keys = self.w.keys
            extra["rebalance_log"] = [[what, sorted(keys.key_of(t, p) for t, p in pairs), *map(self._starts, starts)]
                                      for what, pairs, *starts in reply["rebalance_log"]]
        return extra

    def _starts(self, triples: list) -> dict[str, int]:
        """The session's [[topic, partition, start], ...] as the history's `starts`."""
        return {str(self.w.keys.key_of(t, p)): offset for t, p, offset in sorted(triples)}

    # -- ops ------------------------------------------------------------------------------
    def _crash(self, op: Op) -> Completion:
        self.close()
        return Completion("info", None)

    def _assign(self, op: Op) -> Completion:
        for key in op.value:
            ensure_topic(self.w.topics, key)
        partitions = [[self.w.keys.topic(k), self.w.keys.partition(k)] for k in op.value]
        reply = self._request("assign", partitions=partitions, from_beginning=self.final)
        completion = self._outcome(op, reply, lambda _: op.value)
        if completion.type == "ok":
            completion.extra["starts"] = self._starts(reply["ok"] or [])
        return completion

    def _subscribe(self, op: Op) -> Completion:
        for key in op.value:
            ensure_topic(self.w.topics, key)
        reply = self._request("subscribe", topics=sorted({self.w.keys.topic(k) for k in op.value}))
        return self._outcome(op, reply, lambda _: op.value)

    def _send(self, op: Op) -> Completion:
        for _, key, _ in op.value:
            ensure_topic(self.w.topics, key)
        records = [[self.w.keys.topic(k), self.w.keys.partition(k), str(k), str(v)] for _, k, v in op.value]
        completion = self._outcome(op, self._request("send", records=records), lambda offsets: [
            ["send", k, [offset, v]] for (_, k, v), offset in zip(op.value, offsets)])
        self._acked(completion)
        return completion

    def _poll(self, op: Op) -> Completion:
        reply = self._request("poll", timeout_ms=int(self.w.settings.poll_timeout * 1000))
        return self._outcome(op, reply, lambda records: [["poll", self._by_key(records)]])

    def _txn(self, op: Op) -> Completion:
        keys, poll_ms = self.w.keys, int(self.w.settings.poll_timeout * 1000)
        mops = []
        for mop in op.value:
            if mop[0] == "send":
                ensure_topic(self.w.topics, mop[1])
                mops.append(["send", keys.topic(mop[1]), keys.partition(mop[1]), str(mop[1]), str(mop[2])])
            else:
                mops.append(["poll", poll_ms])
        abort = self.rng.random() < self.w.settings.abort_p
        completion = self._outcome(op, self._request("txn", mops=mops, abort=abort), lambda results: [
            ["send", mop[1], [result, mop[2]]] if mop[0] == "send" else ["poll", self._by_key(result)]
            for mop, result in zip(op.value, results)])
        self._acked(completion)
        return completion

    def _by_key(self, records: list) -> dict[str, list[list[int]]]:
        polled: dict[str, list[list[int]]] = {}
        for topic, partition, offset, value in records:
            polled.setdefault(str(self.w.keys.key_of(topic, partition)), []).append([offset, int(value)])
        return polled

    def _acked(self, completion: Completion) -> None:
        if completion.type == "ok":
            for mop in completion.value:
                if mop[0] == "send":
                    self.w.acks.acked(mop[1], mop[2][0], mop[2][1])

    def close(self) -> None:
        try:
            self.child.call(self.session, "close", REPLY_SLACK_S)
        except (TimeoutError, BridgeGone):
            pass  # the child goes at the end of the run anyway
