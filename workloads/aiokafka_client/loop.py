"""One asyncio event loop on its own thread per logical process: the worker
thread hands each aiokafka call to it and waits, at most the op's bound.

Why a thread per process rather than a loop run inside the worker thread:
aiokafka's sender, fetcher and group heartbeat are tasks on the loop, and they
must keep running between ops, as librdkafka's and kafka-python's background
threads do (a batch still in flight after its op timed out goes on being sent;
a subscribed consumer keeps its group membership while its worker waits for the
next op). A loop that ran only inside an op would freeze them. Closing is then
one call from any thread (the runner closes clients on a thread of its own).
The thread is started from the worker thread, so with --pin-clients it is in
the worker's network namespace and its sockets reach the pinned node only."""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")
STOP_TIMEOUT = 10.0


class LoopTimeout(Exception):
    """A call to the loop did not finish within its bound (it was cancelled)."""


class LoopThread:
    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Runs the coroutine `make()` on the loop and returns its result; after
        `timeout` seconds it is cancelled and LoopTimeout raised. `make` is called
        on the loop, as aiokafka's constructors need a running loop."""
        async def call() -> T:
            return await make()
        future = asyncio.run_coroutine_threadsafe(call(), self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError as e:
            # the caller does not wait for the cancellation to finish (asyncio.wait_for
            # would): aiokafka's clean-up of a cancelled call can take as long again
            future.cancel()
            raise LoopTimeout(f"no answer in {timeout:.1f} s") from e

    def call(self, fn: Callable[[], T]) -> T:
        """Runs a plain function on the loop's thread (aiokafka's objects are not thread-safe)."""
        async def call() -> T:
            return fn()
        return self.run(call)

    def close(self, last: Callable[[], Awaitable[Any]] | None = None) -> None:
        """Runs `last` (the clients' close) at most STOP_TIMEOUT, cancels the tasks left
        (a call abandoned at its op timeout, such as a commit) and waits for them at most
        STOP_TIMEOUT, then stops the loop and its thread. A task abandoned with a closed
        loop finishes when it is collected, and its clean-up then fails on the closed loop
        ("Exception ignored ... Event loop is closed" on stderr)."""
        try:
            if last is not None:
                self.run(last, STOP_TIMEOUT)
        finally:
            try:
                self.run(_cancel_the_rest, STOP_TIMEOUT)
            except (LoopTimeout, RuntimeError):
                pass    # left running: abandoned with the loop, as before
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(STOP_TIMEOUT)
            if not self._thread.is_alive():
                self.loop.close()


async def _cancel_the_rest() -> None:
    """Cancels every other task of the running loop and waits until they have ended."""
    rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in rest:
        task.cancel()
    if rest:
        await asyncio.wait(rest)
