"""Per-key offset diagrams, drawn as inline SVG.

One row per operation that touched the key, in history order; one column per
offset. A cell shows the value the operation sent or polled at that offset,
coloured by value, so the same value reads as the same colour everywhere.
Offsets holding more than one value (inconsistent offsets) are outlined red;
values found at more than one offset (duplicates) are outlined orange.
Only a window of offsets around the anomalies is drawn.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from checkers.history.stream import Line, event_index
from results.html import esc

MARGIN_OFFSETS = 3
MAX_COLUMNS = 48
MAX_ROWS = 80
CELL_W, CELL_H, LABEL_W, HEADER_H = 34, 18, 230, 34


@dataclass
class Row:
    index: int                    # the completion's index in the history
    process: Any
    f: str
    time_ns: Any
    cells: dict[int, Any]         # offset -> value
    link: int | None              # the referenced index (invoke or completion) to link to, if any

    @property
    def referenced(self) -> bool:
        return self.link is not None


@dataclass
class KeyFocus:
    key: str
    lo: int
    hi: int
    anomaly_types: list[str]
    rows: list[Row] = field(default_factory=list)


def int_offsets(values: Any) -> list[int]:
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)] if isinstance(values, list) else []


def focus_windows(results: dict[str, Any]) -> dict[str, KeyFocus]:
    """Keys whose anomaly examples name offsets, with the window of offsets to draw."""
    found: dict[str, tuple[set[int], list[str]]] = {}
    anomalies = results.get("anomalies") if isinstance(results.get("anomalies"), dict) else {}
    for anomaly_type, body in anomalies.items():
        examples = body.get("examples") if isinstance(body, dict) else None
        for example in examples if isinstance(examples, list) else []:
            if not isinstance(example, dict) or "key" not in example:
                continue
            offsets = int_offsets(example.get("offsets"))
            if offsets:
                seen, types = found.setdefault(str(example["key"]), (set(), []))
                seen.update(offsets)
                if anomaly_type not in types:
                    types.append(anomaly_type)
    windows = {}
    for key, (offsets, types) in found.items():
        lo = max(0, min(offsets) - MARGIN_OFFSETS)
        hi = min(max(offsets) + MARGIN_OFFSETS, lo + MAX_COLUMNS - 1)
        windows[key] = KeyFocus(key, lo, hi, types)
    return windows


def cells_for_key(event: dict[str, Any], key: str) -> dict[int, Any]:
    """offset -> value for one key in a completed send/poll/txn (or list-append read)."""
    cells: dict[int, Any] = {}
    value = event.get("value")
    for micro in value if isinstance(value, list) else []:
        if not isinstance(micro, list) or len(micro) < 2:
            continue
        if micro[0] == "send" and len(micro) >= 3 and str(micro[1]) == key and isinstance(micro[2], list):
            if len(micro[2]) == 2 and isinstance(micro[2][0], int):
                cells[micro[2][0]] = micro[2][1]
        elif micro[0] == "poll" and isinstance(micro[1], dict):
            for pair in micro[1].get(key) or []:
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int):
                    cells[pair[0]] = pair[1]
        elif micro[0] == "r" and len(micro) >= 3 and str(micro[1]) == key and isinstance(micro[2], list):
            cells.update(enumerate(micro[2]))  # a list-append read: position = offset
    return cells


@dataclass
class OffsetCollector:
    focus: dict[str, KeyFocus]
    referenced: set[int]
    invokes: dict[Any, int] = field(default_factory=dict)  # process -> invoke index

    def feed(self, line: Line) -> None:
        event = line.event
        if not self.focus or event.get("process") == "nemesis":
            return
        index = event_index(event, line.no)
        if event.get("type") == "invoke":
            self.invokes[event.get("process")] = index
            return
        invoke_index = self.invokes.pop(event.get("process"), None)
        if event.get("type") != "ok":
            return
        link = index if index in self.referenced else invoke_index if invoke_index in self.referenced else None
        for focus in self.focus.values():
            cells = {o: v for o, v in cells_for_key(event, focus.key).items() if focus.lo <= o <= focus.hi}
            if cells and (link is not None or len(focus.rows) < MAX_ROWS):
                focus.rows.append(Row(index, event.get("process"), str(event.get("f")), event.get("time"), cells, link))


def value_colour(value: Any) -> str:
    digest = hashlib.md5(repr(value).encode()).digest()
    return f"hsl({digest[0] * 360 // 256},{55 + digest[1] % 25}%,{72 + digest[2] % 14}%)"


def conflicts(rows: list[Row]) -> tuple[set[int], set[str]]:
    """(offsets with more than one value, values at more than one offset)."""
    values_at: dict[int, set[str]] = {}
    offsets_of: dict[str, set[int]] = {}
    for row in rows:
        for offset, value in row.cells.items():
            values_at.setdefault(offset, set()).add(repr(value))
            offsets_of.setdefault(repr(value), set()).add(offset)
    return ({o for o, vs in values_at.items() if len(vs) > 1},
            {v for v, os in offsets_of.items() if len(os) > 1})


def cell_svg(x: int, y: int, value: Any, bad_offset: bool, duplicate: bool) -> str:
    stroke = "#d1342f" if bad_offset else "#f08c00" if duplicate else "#fff"
    width = 2.5 if bad_offset or duplicate else 1
    text = esc(value)
    label = text if len(text) <= 4 else text[:3] + "…"
    return (f"<g><title>value {text}</title><rect x='{x}' y='{y}' width='{CELL_W - 2}' height='{CELL_H - 2}' "
            f"fill='{value_colour(value)}' stroke='{stroke}' stroke-width='{width}'/>"
            f"<text x='{x + CELL_W / 2 - 1}' y='{y + CELL_H - 6}' font-size='9' text-anchor='middle'>{label}</text></g>")


def diagram_svg(focus: KeyFocus) -> str:
    offsets = range(focus.lo, focus.hi + 1)
    bad_offsets, duplicates = conflicts(focus.rows)
    width = LABEL_W + CELL_W * len(offsets) + 10
    height = HEADER_H + CELL_H * len(focus.rows) + 10
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' class='offsets' "
             f"data-key='{esc(focus.key)}'>",
             f"<text x='4' y='{HEADER_H - 8}' font-size='10' fill='#555'>op (index process f) \\ offset</text>"]
    for column, offset in enumerate(offsets):
        x = LABEL_W + column * CELL_W + CELL_W / 2
        colour = "#d1342f" if offset in bad_offsets else "#333"
        parts.append(f"<text x='{x}' y='{HEADER_H - 8}' font-size='10' text-anchor='middle' fill='{colour}'>{offset}</text>")
    for row_no, row in enumerate(focus.rows):
        y = HEADER_H + row_no * CELL_H
        label = (f"<text x='4' y='{y + CELL_H - 6}' font-size='10' font-weight='{'bold' if row.referenced else 'normal'}'>"
                 f"{row.index} p{esc(row.process)} {esc(row.f)}</text>")
        # only referenced ops have their history lines in the report's excerpts
        parts.append(f"<a href='#h{row.link}'>{label}</a>" if row.referenced else label)
        for column, offset in enumerate(offsets):
            if offset in row.cells:
                value = row.cells[offset]
                parts.append(cell_svg(LABEL_W + column * CELL_W, y, value, offset in bad_offsets, repr(value) in duplicates))
    parts.append("</svg>")
    return "".join(parts)
