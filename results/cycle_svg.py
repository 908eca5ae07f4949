"""Drawing a dependency cycle as inline SVG: operations as nodes on a circle,
arrows labelled with the dependency (ww, wr, rw, process, realtime).

A cycle example from the checker looks like
{"cycle": [{"op": {...}, "edge": "wr", "to": j, "why": "..."}, ...], ...}:
entry i has an edge of the given type to entry `to` (by default the next one).
"""
from __future__ import annotations

import math
from typing import Any

from results.html import esc

EDGE_COLOURS = {"ww": "#1a5fb4", "wr": "#2e9c48", "rw": "#d1342f", "process": "#7a4fa8", "realtime": "#e8a33d"}
NODE_W, NODE_H = 150, 40
PARALLEL_GAP = 7
LABEL_AT = 0.35


def op_of(entry: Any) -> dict[str, Any]:
    op = entry.get("op") if isinstance(entry, dict) else None
    return op if isinstance(op, dict) else {}


def edge_target(entry: dict[str, Any], position: int, entries: list[Any]) -> int:
    """Which entry an edge points to: `to` as an op index, else as a position, else the next entry."""
    to = entry.get("to")
    if isinstance(to, int) and not isinstance(to, bool):
        for j, other in enumerate(entries):
            if op_of(other).get("index") == to:
                return j
        if 0 <= to < len(entries):
            return to
    return (position + 1) % len(entries)


def node_label(op: dict[str, Any], name: Any, position: int) -> tuple[str, str]:
    """("T1: 42 p0 send", value) — the checker's name for the op when it gives one."""
    prefix = f"{name}: " if isinstance(name, str) and name else ""
    first = f"{prefix}{op.get('index', 'T' + str(position + 1))} p{op.get('process', '?')} {op.get('f', '')}"
    value = op.get("value")
    second = esc(value)[:26] if value is not None else str(op.get("type", ""))
    return esc(first), second


def layout(count: int, radius: float, centre: tuple[float, float]) -> list[tuple[float, float]]:
    return [(centre[0] + radius * math.cos(2 * math.pi * i / count - math.pi / 2),
             centre[1] + radius * math.sin(2 * math.pi * i / count - math.pi / 2)) for i in range(count)]


def boundary_point(start: tuple[float, float], end: tuple[float, float]) -> tuple[float, float]:
    """Where the line from start's centre toward end leaves start's box."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    if dx == 0 and dy == 0:
        return start
    scale = min((NODE_W / 2) / abs(dx) if dx else math.inf, (NODE_H / 2) / abs(dy) if dy else math.inf)
    return start[0] + dx * scale, start[1] + dy * scale


def edge_svg(source: tuple[float, float], target: tuple[float, float], kind: str, why: str) -> str:
    x1, y1 = boundary_point(source, target)
    x2, y2 = boundary_point(target, source)
    # shift sideways so that a->b and b->a do not draw on top of each other
    length = math.hypot(x2 - x1, y2 - y1) or 1
    nx, ny = (y1 - y2) / length * PARALLEL_GAP, (x2 - x1) / length * PARALLEL_GAP
    x1, y1, x2, y2 = x1 + nx, y1 + ny, x2 + nx, y2 + ny
    colour = EDGE_COLOURS.get(kind, "#555")
    # label 40% along the edge, so that opposite edges between two nodes label apart
    mx, my = x1 + (x2 - x1) * LABEL_AT, y1 + (y2 - y1) * LABEL_AT
    return (f"<g class='edge' data-edge='{esc(kind)}'><title>{esc(why)}</title>"
            f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' stroke='{colour}' stroke-width='2' "
            f"marker-end='url(#arrow-{esc(kind) if kind in EDGE_COLOURS else 'other'})'/>"
            f"<rect x='{mx - 30:.1f}' y='{my - 9:.1f}' width='60' height='16' rx='4' fill='#fff' stroke='{colour}'/>"
            f"<text x='{mx:.1f}' y='{my + 3:.1f}' font-size='11' text-anchor='middle' fill='{colour}'>{esc(kind)}</text></g>")


def arrow_markers() -> str:
    markers = []
    for kind, colour in list(EDGE_COLOURS.items()) + [("other", "#555")]:
        markers.append(f"<marker id='arrow-{kind}' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' "
                       f"markerHeight='7' orient='auto-start-reverse'><path d='M0,0L10,5L0,10z' fill='{colour}'/></marker>")
    return "<defs>" + "".join(markers) + "</defs>"


def cycle_svg(cycle: list[Any]) -> str:
    """The drawing of one cycle; entries that are not objects still get a node."""
    count = len(cycle)
    if count == 0:
        return ""
    radius = 0 if count == 1 else max(90, count * 40)
    size = 2 * radius + NODE_W + 80
    centre = (size / 2, size / 2)
    points = layout(count, radius, centre)
    # crop to the nodes (two nodes on a circle leave a lot of it empty)
    left, top = min(x for x, _ in points) - NODE_W / 2 - 40, min(y for _, y in points) - NODE_H / 2 - 10
    width = max(x for x, _ in points) - left + NODE_W / 2 + 40
    height = max(y for _, y in points) - top + NODE_H / 2 + 10
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
             f"viewBox='{left:.0f} {top:.0f} {width:.0f} {height:.0f}' class='cycle'>",
             arrow_markers()]
    for i, entry in enumerate(cycle):
        entry = entry if isinstance(entry, dict) else {}
        j = edge_target(entry, i, cycle)
        parts.append(edge_svg(points[i], points[j], str(entry.get("edge", "?")), str(entry.get("why", ""))))
    for i, entry in enumerate(cycle):
        op = op_of(entry)
        first, second = node_label(op, entry.get("name") if isinstance(entry, dict) else None, i)
        x, y = points[i]
        link = f"#h{op['index']}" if isinstance(op.get("index"), int) else None
        box = (f"<rect x='{x - NODE_W / 2:.1f}' y='{y - NODE_H / 2:.1f}' width='{NODE_W}' height='{NODE_H}' rx='6' "
               f"fill='#f7f7ff' stroke='#444'/><text x='{x:.1f}' y='{y - 3:.1f}' font-size='11' text-anchor='middle'>"
               f"{first}</text><text x='{x:.1f}' y='{y + 12:.1f}' font-size='9' text-anchor='middle' fill='#555'>{second}</text>")
        parts.append(f"<a href='{link}'>{box}</a>" if link else box)
    parts.append("</svg>")
    return "".join(parts)
