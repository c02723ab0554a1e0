"""``dpaudit audit``: exit codes, default mechanism, JSON and report files."""

import json

import pytest

from dpaudit.cli import main


def test_default_audit_runs_and_passes(capsys):
    # The README's main job. No violation expected: false failure <= alpha = 0.05 at the
    # default seed, which is fixed, so this is deterministic.
    status = main(["audit", "--samples", "100000", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0 and "no violation found" in out


def test_named_mechanism_json_and_report(tmp_path, capsys):
    js, md, page = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.html"
    status = main(["audit", "GumbelTopK", "--k", "2", "--epsilon", "0.5", "--samples", "50000",
                   "--no-progress", "--counts", "3,2,2,0", "--json", str(js), "--report", str(md)])
    assert status == 0
    data = json.loads(js.read_text())
    assert data["claim"]["epsilon"] == pytest.approx(1.0) and data["violation"] is False
    assert "# Privacy audit" in md.read_text()
    main(["audit", "GumbelTopK", "--k", "1", "--epsilon", "1", "--samples", "20000", "--no-progress",
          "--report", str(page)])
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "data:image/png;base64," in text


def test_violation_exit_status(capsys):
    status = main(["audit", "catalog:em-non-monotone", "--pair", "0,3,3,3,3;1,2,2,2,2",
                   "--samples", "100000", "--no-progress"])
    assert status == 1 and "VIOLATION" in capsys.readouterr().out


def test_pair_that_is_not_a_neighbour_is_a_usage_error(capsys):
    status = main(["audit", "GumbelTopK", "--k", "1", "--epsilon", "1", "--pair", "0,0;3,0",
                   "--samples", "10000", "--no-progress"])
    assert status == 2


@pytest.mark.parametrize("argv", [
    ["audit", "NoSuchMechanism"],
    ["audit", "catalog:nope"],
    ["audit", "GumbelTopK", "--k", "0", "--epsilon", "1"],
    ["audit", "GumbelTopK", "--bogus", "1"],
    ["audit", "--k", "3"],
    ["audit", "GumbelTopK", "--k", "1", "--epsilon", "1", "--samples", "5"],
    ["audit", "GumbelTopK", "--k", "1", "--epsilon", "1", "--counts", "a,b"],
    ["audit", "GumbelTopK", "--k", "1", "--epsilon", "1", "--pair", "1,2"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
