"""The operations of a read history as a pandas DataFrame (OP_COLUMNS).

Built column by column, which is quicker than handing pandas the rows, and
with the very column types pandas infers from rows (the checkers' results
depend on them): int64 where every value fits, Int64 for the completion
columns, objects otherwise. Whatever an inexpensive test cannot settle is
left to pandas' own inference.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from checkers.history.op_row import ROW_COLUMNS as OP_COLUMNS

_INT = frozenset(("process", "invoke_index", "invoke_time", "invoke_line"))
_NULLABLE_INT = ("complete_index", "complete_time", "complete_line")
_EXACT_IN_FLOAT = 1 << 53


def _int_column(values: tuple) -> np.ndarray | tuple:
    """int64 as pandas would infer it; out of range: left to pandas."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return values


def _nullable_int_column(values: tuple) -> pd.api.extensions.ExtensionArray:
    """Int64, as the float64 (with NaN for None) that pandas infers, cast to
    Int64: the same numbers wherever a float holds them exactly."""
    column = np.fromiter(values, dtype=object, count=len(values))
    missing = column == None  # noqa: E711 - elementwise, in C
    if not missing.any():
        return pd.Series(_int_column(values)).astype("Int64").array
    column[missing] = 0
    try:
        present = column.astype(np.int64)
    except OverflowError:
        present = None
    if present is None or np.abs(present).max(initial=0) >= _EXACT_IN_FLOAT:
        return pd.Series(values).astype("Int64").array
    return pd.arrays.IntegerArray(present, missing)


# pandas keeps a column holding any of these as objects, unchanged; a list
# would make it copy a list of lists element by element to find out.
_OPAQUE = frozenset((str, list, dict))


def _column(name: str, values: tuple):
    if name in _INT:
        return _int_column(values)
    if name in _NULLABLE_INT:
        return _nullable_int_column(values)
    if any(map(_OPAQUE.__contains__, map(type, values))):
        return np.fromiter(values, dtype=object, count=len(values))
    return list(values)     # numbers, bools, None: pandas infers the type


def ops_frame(rows: list[tuple]) -> pd.DataFrame:
    """`rows` (tuples of OP_COLUMNS, in invoke order) as a DataFrame sorted
    by invoke index, with the column types pandas infers from the rows."""
    if not rows:    # pandas gives the columns of an empty frame other types
        return _sorted_as_before(rows)
    ops = pd.DataFrame({name: _column(name, values) for name, values in zip(OP_COLUMNS, zip(*rows))})
    index = ops["invoke_index"].to_numpy()
    if not (index[1:] > index[:-1]).all():     # (not np.diff: it wraps around in uint64)
        return _sorted_as_before(rows)
    return ops


def _sorted_as_before(rows: list[tuple]) -> pd.DataFrame:
    """Index order is not file order: sort as the rows were first sorted
    (completions in file order, then the never-completed invokes in file
    order), so that ties come out the same."""
    complete_line = OP_COLUMNS.index("complete_line")
    order = sorted(range(len(rows)), key=lambda i: (rows[i][complete_line] is None,
                                                     rows[i][complete_line] or 0, i))
    ops = pd.DataFrame([rows[i] for i in order], columns=list(OP_COLUMNS))
    for c in _NULLABLE_INT:
        ops[c] = ops[c].astype("Int64")
    return ops.sort_values("invoke_index", ignore_index=True)
