"""Short displays of results for a REPL and a notebook: a one-line repr and an HTML table.

A result's ``__str__`` is the full report; its ``__repr__`` (what a REPL echoes) is one line
with the verdict and the headline numbers, and its ``_repr_html_`` (what Jupyter shows) a
small table. Standard library only.
"""

from __future__ import annotations

import html

__all__ = ["html_table", "one_line", "shorten"]

#: Colours of the verdict cell.
_COLOURS = {
    "VIOLATION": "#b00020",
    "VIOLATED": "#b00020",
    "DISAGREES": "#b00020",
    "PASSED": "#1b5e20",
    "HOLDS": "#1b5e20",
    "AGREES": "#1b5e20",
    "INCONCLUSIVE": "#8a6d00",
}


def shorten(text: str, limit: int = 90) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(kind: str, verdict: str, parts) -> str:
    """``<Kind VERDICT: part; part; ...>``."""
    return f"<{kind} {verdict}: " + "; ".join(p for p in parts if p) + ">"


def html_table(title: str, verdict: str, rows, note: str = "") -> str:
    """A two-column table: the title and coloured verdict, then ``(label, value)`` rows."""
    colour = _COLOURS.get(verdict.split()[0].upper(), "#333")
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(label)}</th>"
        f"<td style='text-align:left'>{html.escape(str(value))}</td></tr>"
        for label, value in rows
        if value not in (None, "")
    )
    caption = (
        f"<caption style='text-align:left'><b>{html.escape(title)}</b> — "
        f"<b style='color:{colour}'>{html.escape(verdict)}</b></caption>"
    )
    footer = f"<p style='max-width:60em'>{html.escape(note)}</p>" if note else ""
    return f"<div><table>{caption}{cells}</table>{footer}</div>"
