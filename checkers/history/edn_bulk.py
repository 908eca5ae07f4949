"""A list-append EDN history in the fast shape (checkers/history/edn_json.py)
read without a dict per event: its lines are turned into the JSON Lines
`import-edn` would write (one object per line, the EDN file's line numbers
kept) and read by the JSON Lines reader's bulk path
(checkers/history/list_append_lines.py), with import-edn's own rules on
top (`as_imported`).

The substitutions are most of the cost (about 10 CPU-s of a 10^6-transaction
history's 230 MB), so a file of more than one block has its blocks turned
into JSON on every core: the first here, the rest by worker processes
that start from the keywords the first block taught (finding them again
costs a second a block).

Anything else gives None, and checkers/history/edn_fast.py reads the file
from its start, the careful way, with the same results and errors.
"""
from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from checkers import progress
from checkers.history.edn_json import Keywords, byte_blocks, json_lines, plain_block, untagged
from checkers.history.list_append_lines import common_rows
from checkers.history.read import ParsedHistory, gc_paused

# fields the Converter rewrites (an error becomes [name, ""]) or drops, but
# list_append_lines would read: their keys in the JSON text (maps are only
# operations in the fast shape, so a key there is an operation's)
_CONVERTED_FIELDS = (b'"error":', b'"producer":', b'"starts":', b'"rebalance_log":')
_LEARN_BYTES = 1 << 20
# below this, the rest is converted here: starting a worker costs about 0.1 s
_PARALLEL_BYTES = 16 << 20


def read_list_append(path: Path, gzipped: bool, block_bytes: int, size: int,
                     workers: int | None = None) -> ParsedHistory | None:
    """The rows of the list-append EDN history at `path`, or None when any
    line is not in the fast shape or the bulk reader refuses the text.
    `workers`: processes for the blocks after the first (default: one per
    core; none on one core)."""
    if workers is None:
        workers = os.cpu_count() or 1
        workers = workers if workers > 1 else 0
    with gc_paused():
        text = _json_text(byte_blocks(path, gzipped, block_bytes), workers)
        if text is None or any(field in text for field in _CONVERTED_FIELDS):
            return None
        found = common_rows(text, as_imported=True)
    if found is None:
        return None
    progress.parsed(size)
    return ParsedHistory(found[0], size, found[1])


def block_text(data: bytes, keywords: Keywords) -> bytes | None:
    """One block of whole lines as JSON Lines, or None if a line is not in
    the fast shape."""
    body = untagged(data[:-1] if data.endswith(b"\n") else data)
    count = body.count(b"\n") + 1
    text = json_lines(body, keywords, objects=True) if plain_block(body, count) else None
    return text if text is not None and text.count(b"\n") == count - 1 else None


def _json_text(blocks: Iterator[bytes], workers: int) -> bytes | None:
    first = next(blocks, None)
    if first is None:
        return None
    # the keywords are learnt from the first lines alone, here, so that the
    # workers start from them and the rest is shared out
    cut = first.find(b"\n", _LEARN_BYTES) + 1 if workers > 0 else 0
    first, rest = (first[:cut], [first[cut:], *blocks]) if cut else (first, list(blocks))
    keywords = Keywords()
    head = block_text(first, keywords)
    if head is None:
        return None
    if sum(map(len, rest)) < _PARALLEL_BYTES:
        workers = 0
    texts = _converted(_pieces(rest, workers), keywords, workers) if rest else []
    if texts is None:
        return None
    return b"\n".join([head, *texts]) + b"\n"


def _pieces(blocks: list[bytes], workers: int) -> list[bytes]:
    """The blocks, the largest cut in two at a line's end until every worker
    has one (a history of one block would otherwise go to one worker)."""
    while len(blocks) < workers:
        big = max(range(len(blocks)), key=lambda i: len(blocks[i]))
        data = blocks[big]
        cut = data.find(b"\n", len(data) // 2) + 1
        if not 0 < cut < len(data):
            break
        blocks[big:big + 1] = [data[:cut], data[cut:]]
    return blocks


def _converted(blocks: list[bytes], keywords: Keywords, workers: int) -> list[bytes] | None:
    """block_text of each block, in order: on `workers` worker processes,
    each taking the next block left, or here when there are none.

    This process only moves the bytes: converting here too would hold the
    interpreter lock for tens of milliseconds a substitution, and the
    threads that feed the workers' pipes need it for every 64 KiB. The
    workers are this module run as a program (`_serve`), not
    multiprocessing's: a forked child of a process with threads (Spark's,
    a runner's) can deadlock, and a spawned one runs the caller's main
    script again."""
    if workers < 1:
        texts = [block_text(data, keywords) for data in blocks]
        return None if None in texts else texts
    texts: list[bytes | None] = [None] * len(blocks)
    order = iter(range(len(blocks)))
    lock = threading.Lock()

    def take() -> int | None:
        with lock:
            return next(order, None)

    threads = [threading.Thread(target=_remote, args=(take, blocks, texts, keywords), daemon=True)
               for _ in range(min(workers, len(blocks)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return None if None in texts else texts


def _remote(take, blocks: list[bytes], texts: list, keywords: Keywords) -> None:
    """One worker process's share of _converted. A worker that cannot be
    started or fails leaves the blocks it takes to be converted here."""
    try:
        worker = subprocess.Popen(_worker_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=_worker_env())
    except OSError:
        worker = None
    alive = worker is not None and _sent(worker, pickle.dumps((keywords.keys, keywords.known)))
    try:
        while (i := take()) is not None:
            if alive:
                try:
                    _send(worker.stdin, blocks[i])
                    texts[i] = _receive(worker.stdout)
                    continue
                except (OSError, EOFError):
                    alive = False
            texts[i] = block_text(blocks[i], keywords)
    finally:
        if worker is not None:
            _close(worker)


def _sent(worker: subprocess.Popen, data: bytes) -> bool:
    try:
        _send(worker.stdin, data)
        return True
    except OSError:
        return False


def _close(worker: subprocess.Popen) -> None:
    for pipe in (worker.stdin, worker.stdout):
        try:
            pipe.close()
        except OSError:
            pass
    worker.wait()


def _worker_argv() -> list[str]:
    return [sys.executable, "-m", __name__]


def _worker_env() -> dict[str, str]:
    """This process's environment, with the directory this package was
    imported from first on the path: the worker finds this module from any
    working directory, installed or not."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


_NONE = (1 << 64) - 1


def _send(pipe: BinaryIO, data: bytes | None) -> None:
    pipe.write(struct.pack("<Q", _NONE if data is None else len(data)))
    if data is not None:
        pipe.write(data)
    pipe.flush()


def _receive(pipe: BinaryIO) -> bytes | None:
    head = pipe.read(8)
    if len(head) < 8:
        raise EOFError("worker ended")
    (size,) = struct.unpack("<Q", head)
    if size == _NONE:
        return None
    data = pipe.read(size)
    if len(data) < size:
        raise EOFError("worker ended")
    return data


def _serve() -> None:
    """A worker: the keywords learnt, then block_text of each block sent,
    until its input ends."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    try:
        keys, known = pickle.loads(_receive(source) or b"")
    except EOFError:
        return
    keywords = Keywords()
    keywords.keys.update(keys)
    keywords.known.update(known)
    while True:
        try:
            data = _receive(source)
        except EOFError:
            return
        _send(sink, block_text(data or b"", keywords))


if __name__ == "__main__":
    _serve()
