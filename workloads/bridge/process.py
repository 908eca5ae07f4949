"""One child process serving a client's sessions (the Java server, the Go clients'
program), spoken to in JSON lines over its stdin/stdout. Many threads call at once:
each request carries an id and its caller waits for the reply with that id. Its
stderr goes to the log. The child's first line is its ready reply (id -1), whose
`ok` says what it runs (`ready`).

Why a pipe to a child, and one child for many logical processes: no new Python
dependency, a child that crashes takes no Python with it, and the per-op cost is one
pipe round trip (docs/benchmarks.md). A child per logical process would pay its start
for every process, and the runner replaces a process after each indefinite outcome."""
from __future__ import annotations

import itertools
import json
import logging
import subprocess
import threading
from typing import Any, Sequence

log = logging.getLogger(__name__)
START_TIMEOUT_S = 60.0


class BridgeGone(RuntimeError):
    """The child exited (or never answered): every call in flight fails with this."""


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: dict[str, Any] | None = None


class BridgeProcess:
    def __init__(self, command: Sequence[str], name: str):
        self.name = name
        self._ids = itertools.count()
        ready = _Pending()
        self._pending: dict[int, _Pending] = {-1: ready}  # -1: the ready line
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._gone: str | None = None
        self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        threading.Thread(target=self._read_replies, name=f"{name}-out", daemon=True).start()
        threading.Thread(target=self._log_stderr, name=f"{name}-err", daemon=True).start()
        self.ready: Any = self._wait(-1, ready, START_TIMEOUT_S)["ok"]
        log.info("%s: process %d up, running %s", name, self.proc.pid, self.ready)

    def call(self, session: int, cmd: str, timeout: float, **args: Any) -> dict[str, Any]:
        """Sends one request and waits for its reply; BridgeGone if the child is gone,
        TimeoutError if no reply within `timeout` (the request may still run)."""
        request_id = next(self._ids)
        with self._lock:
            if self._gone:
                raise BridgeGone(self._gone)
            pending = self._pending[request_id] = _Pending()
        line = json.dumps({"id": request_id, "session": session, "cmd": cmd, **args}) + "\n"
        try:
            with self._write_lock:
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as e:
            self._fail_all(f"{self.name} {self.proc.pid} gone: {e}")
        return self._wait(request_id, pending, timeout)

    def _wait(self, request_id: int, pending: _Pending, timeout: float) -> dict[str, Any]:
        answered = pending.done.wait(timeout)
        with self._lock:
            self._pending.pop(request_id, None)
        if pending.reply is not None:
            return pending.reply
        if not answered:
            raise TimeoutError(f"{self.name} {self.proc.pid}: no reply in {timeout:.0f} s")
        raise BridgeGone(self._gone or f"{self.name} gone")

    def _read_replies(self) -> None:
        for raw in self.proc.stdout:
            try:
                reply = json.loads(raw)
            except ValueError:
                log.warning("%s: not a reply: %r", self.name, raw[:200])
                continue
            with self._lock:
                pending = self._pending.get(reply.get("id"))
            if pending is not None:
                pending.reply = reply
                pending.done.set()
        self._fail_all(f"{self.name} {self.proc.pid} exited ({self.proc.wait()})")

    def _fail_all(self, why: str) -> None:
        with self._lock:
            self._gone = self._gone or why
            pending, self._pending = list(self._pending.values()), {}
        for p in pending:
            p.done.set()

    def _log_stderr(self) -> None:
        for raw in self.proc.stderr:
            log.info("%s[%d]: %s", self.name, self.proc.pid, raw.decode(errors="replace").rstrip())

    def close(self, timeout: float = 10.0) -> None:
        """Closes stdin (the child exits when it ends); kills the child if it does not."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
