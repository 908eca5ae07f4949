"""The verdict on an error a child process reported: its reply's `how` says who
decides. "definite" and "indefinite" decide (the child knows better: a call that never
left the client, an abort that succeeded, a commit whose outcome is unknown); "table"
looks the name up in the client's error table, then among the harness's own outcomes
(OP_TIMEOUT, CLIENT_CRASH). Unknown names are indefinite."""
from __future__ import annotations

from workloads.errors import FAIL, HARNESS_OUTCOMES, INFO, Classified, Outcome

ErrorTable = dict[str, tuple[Outcome, str]]


def classify_reply(table: ErrorTable, name: str, message: str, how: str) -> Classified:
    if how == "definite":
        return Classified(FAIL, name, message)
    if how == "indefinite":
        return Classified(INFO, name, message)
    outcome, _why = {**HARNESS_OUTCOMES, **table}.get(name, (INFO, "not in the table: assume it may have happened"))
    return Classified(outcome, name, message)
