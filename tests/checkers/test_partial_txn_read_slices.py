"""partial-txn-read's two steps (checkers/queue/txn_reads.py): `summarize`
any slices of the ok polls, `match` the summaries. Random consumer records
with multi-key transactions; the finder, on the whole frame and on random
slices of it, must give what a walk of each process's polls in order gives."""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.queue import txn_reads as tr
from checkers.history.queue_records import COLUMNS, NULL, OK, POLL, RESET, SEND
from tests.fixtures.depth import examples

KEYS = (1, 2, 3)
OFFSETS = 8


def _record(**fields) -> dict:
    return {**{c: NULL for c in COLUMNS}, "otype": OK, "fcode": tr.F_TXN, "flags": 0, **fields}


@st.composite
def consumer_records(draw) -> pd.DataFrame:
    """Txns writing 2-3 keys at distinct offsets; consumers that reset and
    poll random (ascending) offsets of random keys; op ids ascend per process
    in time, as invoke indexes do."""
    log = {k: [100 * k + o for o in range(OFFSETS)] for k in KEYS}    # value at each offset
    rows, op = [], 0
    free = {k: list(range(OFFSETS)) for k in KEYS}
    for t in range(draw(st.integers(1, 3))):
        keys = draw(st.lists(st.sampled_from(KEYS), min_size=2, max_size=3, unique=True))
        if any(not free[k] for k in keys):
            break
        op += 1
        for pos, k in enumerate(keys):
            offset = free[k].pop(draw(st.integers(0, len(free[k]) - 1)))
            log[k][offset] = 10_000 * (t + 1) + k
            rows.append(_record(kind=SEND, key=k, offset=offset, value=log[k][offset], op=op, process=9,
                                pos=pos << 31))
    for _ in range(draw(st.integers(1, 12))):
        op += 1
        process = draw(st.sampled_from((5, 6)))
        if draw(st.integers(0, 4)) == 0:
            rows.append(_record(kind=RESET, op=op, process=process, fcode=3, pos=0))
            continue
        at = 0
        for k in draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=2, unique=True)):
            for o in sorted(draw(st.lists(st.integers(0, OFFSETS - 1), max_size=4, unique=True))):
                rows.append(_record(kind=POLL, key=k, offset=o, value=log[k][o], op=op, process=process,
                                    fcode=1, pos=at, cindex=op + 1000))
                at += 1
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(np.int64)


def txn_parts(records: pd.DataFrame) -> pd.DataFrame:
    return tr.multi_key(tr.committed_sends(records))


def consumer_rows(records: pd.DataFrame) -> pd.DataFrame:
    """The ok polls and ok assign/subscribe calls."""
    keep = (records["otype"] == OK) & records["kind"].isin([POLL, RESET])
    return records.loc[keep, ["process", "op", "pos", "kind", "key", "offset", "value", "cindex"]]


def split(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """consumer_rows as (polls, resets), as summarize takes them."""
    return rows[rows["kind"] == POLL], rows.loc[rows["kind"] == RESET, ["process", "op"]]


def walked(records: pd.DataFrame) -> set[tuple]:
    """The partial reads by a plain walk of each process's rows in order."""
    parts = txn_parts(records)
    txns = {t: list(zip(p["key"], p["value"], p["offset"])) for t, p in parts.groupby("txn")}
    rows = consumer_rows(records).sort_values(["process", "op", "pos"], kind="stable")
    found = set()
    for process, mine in rows.groupby("process"):
        epochs: list[list] = [[]]
        for r in mine.itertuples():
            if r.kind == RESET:
                epochs.append([])
            else:
                epochs[-1].append(r)
        for epoch, reads in enumerate(epochs):
            got = {(r.key, r.value) for r in reads}
            for txn, sent in txns.items():
                seen = [r for r in reads if (r.key, r.value) in {(k, v) for k, v, _ in sent}]
                if not seen:
                    continue
                first = seen[0]
                for key, value, offset in sent:
                    on_key = [r.offset for r in reads if r.key == key]
                    if (key, value) not in got and on_key and min(on_key) < offset < max(on_key):
                        found.add((process, epoch, txn, first.key, first.value, first.op, first.cindex,
                                   key, value, offset, min(on_key), max(on_key)))
    return found


def as_set(found: pd.DataFrame) -> set[tuple]:
    return set(found[list(tr.FOUND_COLUMNS)].itertuples(index=False, name=None))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(consumer_records(), st.integers(1, 4), st.randoms(use_true_random=False))
def test_whole_and_sliced_agree_with_the_walk(records, slices, rng):
    expected = walked(records)
    parts = txn_parts(records)
    polls, resets = split(consumer_rows(records))
    assert as_set(tr.match(tr.summarize(polls, resets, parts), parts)) == expected
    # any slicing, any order: as Spark's partitions would cut the polls
    order = list(range(len(polls)))
    rng.shuffle(order)
    cuts = sorted(rng.randrange(len(order) + 1) for _ in range(slices - 1))
    pieces = [polls.iloc[order[a:b]] for a, b in zip([0, *cuts], [*cuts, len(order)])]
    summaries = [tr.summarize(p, resets, parts) for p in pieces]
    summary = tr.Summary(*(pd.concat(part, ignore_index=True) for part in zip(*summaries)))
    assert as_set(tr.match(summary, parts)) == expected


@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(consumer_records(), st.randoms(use_true_random=False))
def test_bucket_rows_of_any_key_buckets_agree_with_the_walk(records, rng):
    """What the bucket pass gathers (bucket_rows per bucket of keys, every
    reset copied into each) gives the walk's partial reads."""
    resets = records[records["kind"] == RESET]
    keyed = records[records["kind"] != RESET]
    bucket_of = {k: rng.randrange(2) for k in KEYS}
    rows = [row for b in (0, 1)
            for row in tr.bucket_rows(pd.concat([keyed[keyed["key"].map(bucket_of) == b], resets]))]
    found = tr.from_bucket_rows(pd.concat(rows, ignore_index=True), limit=10**6).get(tr.NAME)
    expected = walked(records)
    assert (found["count"] if found else 0) == len(expected)
    got = {(e["process"], e["txn"], e["seen"]["key"], e["seen"]["value"], e["missing"]["key"],
            e["missing"]["value"], e["missing"]["offset"], *e["read_offsets"]) for e in (found or {"examples": []})["examples"]}
    assert got == {(p, t, sk, sv, k, v, o, lo, hi) for p, _, t, sk, sv, _, _, k, v, o, lo, hi in expected}


def test_the_walk_finds_something_in_the_random_records():
    """The strategy is not vacuous: some examples hold a partial read."""
    hits = []

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(consumer_records())
    def count(records):
        hits.append(bool(walked(records)))
    count()
    assert sum(hits) >= 5


def test_parts_sharing_a_value_on_two_keys_are_still_told_apart_by_key():
    """Validation refuses a value written twice, but the finder does not rely
    on it: the lookup by value falls back to a merge on (key, value)."""
    parts = pd.DataFrame({"txn": [1, 1, 2, 2], "key": [1, 2, 3, 4], "value": [7, 8, 7, 9], "offset": [0, 0, 0, 0]})
    polls = pd.DataFrame({"process": [5, 5, 5], "epoch": [0, 0, 0], "op": [3, 3, 4], "pos": [0, 1, 0],
                          "cindex": [10, 10, 11], "key": [3, 1, 2], "value": [7, 7, 7]})
    reads = tr._reads_of_parts(polls, parts)
    assert list(zip(reads["key"], reads["value"], reads["txn"])) == [(3, 7, 2), (1, 7, 1)]
