"""Reports: Markdown and self-contained HTML from an AuditResult, with the full evidence."""

import base64
import json
import re

from dpaudit.auditor import AuditResult, OutcomeSet, Witness
from dpaudit.auditor.values.outcome_events import ItemAt
from dpaudit.report import plot_png, to_html, to_markdown, write_report

MANY = OutcomeSet(frozenset((i, j) for i in range(4) for j in range(4) if i != j))


def _result(violation=True):
    w = Witness(
        (0, 3), (1, 2), ItemAt(0, 0), 900, 1000, 100, 1000, 0.87, 0.13, 1.9, 0.52, "explicit", 1.2
    )
    v = Witness(
        (0, 3), (1, 2), MANY, 500, 1000, 400, 1000, 0.47, 0.43, 0.05, 0.0, "random", 3.0, q_low=0.37
    )
    return AuditResult(
        "Demo(epsilon=1)",
        1.0,
        0.0,
        "each count moves by <= 1 either way",
        1.9,
        0.52,
        violation,
        0.05,
        w,
        w,
        2000,
        0.5,
        1,
        2,
        seed=3,
        witnesses=(w, v),
        detectable_epsilon=1.2,
        separated=True,
        evidence={
            "command": "dpaudit audit Demo --seed 3",
            "date": "2026-11-24",
            "versions": {"dpaudit": "0.1.0"},
            "catalog": {"name": "demo", "bug": "no noise", "reference": "x"},
        },
    )


def test_markdown_lists_facts_headline_and_full_events():
    text = to_markdown(_result())
    assert "VIOLATION" in text
    assert (
        "| 1 | headline ε+δ | [0, 3] vs [1, 2] | explicit | item 0 at position 0 | 900/1000" in text
    )
    # the 12-outcome event is listed in full, not truncated
    assert "(12 outcomes)" not in text and "(3, 2)" in text
    for fact in (
        "seed:** 3",
        "dpaudit audit Demo --seed 3",
        "no noise",
        "dpaudit 0.1.0",
        "2026-11-24",
        "each count moves by <= 1",
    ):
        assert fact in text


def test_html_is_self_contained_with_png(tmp_path):
    page = to_html(_result(violation=False))
    assert "PASSED" in page and "<script" not in page and "http" not in page
    assert "background:#fff3cd" in page  # the headline row is marked
    data = re.search(r'data:image/png;base64,([A-Za-z0-9+/=]+)"', page).group(1)
    assert base64.b64decode(data).startswith(b"\x89PNG")
    assert plot_png(_result()).startswith(b"\x89PNG")
    write_report(_result(), tmp_path / "r.md")
    write_report(_result(), tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_result_json_round_trip_keeps_every_outcome():
    result = _result()
    data = json.loads(result.to_json())
    assert data["epsilon_witness"]["hits_p"] == 900 and data["confidence"] == 0.95
    assert data["verdict"] == "violation" and data["exit_status"] == 1
    assert len(data["witnesses"][1]["event"]["outcomes"]) == 12
    again = AuditResult.from_dict(data)
    assert again.witnesses == result.witnesses and again.epsilon_witness == result.epsilon_witness
    assert again.verdict == result.verdict and again.detectable_epsilon == result.detectable_epsilon
    assert "confidence 0.95" in str(result)
