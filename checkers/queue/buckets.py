"""Records grouped by key into buckets, and the buckets analysed in worker
processes: the pool engine's pass (checkers/queue/pool.py).

Every queue analysis is a property of one key, so any grouping of whole
keys into buckets finds what one bucket of the whole history finds (the
Spark engine hashes keys into buckets; the in-process engine has one). Here
keys are packed into buckets of about `records_per_bucket` records (bounded
memory per analysis), and buckets dealt to workers largest first, each to
the least loaded (so one hot key does not leave a core idle behind it while
others wait). Each bucket also gets every RESET record (an assign or
subscribe resets its process on all keys), as on Spark.

Worker 0 is this process. The others are forked: they inherit the sorted
records rather than receive them, and each hands its rows back in a pickle
file. A child dies with its parent (PR_SET_PDEATHSIG), and a child that
fails raises BucketWorkerError here with its traceback.
"""
from __future__ import annotations

import ctypes
import gc
import heapq
import multiprocessing
import os
import pickle
import signal
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from checkers.history.queue_records import COLUMNS, RESET
from checkers.queue.bucket import analyze_bucket

_PR_SET_PDEATHSIG = 1


class BucketWorkerError(RuntimeError):
    """A worker process failed while analysing its buckets."""


@dataclass(frozen=True)
class Buckets:
    # about this many records per bucket: bounded memory per analysis, and
    # buckets small enough to share out evenly (one key of 10^7 operations,
    # 10^6 records, analyses in 1-2 s)
    records_per_bucket: int = 1_000_000


@dataclass
class Plan:
    """Which rows go to which bucket, and which buckets to which worker."""
    order: np.ndarray                       # rows sorted by bucket
    bounds: list[tuple[int, int]]           # each bucket's rows: order[lo:hi]
    shares: list[list[int]]                 # each worker's buckets


def _lightest_first(sizes: list[int], bins: int) -> list[list[int]]:
    """Items (by size) dealt largest first, each to the bin with the least so far."""
    heap = [(0, b) for b in range(bins)]
    dealt: list[list[int]] = [[] for _ in range(bins)]
    for item in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        load, b = heapq.heappop(heap)
        dealt[b].append(item)
        heapq.heappush(heap, (load + sizes[item], b))
    return dealt


def plan(keys: np.ndarray, buckets: Buckets, workers: int) -> Plan:
    """The plan for records with these `keys` (one per row)."""
    codes, distinct = pd.factorize(keys)     # one hash pass: each row's key and the keys' sizes
    sizes = np.bincount(codes, minlength=len(distinct)).tolist()
    n_buckets = max(1, min(len(distinct), -(-len(keys) // buckets.records_per_bucket)))
    bucket_keys = _lightest_first(sizes, n_buckets)
    bucket_sizes = [sum(sizes[k] for k in ks) for ks in bucket_keys]
    shares = [s for s in _lightest_first(bucket_sizes, min(workers, n_buckets)) if s]
    # number the buckets worker by worker, so each worker's rows are contiguous
    numbering = [b for share in shares for b in share]
    bucket_of_key = np.empty(len(distinct), dtype=np.int64)
    for new, old in enumerate(numbering):
        bucket_of_key[bucket_keys[old]] = new
    dtype = np.int16 if n_buckets < (1 << 15) else np.int64     # int16: numpy's stable sort is a radix sort
    row_bucket = bucket_of_key[codes].astype(dtype)
    order = np.argsort(row_bucket, kind="stable")
    ends = np.cumsum(np.bincount(row_bucket, minlength=n_buckets)).tolist()
    bounds = list(zip([0] + ends[:-1], ends))
    firsts = np.cumsum([0] + [len(share) for share in shares]).tolist()
    return Plan(order, bounds, [list(range(a, b)) for a, b in zip(firsts[:-1], firsts[1:])])


def run_buckets(records: dict[str, list[np.ndarray]], extra: pd.DataFrame, buckets: Buckets, workers: int,
                limit: int, end_time: int, shrink: bool) -> pd.DataFrame | None:
    """analyze_bucket's rows over every bucket of `records` (int64 COLUMNS,
    each in parts; taken: the dict is emptied) and `extra` (RESET, HOLD and
    START records), or None when there is no record at all (Spark runs no
    bucket then)."""
    kinds = extra["kind"].to_numpy()
    resets = extra[kinds == RESET].reset_index(drop=True)
    keyed = extra[kinds != RESET]
    columns = {c: np.concatenate([*records.pop(c), keyed[c].to_numpy(dtype=np.int64)]) for c in COLUMNS}
    if not len(columns["key"]):
        return analyze_bucket(resets, limit, end_time, shrink) if len(resets) else None
    laid_out = plan(columns["key"], buckets, workers)

    def bucket(b: int) -> pd.DataFrame:
        # gathered by the worker that analyses it: the workers copy in parallel
        lo, hi = laid_out.bounds[b]
        rows = laid_out.order[lo:hi]
        frame = pd.DataFrame({c: columns[c][rows] for c in COLUMNS}, copy=False)
        return pd.concat([frame, resets], ignore_index=True) if len(resets) else frame

    def share(bs: list[int]) -> pd.DataFrame:
        return pd.concat([analyze_bucket(bucket(b), limit, end_time, shrink) for b in bs], ignore_index=True)

    children = [Forked(lambda bs=bs: share(bs)) for bs in laid_out.shares[1:]]
    try:
        mine = share(laid_out.shares[0])
        return pd.concat([mine, *(child.result() for child in children)], ignore_index=True)
    finally:
        for child in children:
            child.stop()


class Forked:
    """`work()` in a forked child; its result (a pickled frame) comes back
    through a file, its failure as BucketWorkerError. The file has no name
    (both processes hold it open), so nothing is left behind whoever dies."""

    def __init__(self, work: Callable[[], pd.DataFrame]) -> None:
        self.file = tempfile.TemporaryFile(prefix="logtrial-bucket-")
        context = multiprocessing.get_context("fork")
        self.process = context.Process(target=_child, args=(work, self.file.fileno(), os.getpid()), daemon=True)
        self.process.start()

    def result(self) -> pd.DataFrame:
        self.process.join()
        code = self.process.exitcode
        try:
            self.file.seek(0)
            ok, value = pickle.load(self.file)
            if ok:
                value = _arrived(value)
        except (OSError, EOFError, pickle.UnpicklingError):
            raise BucketWorkerError(f"a bucket worker (pid {self.process.pid}) died, exit {code}, "
                                    "without handing its rows back") from None
        if not ok:
            raise BucketWorkerError(f"a bucket worker (pid {self.process.pid}) failed:\n{value}")
        return value

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.file.close()


def _child(work: Callable[[], pd.DataFrame], fd: int, parent: int) -> None:
    # the parent's objects are never collected here: no page of theirs is
    # copied for it, and no finalizer of theirs (a py4j proxy's, say) runs twice
    gc.freeze()
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)      # the parent died before the death signal was set
    try:
        answer = (True, _portable(work()))
    except BaseException:
        answer = (False, traceback.format_exc())
    with os.fdopen(os.dup(fd), "wb") as f:
        pickle.dump(answer, f, protocol=pickle.HIGHEST_PROTOCOL)


def _portable(frame: pd.DataFrame) -> dict:
    """`frame` with its text columns as codes into their distinct values:
    millions of edge rows repeat a few texts (rec, kind) or none, and pickle
    would write every one of them."""
    out = {}
    for c in frame.columns:
        column = frame[c]
        if column.dtype == object:
            codes, distinct = pd.factorize(column.to_numpy(), use_na_sentinel=True)
            out[c] = ("codes", codes, np.append(distinct.astype(object), None))
        else:
            out[c] = ("as is", column, None)
    return out


def _arrived(columns: dict) -> pd.DataFrame:
    """_portable's frame back, None where a text was missing (code -1 picks the appended None)."""
    out = {}
    for c, (how, values, distinct) in columns.items():
        out[c] = distinct[values] if how == "codes" else values
    return pd.DataFrame(out)
