"""One JVM running the Java client's server (build.py), spoken to in JSON lines
over its stdin/stdout. Many threads call at once: each request carries an id and
its caller waits for the reply with that id. Its stderr goes to the log.

Why a pipe to a child JVM, and one JVM for many logical processes: no new Python
dependency (JPype would be one, in a venv shared by every checkout), a JVM that
crashes takes no Python with it, and the per-op cost is one pipe round trip
(docs/benchmarks.md). A JVM per logical process would pay the JVM's start (about
a second of CPU) for every process, and the runner replaces a process after each
indefinite outcome."""
from __future__ import annotations

import itertools
import json
import logging
import subprocess
import threading
from typing import Any

log = logging.getLogger(__name__)
JVM_OPTIONS = ("-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
START_TIMEOUT_S = 60.0


class JvmGone(RuntimeError):
    """The JVM exited (or never answered): every call in flight fails with this."""


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: dict[str, Any] | None = None


class Jvm:
    def __init__(self, classpath: str, main_class: str, name: str = "java-client"):
        self.name = name
        self._ids = itertools.count()
        ready = _Pending()
        self._pending: dict[int, _Pending] = {-1: ready}  # -1: the ready line, with its version
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._gone: str | None = None
        self.proc = subprocess.Popen(["java", *JVM_OPTIONS, "-cp", classpath, main_class],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        threading.Thread(target=self._read_replies, name=f"{name}-out", daemon=True).start()
        threading.Thread(target=self._log_stderr, name=f"{name}-err", daemon=True).start()
        self.client_version: str = self._wait(-1, ready, START_TIMEOUT_S)["ok"]
        log.info("%s: JVM %d up, kafka-clients %s", name, self.proc.pid, self.client_version)

    def call(self, session: int, cmd: str, timeout: float, **args: Any) -> dict[str, Any]:
        """Sends one request and waits for its reply; JvmGone if the JVM is gone, TimeoutError
        if no reply within `timeout` (the request may still run)."""
        request_id = next(self._ids)
        with self._lock:
            if self._gone:
                raise JvmGone(self._gone)
            pending = self._pending[request_id] = _Pending()
        line = json.dumps({"id": request_id, "session": session, "cmd": cmd, **args}) + "\n"
        try:
            with self._write_lock:
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as e:
            self._fail_all(f"JVM {self.proc.pid} gone: {e}")
        return self._wait(request_id, pending, timeout)

    def _wait(self, request_id: int, pending: _Pending, timeout: float) -> dict[str, Any]:
        answered = pending.done.wait(timeout)
        with self._lock:
            self._pending.pop(request_id, None)
        if pending.reply is not None:
            return pending.reply
        if not answered:
            raise TimeoutError(f"JVM {self.proc.pid}: no reply in {timeout:.0f} s")
        raise JvmGone(self._gone or "JVM gone")

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
        self._fail_all(f"JVM {self.proc.pid} exited ({self.proc.wait()})")

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
        """Closes stdin (the server exits when it ends); kills the JVM if it does not."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
