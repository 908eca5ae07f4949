"""Plain words for one list-append finding (cycles are worded by
checkers.graph.cycles): op ids become op descriptions, and one template per type
says what happened where. What each type means in general is in
checkers/verdict/taxonomy.py."""

from __future__ import annotations

from collections.abc import Callable

TEMPLATES = {
    "internal": "{op} read key {key} as {read} (micro-op {pos}), but its own earlier reads "
                "and appends say {expected}",
    "future-read": "{op} read {element} from key {key} (micro-op {pos}) before appending it itself",
    "duplicate-elements": "{op} read key {key} as {read}, holding some elements more than once "
                          "(micro-op {pos})",
    "incompatible-order": "reads of key {key} saw {first} ({ops}) and {second}: neither is a "
                          "prefix of the other",
    "G1a": "{op} read key {key} as {read}, containing {element}, appended by {writer} "
           "which failed",
    "G1b": "{op} read key {key} as {read}, ending in {element}: an intermediate state of "
           "{writer}, which appended more to the key",
    "dirty-update": "on key {key}, {op} appended right after {aborted_op}, which failed "
                    "(elements {values})",
    "lost-update": "{ops} all read key {key} as {value} and then appended to it: each "
                   "should have seen the others' appends",
}
OP_FIELDS = ("op", "writer", "aborted_op")


def describe_op(op: dict | None) -> str:
    if not op:
        return "an unknown operation"
    return f"op {op['index']} (process {op.get('process', '?')}, {op.get('type', '?')})"


def describe_list(xs) -> str:
    return "[" + ", ".join(map(str, xs or [])) + "]"


def explain(kind: str, example: dict, op_info: Callable[[int], dict | None]) -> dict:
    """The example with its op ids replaced by op descriptions and an
    `explanation` sentence."""
    out = dict(example)
    for name in OP_FIELDS:
        if name in out and out[name] is not None:
            out[name] = op_info(out[name]) or {"index": out[name]}
    if "ops" in out:
        out["ops"] = [op_info(i) or {"index": i} for i in out["ops"]]
    words = {k: describe_list(v) if isinstance(v, list) and k != "ops" else v for k, v in out.items()}
    for name in OP_FIELDS:
        if name in out:
            words[name] = describe_op(out[name])
    if "ops" in out:
        words["ops"] = ", ".join(map(describe_op, out["ops"]))
    if kind == "incompatible-order":
        words["first"], words["second"] = (describe_list(v) for v in out["values"])
    template = TEMPLATES.get(kind)
    if template:
        out["explanation"] = template.format(**words)
    return out
