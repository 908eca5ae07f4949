"""Plain words for the list-append checker's non-cycle anomalies (cycles are
worded by checkers.cycles): one template per type over the example's fields,
with operations and lists rendered for reading."""

from __future__ import annotations

import json
from collections.abc import Callable

TEMPLATES = {
    "internal": "{op} read key {key} as {read} (micro-op {pos}), but its own earlier reads "
                "and appends say {expected}",
    "future-read": "{op} read {read} from key {key} (micro-op {pos}) before appending it itself",
    "duplicate-elements": "{op} read key {key} holding {read} more than once (micro-op {pos})",
    "incompatible-order": "{op} read key {key} as {read}, which is not a prefix of the "
                          "longest read {longest}",
    "G1a": "{op} read key {key} as {read}, containing {element}, appended by {writer} "
           "which failed",
    "G1b": "{op} read key {key} as {read}, ending in {element}: an intermediate state of "
           "{writer}, which appended more to the key",
    "dirty-update": "on key {key}, {op} appended {value} right after {aborted}, appended by "
                    "{aborted_op} which failed",
    "lost-update": "{ops} all read key {key} as {version} and then appended to it: each "
                   "should have seen the others' appends",
}
LISTS = ("read", "expected", "longest", "version")
OPS = ("op", "writer", "aborted_op")


def describe_op(op: dict | None) -> str:
    if not op:
        return "an unknown operation"
    return f"op {op['index']} (process {op['process']}, {op['type']})"


def describe_list(value) -> str:
    xs = json.loads(value) if isinstance(value, str) else value
    return "[" + ", ".join(map(str, xs or [])) + "]"


def _fields(example: dict) -> dict:
    fields = dict(example)
    for name in LISTS:
        if name in fields:
            fields[name] = describe_list(fields[name])
    for name in OPS:
        if name in fields:
            fields[name] = describe_op(fields[name])
    if "ops" in fields:
        fields["ops"] = ", ".join(map(describe_op, fields["ops"]))
    return fields


def _explainer(template: str) -> Callable[[dict], str]:
    return lambda example: template.format(**_fields(example))


EXPLAIN = {kind: _explainer(template) for kind, template in TEMPLATES.items()}
