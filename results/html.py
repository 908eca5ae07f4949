"""HTML building blocks shared by the report and the index.

Everything that comes from a run (values, error messages, node names, keys) is
untrusted and goes through `esc`. Pages are self-contained: inline CSS, no
external fetches, so they work from file:// and inside a CI artifact.
"""
from __future__ import annotations

import html
import json
from typing import Any, Iterable
from urllib.parse import quote

VERDICT_COLOURS = {"valid": "#2e9c48", "invalid": "#d1342f", "unknown": "#e8a33d", "incomplete": "#888888",
                   "expected-under-faults": "#6a4c93"}
MAX_GENERIC_ITEMS = 50
MAX_TEXT = 2000

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:1200px;margin:0 auto;padding:1em 1.5em 4em}
h1{font-size:1.5em;margin:.4em 0} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
h3{margin-bottom:.3em} a{color:#1a5fb4}
table{border-collapse:collapse;margin:.5em 0;background:#fff} td,th{border:1px solid #ddd;padding:.25em .55em;text-align:left;vertical-align:top;font-size:.92em}
th{background:#f0f0f0}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.86em}
pre{background:#fff;border:1px solid #ddd;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.badge{display:inline-block;padding:.15em .6em;border-radius:.8em;color:#fff;font-weight:600;font-size:.9em}
.verdict{font-size:1.6em;padding:.25em .9em}
.tag{display:inline-block;background:#eee;border-radius:.3em;padding:0 .35em;margin:0 .15em .15em 0;font-size:.85em}
.tag.bad{background:#f8d0ce;color:#8a1410}
.muted{color:#777} .expected{color:#6a4c93;font-size:.85em} .example{background:#fff;border:1px solid #e2e2e2;border-radius:.4em;padding:.5em .8em;margin:.6em 0}
.plot img{max-width:100%;border:1px solid #e2e2e2;background:#fff}
.history .line{white-space:pre;display:block;padding:0 .3em}
.history .line:target{background:#fff3a8;outline:1px solid #e0c200}
.history .ref{background:#fff8d6}
ul.generic{margin:.2em 0;padding-left:1.2em} ul.generic li{margin:.1em 0}
svg text{font-family:ui-monospace,Menlo,Consolas,monospace}
.scroll{overflow-x:auto;max-width:100%}
nav.links a{margin-right:1em}
#faults p{margin:.3em 0}
"""


def esc(value: Any) -> str:
    """Escape anything for HTML text or attribute context (quotes included)."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT} more characters)"
    return html.escape(text, quote=True)


def href(path: str) -> str:
    """A relative link to a file, percent-encoded, safe inside an attribute."""
    return html.escape(quote(path, safe="/#=?&"), quote=True)


def page(title: str, body: str, script: str = "") -> str:
    script_tag = f"<script>{script}</script>" if script else ""
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'><link rel=icon href='data:,'>"
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}</main>{script_tag}</body></html>"
    )


def badge(verdict: str, extra_class: str = "") -> str:
    colour = VERDICT_COLOURS.get(verdict, "#555")
    return f"<span class='badge {extra_class}' style='background:{colour}' data-verdict='{esc(verdict)}'>{esc(verdict)}</span>"


def tags(names: Iterable[str], bad: Iterable[str] = ()) -> str:
    bad = set(bad)
    return "".join(f"<span class='tag{' bad' if n in bad else ''}'>{esc(n)}</span>" for n in names)


def table(headers: list[str], rows: Iterable[list[str]], attrs: str = "") -> str:
    """Cells are already HTML (callers escape what they put in)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table {attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def generic(value: Any, depth: int = 0) -> str:
    """Render any JSON value readably: fields the report does not know still show."""
    if isinstance(value, dict) and value and depth < 4:
        items = list(value.items())[:MAX_GENERIC_ITEMS]
        more = f"<li class=muted>… {len(value) - len(items)} more</li>" if len(value) > len(items) else ""
        return "<ul class=generic>" + "".join(
            f"<li><b>{esc(str(k))}</b>: {generic(v, depth + 1)}</li>" for k, v in items) + more + "</ul>"
    if isinstance(value, list) and value and depth < 4 and any(isinstance(v, (dict, list)) for v in value):
        items = value[:MAX_GENERIC_ITEMS]
        more = f"<li class=muted>… {len(value) - len(items)} more</li>" if len(value) > len(items) else ""
        return "<ul>" + "".join(f"<li>{generic(v, depth + 1)}</li>" for v in items) + more + "</ul>"
    return f"<code>{esc(value)}</code>"


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"
