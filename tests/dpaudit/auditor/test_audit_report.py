"""Reports: Markdown and self-contained HTML from an AuditResult."""

import base64
import json
import re

from dpaudit.auditor import AuditResult, Witness
from dpaudit.report import plot_png, to_html, to_markdown, write_report


def _result(violation=True):
    w = Witness((0, 3), (1, 2), "item 0 at position 0", 900, 1000, 100, 1000, 0.87, 0.13, 1.9, 0.52,
                "explicit")
    return AuditResult("Demo(epsilon=1)", 1.0, 0.0, "each count moves by <= 1 either way", 1.9, 0.52,
                       violation, 0.05, w, w, 2000, 0.5, 1, 1, seed=3, witnesses=(w,))


def test_markdown_lists_claim_bounds_and_events():
    text = to_markdown(_result())
    assert "VIOLATION" in text and "| 1 | [0, 3] vs [1, 2] | item 0 at position 0 | 900/1000" in text
    assert "ε lower bound" in text


def test_html_is_self_contained_with_png(tmp_path):
    page = to_html(_result(violation=False))
    assert "no violation found" in page and "<script" not in page and "http" not in page
    data = re.search(r'data:image/png;base64,([A-Za-z0-9+/=]+)"', page).group(1)
    assert base64.b64decode(data).startswith(b"\x89PNG")
    assert plot_png(_result()).startswith(b"\x89PNG")
    write_report(_result(), tmp_path / "r.md")
    write_report(_result(), tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_result_json_round_trip():
    data = json.loads(_result().to_json())
    assert data["epsilon_witness"]["hits_p"] == 900 and data["confidence"] == 0.95
    assert "confidence 0.95" in str(_result())
