"""The queue's dependency edges of one bucket of keys, already shrunk where
that is safe (see docs/checkers-cycles.md).

Edges between operations (vertex = invoke index):
- ww: each key's version order is its dense offset order; the writer of one
  value precedes the writer of the next value (values with a known writer).
- wr: the writer of a value precedes every operation that polled it.

With `shrink` (no process/realtime edges in the graph):
- edges into pure polls are dropped: a `poll` operation writes nothing, so
  it has no outgoing edge and closes no cycle;
- a *link* is a `send` operation whose sends all went to this key, that
  appears once in the key's chain of writers and whose values no remaining
  edge reads: its only edges are its two ww neighbours on this chain. Runs of
  links are contracted: u -> l1 -> ... -> lk -> w becomes one ww edge u -> w
  (ww order within one key is transitive, so "u's write precedes w's write"
  still holds and explains it), and runs at either end of a chain, which
  have no way in or no way out, are dropped. (A run between two writes of
  the same op is left alone: contracted, it would be a self-loop.)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from checkers.history.queue_records import F_POLL, FAIL, POLL, SEND, SINGLE_KEY_WRITER
from checkers.queue.frame import previous, sort_rows
from checkers.queue.writes import readers

EDGE_COLUMNS = ("src", "dst", "kind", "key", "value", "offset", "prev")


def writers(bucket: pd.DataFrame) -> pd.DataFrame:
    """(key, value) -> the op that sent it; failed sends wrote nothing."""
    sends = bucket[(bucket["kind"] == SEND) & (bucket["otype"] != FAIL)]
    return sends[["key", "value", "op", "flags"]].rename(columns={"op": "writer"})


def chains(obs: pd.DataFrame, written: pd.DataFrame) -> pd.DataFrame:
    """Each key's values with a known writer, in offset order."""
    order = obs.groupby(["key", "offset"], as_index=False)["value"].min()
    return sort_rows(order.merge(written, on=["key", "value"]), ["key", "offset"])


def ww_edges(chain: pd.DataFrame) -> pd.DataFrame:
    """Consecutive written values of each key, between different writers."""
    has, prev = previous(chain, ["key"], ["writer", "value"])
    step = has & (prev["writer"] != chain["writer"].to_numpy())
    return pd.DataFrame({"src": prev["writer"][step], "dst": chain["writer"].to_numpy()[step], "kind": "ww",
                         "key": chain["key"].to_numpy()[step], "value": chain["value"].to_numpy()[step],
                         "offset": chain["offset"].to_numpy()[step], "prev": prev["value"][step]})


def wr_edges(bucket: pd.DataFrame, written: pd.DataFrame, drop_polls: bool) -> pd.DataFrame:
    """The writer of each polled value precedes the op that polled it."""
    polls = bucket[bucket["kind"] == POLL]
    if drop_polls:
        polls = polls[polls["fcode"] != F_POLL]
    pairs = readers(polls)[["op", "key", "value", "offset"]].merge(written, on=["key", "value"])
    pairs = pairs[pairs["writer"] != pairs["op"]]
    return pd.DataFrame({"src": pairs["writer"].to_numpy(), "dst": pairs["op"].to_numpy(), "kind": "wr",
                         "key": pairs["key"].to_numpy(), "value": pairs["value"].to_numpy(),
                         "offset": pairs["offset"].to_numpy(), "prev": None})


def links(chain: pd.DataFrame, wr: pd.DataFrame) -> np.ndarray:
    """Ops that are links (see the module docstring)."""
    has, prev = previous(chain, ["key"], ["writer"])
    runs = chain[~has | (prev["writer"] != chain["writer"].to_numpy())]   # collapse repeats
    once = runs.groupby("writer")["key"].transform("size") == 1
    single = (runs["flags"].to_numpy() & SINGLE_KEY_WRITER) != 0
    candidates = runs["writer"].to_numpy()[once.to_numpy() & single]
    return np.setdiff1d(candidates, wr["src"].to_numpy())


def contract(ww: pd.DataFrame, link_ops: np.ndarray) -> pd.DataFrame:
    """Replace runs of links in each key's ww chain by one edge; drop runs
    at the ends of a chain. `ww` is in chain order."""
    if ww.empty or not len(link_ops):
        return ww
    src_kept = ~np.isin(ww["src"].to_numpy(), link_ops)
    dst_kept = ~np.isin(ww["dst"].to_numpy(), link_ops)
    segment = pd.Series(src_kept.astype(np.int64)).groupby(ww["key"].to_numpy()).cumsum().to_numpy()
    framed = ww.assign(_seg=segment, _dst_kept=dst_kept)[segment > 0]
    grouped = framed.groupby(["key", "_seg"], sort=False)
    first, last = grouped.head(1).reset_index(drop=True), grouped.tail(1).reset_index(drop=True)
    closed = last["_dst_kept"].to_numpy()
    # u -> link -> u (u wrote on both sides of the link) would become a
    # self-loop that hides the link: such runs stay as they are
    loop = closed & (first["src"].to_numpy() == last["dst"].to_numpy())
    merged = closed & ~loop
    contracted = pd.DataFrame({"src": first["src"].to_numpy()[merged], "dst": last["dst"].to_numpy()[merged],
                               "kind": "ww", "key": last["key"].to_numpy()[merged],
                               "value": last["value"].to_numpy()[merged],
                               "offset": last["offset"].to_numpy()[merged],
                               "prev": first["prev"].to_numpy()[merged]})
    if not loop.any():
        return contracted
    kept = first.loc[loop, ["key", "_seg"]].merge(framed, on=["key", "_seg"])
    return pd.concat([contracted, kept[list(EDGE_COLUMNS)]], ignore_index=True)


def edges(bucket: pd.DataFrame, obs: pd.DataFrame, shrink: bool) -> pd.DataFrame:
    """ww + wr edges of this bucket (EDGE_COLUMNS), shrunk when `shrink`."""
    written = writers(bucket)
    chain = chains(obs, written)
    ww, wr = ww_edges(chain), wr_edges(bucket, written, drop_polls=shrink)
    if shrink:
        ww = contract(ww, links(chain, wr))
    both = pd.concat([ww, wr], ignore_index=True)
    return both[list(EDGE_COLUMNS)]
