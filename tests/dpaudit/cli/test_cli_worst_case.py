"""``dpaudit worst-case``: exit 0 within the claim, 1 beyond it, 2 usage; text and JSON."""

import json

import pytest

import mechanisms as M
from dpaudit.catalog import TopStableThresholdNoHalf
from dpaudit.cli import main


def test_limit_domain_small_family_exits_0_and_writes_json(capsys, tmp_path):
    path = tmp_path / "worst.json"
    code = main(
        [
            "worst-case",
            "LimitDomain",
            "--k", "2", "--kbar", "3", "--epsilon", "1", "--delta", "1e-3",
            "--d", "4", "--max-count", "3", "--budget", "300",
            "--json", str(path),
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "within the claim" in out and "counts <= 3" in out
    data = json.loads(path.read_text())
    assert data["holds"] is True
    assert data["coverage"]["pairs_scored"] == 300
    assert data["coverage"]["family_pairs"] == 4**4 * 15
    assert len(data["pair"]) == 2


def test_broken_mechanism_exits_1(capsys, monkeypatch):
    monkeypatch.setattr(M, "TopStableThresholdNoHalf", TopStableThresholdNoHalf, raising=False)
    monkeypatch.setattr(M, "__all__", list(M.__all__) + ["TopStableThresholdNoHalf"])
    code = main(
        [
            "worst-case",
            "TopStableThresholdNoHalf",
            "--k", "2", "--kbar", "3", "--epsilon", "1", "--delta", "1e-3",
            "--d", "4", "--max-count", "60", "--budget", "500",
        ]
    )  # fmt: skip
    assert code == 1
    assert "EXCEEDS the claim" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--budget", "0"], "--budget must be an integer >= 1"),
        (["--d", "0"], "--d must be an integer >= 1"),
        (["--max-items", "zero"], "--max-items must be a positive integer"),
    ],
)
def test_usage_errors_exit_2(capsys, argv, message):
    mechanism = ["LimitDomain", "--k", "2", "--kbar", "3", "--epsilon", "1", "--delta", "1e-3"]
    code = main(["worst-case", *mechanism, *argv])
    assert code == 2
    assert message in capsys.readouterr().err
