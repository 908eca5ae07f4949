"""The pool engine (checkers/queue/pool.py: the Parquet companion, buckets of
keys in forked worker processes, no JVM) gives the in-process engine's
results, to the last field: on every history and option set of
test_queue_engines, on them all in one file, and on random simulated-Kafka
histories with subscriptions and rebalances. Buckets are made as small as
they go (one key each) and spread over two workers, so every gathering step
meets rows from several buckets and from a child process."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.history.companion_write import write_companion
from checkers.queue.buckets import BucketWorkerError, Buckets, plan
from checkers.queue.pool import NotAQueueCompanion, check_queue_pool
from checkers.queue.producer_errors import ProducerChecks
from tests.checkers.test_queue_engines import (COMBINED_OPTIONS, HISTORIES, _write, assert_same, combined_events,
                                               histories, local_check, random_events)
from tests.fixtures.depth import examples

ONE_KEY_EACH = Buckets(records_per_bucket=1)


def pool_check(path: Path, workers: int = 2, buckets: Buckets = ONE_KEY_EACH, **options) -> dict:
    return check_queue_pool(write_companion(path), workers=workers, buckets=buckets, **options)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pool")
    return {name: _write(make(), folder / f"{name}.jsonl") for name, (make, _) in HISTORIES.items()}


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_pool_gives_the_in_process_results(written, name):
    for options in HISTORIES[name][1]:
        assert_same(local_check(written[name], **options), pool_check(written[name], **options))


@pytest.mark.parametrize("options", sorted(COMBINED_OPTIONS))
def test_pool_gives_the_in_process_results_on_the_histories_together(tmp_path, options):
    path = _write(combined_events(), tmp_path / "combined.jsonl")
    local = local_check(path, **COMBINED_OPTIONS[options])
    assert local["anomaly_types"], "the combined history must hold anomalies to gather"
    assert_same(local, pool_check(path, **COMBINED_OPTIONS[options]))
    # one worker, one bucket: the same again
    assert_same(local, pool_check(path, workers=1, buckets=Buckets(), **COMBINED_OPTIONS[options]))


@settings(max_examples=examples(4), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(histories, min_size=2, max_size=2), st.integers(0, 11))
def test_pool_agrees_on_random_histories(tmp_path_factory, batch, seed):
    folder = tmp_path_factory.mktemp("prop-pool")
    for i, hs in enumerate(batch):
        path = _write(random_events(hs, seed), folder / f"history-{i}.jsonl")
        options = {"limit": 1 + i, "realtime": i % 2 == 1, "producer": ProducerChecks(window_s=2e-6)}
        assert_same(local_check(path, **options), pool_check(path, workers=1 + (seed % 3), **options))


def test_plan_keeps_keys_whole_and_balances_workers():
    """A hot key alone in its bucket, the rest packed; each worker's buckets
    contiguous; every row in exactly one bucket, with all rows of its key."""
    keys = np.array([7] * 50 + [1] * 10 + [2] * 10 + [3] * 10 + [4] * 10 + [5] * 10)
    laid_out = plan(keys, Buckets(records_per_bucket=20), workers=2)
    buckets = [set(keys[laid_out.order[lo:hi]].tolist()) for lo, hi in laid_out.bounds]
    assert sorted(len(b) for b in buckets) == [1, 1, 1, 1, 2]   # 100 rows / 20: 5 buckets of 6 whole keys
    assert {7} in buckets and sorted(laid_out.order.tolist()) == list(range(len(keys)))
    loads = [sum(laid_out.bounds[b][1] - laid_out.bounds[b][0] for b in share) for share in laid_out.shares]
    assert sorted(loads) == [50, 50]
    assert [b for share in laid_out.shares for b in share] == list(range(len(laid_out.bounds)))


def test_a_failing_worker_is_reported_with_its_traceback(written, monkeypatch):
    """A child that raises does not hang the check, and says why it failed."""
    from checkers.queue import buckets as queue_buckets
    real, parent = queue_buckets.analyze_bucket, __import__("os").getpid()

    def analyze(bucket, *args, **kw):
        if __import__("os").getpid() != parent:
            raise ValueError("planted in the child")
        return real(bucket, *args, **kw)
    monkeypatch.setattr(queue_buckets, "analyze_bucket", analyze)
    with pytest.raises(BucketWorkerError, match="planted in the child"):
        pool_check(written["planted"])


def test_a_folder_without_records_is_refused(tmp_path, written):
    companion = write_companion(written["planted"], out=tmp_path / "h.parquet")
    for part in (companion / "queue-mops").iterdir():
        part.unlink()
    (companion / "queue-mops").rmdir()
    with pytest.raises(NotAQueueCompanion, match="no queue-mops"):
        check_queue_pool(companion)
    assert json.loads((companion / "op_counts.json").read_text())      # the rest is left as it was


@pytest.fixture
def small_local_max(monkeypatch):
    """The queue's local_max_bytes (and the companion's threshold) lowered
    to 100 bytes: every test history is a big one."""
    import dataclasses

    from checkers import api, registry
    monkeypatch.setitem(registry.CHECKERS, "queue", dataclasses.replace(registry.CHECKERS["queue"], local_max_bytes=100))
    monkeypatch.setattr(api, "VALIDATE_FIRST_MAX_BYTES", 100)


def test_a_big_history_is_checked_through_its_companion_in_process(written, tmp_path, small_local_max):
    """`check` (auto and local): the companion written beside the history,
    then the pool engine; the results are the in-process engine's."""
    from checkers.api import check_history
    from checkers.history.companion import companion_for
    path = tmp_path / "history.jsonl"
    path.write_bytes(written["planted"].read_bytes())
    for engine in ("auto", "local"):
        results = check_history(path, out_dir=tmp_path / engine, engine=engine)
        assert (results["checker"]["engine"], results["checker"]["parquet_companion"]) == ("local", True)
        assert companion_for(path) is not None
        expected = local_check(path, producer=ProducerChecks())
        assert_same(expected, {k: v for k, v in results.items() if k in expected})
    companion = check_history(companion_for(path), out_dir=tmp_path / "companion")
    assert companion["checker"]["engine"] == "local" and companion["anomalies"] == results["anomalies"]


def test_a_big_broken_history_is_refused_by_line_before_any_worker_runs(written, tmp_path, small_local_max):
    from checkers.api import check_history
    from checkers.history.companion import companion_path
    from checkers.history.errors import HistoryError
    path = tmp_path / "history.jsonl"
    path.write_text(written["planted"].read_text() + '{"index": 999, "time": 1}\n')
    with pytest.raises(HistoryError) as e:
        check_history(path, out_dir=tmp_path / "out", engine="local")
    lines = len(written["planted"].read_text().splitlines()) + 1
    assert f"{path}:{lines}: missing field 'type'" in str(e.value)
    assert not companion_path(path).exists() and not (tmp_path / "out" / "results.json").exists()


_KILLED_PARENT = """
import os, sys, time
from pathlib import Path
from checkers.queue import buckets
from checkers.queue.pool import check_queue_pool
parent, out = os.getpid(), Path(sys.argv[2])

def analyze(bucket, *args, **kw):
    (out / ("child" if os.getpid() != parent else "parent")).write_text(str(os.getpid()))
    time.sleep(120)
buckets.analyze_bucket = analyze
check_queue_pool(Path(sys.argv[1]), workers=2, buckets=buckets.Buckets(records_per_bucket=1))
"""


def test_a_worker_dies_with_its_parent_and_leaves_no_file(written, tmp_path):
    """The checking process SIGKILLed in the middle of the pass: its forked
    worker goes too (PR_SET_PDEATHSIG), and no file of theirs is left."""
    import os
    import signal
    import subprocess
    import sys
    import time
    companion = write_companion(written["planted"], out=tmp_path / "h.parquet")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    check = subprocess.Popen([sys.executable, "-c", _KILLED_PARENT, str(companion), str(tmp_path)],
                             env={**os.environ, "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 60
    while not ((tmp_path / "child").is_file() and (tmp_path / "parent").is_file()):
        assert check.poll() is None and time.monotonic() < deadline, "the pass never reached its workers"
        time.sleep(0.1)
    child = int((tmp_path / "child").read_text())
    os.kill(check.pid, signal.SIGKILL)
    check.wait()
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"worker {child} outlived its parent")
    assert list(scratch.iterdir()) == []
