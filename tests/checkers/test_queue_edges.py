"""The queue's per-bucket dependency edges and their shrinking (pure pandas,
no Spark): chains of single-key senders contract into one ww edge, chain
ends go, and nothing that could close a cycle is lost."""
from __future__ import annotations

import pandas as pd

from checkers.queue.edges import edges
from checkers.history.queue_records import COLUMNS, FS, NULL, OK, POLL, SEND, SINGLE_KEY_WRITER
from checkers.queue.frame import proven_sends
from checkers.queue.versions import observations


def bucket(*ops) -> pd.DataFrame:
    """ops: (op id, f, [(kind, key, offset, value)]); single-key flags from f and keys."""
    rows = []
    for op, f, records in ops:
        keys = {key for kind, key, _, _ in records if kind == SEND}
        single = SINGLE_KEY_WRITER if f == "send" and len(keys) == 1 else 0
        for pos, (kind, key, offset, value) in enumerate(records):
            rows.append(dict(key=key, offset=offset, value=value, op=op, process=op, kind=kind, otype=OK,
                             fcode=FS.index(f), pos=pos << 31, itime=op, ctime=op + 1, cindex=op + 1,
                             flags=single))
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype("int64")


def triples(found: pd.DataFrame) -> set:
    return {(int(r.src), int(r.dst), r.kind, int(r.key), int(r.offset)) for r in found.itertuples()}


def edges_of(frame: pd.DataFrame, shrink: bool = True) -> pd.DataFrame:
    return edges(frame, observations(frame, proven_sends(frame)), shrink)


def send(op, key, offset, value):
    return (op, "send", [(SEND, key, offset, value)])


# key 1: a, b, T, c, d, U (offsets 0..5); key 2: U, e, T. T and U write both keys.
CYCLE = [send(10, 1, 0, 100), send(11, 1, 1, 101),
         (20, "txn", [(SEND, 1, 2, 102), (SEND, 2, 2, 202)]),
         send(12, 1, 3, 103), send(13, 1, 4, 104),
         (30, "txn", [(SEND, 1, 5, 105), (SEND, 2, 0, 200)]),
         send(14, 2, 1, 201)]


def test_single_key_chains_contract_and_ends_go():
    found = edges_of(bucket(*CYCLE))
    # T -> (c, d) -> U on key 1 is one edge; U -> e -> T on key 2 is one edge;
    # a, b (no way in) are gone
    assert triples(found) == {(20, 30, "ww", 1, 5), (30, 20, "ww", 2, 2)}
    row = found[found["src"] == 20].iloc[0]
    assert (row["prev"], row["value"]) == (102, 105)    # T wrote 102, U wrote 105 after it


def test_without_shrinking_every_step_stays():
    assert len(edges_of(bucket(*CYCLE), shrink=False)) == 5 + 2


def test_sender_twice_on_a_chain_is_kept():
    # v writes offsets 0 and 2 of key 1, u writes offset 1 between: a G0 cycle v -> u -> v
    frame = bucket((40, "send", [(SEND, 1, 0, 1), (SEND, 1, 2, 3)]), send(41, 1, 1, 2))
    assert triples(edges_of(frame)) == {(40, 41, "ww", 1, 1), (41, 40, "ww", 1, 2)}


def test_sender_read_by_a_txn_is_kept_and_pure_polls_dropped():
    frame = bucket(send(50, 1, 0, 1), send(51, 1, 1, 2),
                   (60, "txn", [(POLL, 1, 0, 1), (SEND, 2, 0, 9)]),
                   (70, "poll", [(POLL, 1, 1, 2)]))
    # 50 is read by txn 60 (kept, so 50 is no link); 51's only reader is a pure poll
    assert triples(edges_of(frame)) == {(50, 60, "wr", 1, 0)}
    assert (70 not in set(edges_of(frame)["dst"]))


def test_unknown_offset_is_no_edge():
    frame = bucket((80, "txn", [(SEND, 1, NULL, 5), (SEND, 2, 0, 6)]), send(81, 1, 0, 7))
    assert triples(edges_of(frame)) == set()
