"""``dpaudit select``: a mechanism run on a real log (shared data sets, CSV/TSV/Parquet files)."""

import duckdb
import pytest

from dpaudit import data
from dpaudit.cli import main

SHARED = ["lastfm", "gowalla", "retail", "amazon-beauty"]


def _released_counts(out):
    return [
        int(line.rsplit("(count ", 1)[1].rstrip(")").replace(",", ""))
        for line in out.splitlines()
        if "(count " in line
    ]


@pytest.mark.parametrize("name", SHARED)
def test_released_items_are_the_top_counts_at_large_epsilon(name, capsys):
    if name not in data.available_datasets():
        pytest.skip(f"shared data set {name} not beside the checkout")
    # ε = 50 per selection: Gumbel noise of scale 0.02 cannot reorder distinct counts, and
    # the top 5 sit far above the threshold, so the release is the true top 5 (by count).
    status = main(
        [
            "select",
            "LimitDomain",
            "--data",
            name,
            "--k",
            "5",
            "--kbar",
            "20",
            "--epsilon",
            "50",
            "--delta",
            "1e-6",
            "--seed",
            "0",
        ]
    )
    out = capsys.readouterr().out
    expected = sorted(data.load_histogram(name).tolist(), reverse=True)[:5]  # numpy route
    assert status == 0 and _released_counts(out) == expected
    assert "claim: (250, 1e-06)-DP" in out and "threshold (noise-free)" in out


def test_any_csv_or_parquet_with_named_columns(tmp_path, capsys):
    csv = tmp_path / "log.csv"
    csv.write_text("uid,song\n1,a\n2,a\n3,a\n1,b\n2,b\n1,c\n1,a\n")
    argv = [
        "select",
        "GumbelTopK",
        "--k",
        "2",
        "--epsilon",
        "40",
        "--seed",
        "1",
        "--user-column",
        "uid",
        "--item-column",
        "song",
    ]
    assert main([*argv, "--data", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "1. a  (count 3)" in out and "2. b  (count 2)" in out  # distinct users per item
    parquet = tmp_path / "log.parquet"
    with duckdb.connect() as connection:
        connection.execute(
            f"COPY (SELECT * FROM read_csv('{csv}')) TO '{parquet}' (FORMAT parquet)"
        )
    assert main([*argv, "--data", str(parquet)]) == 0
    assert "1. a  (count 3)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, extra, message",
    [
        (None, [], "no file"),
        ("user,item\n", [], "holds no user–item rows"),
        ("person,thing\n1,2\n", [], "has no column 'user'"),
        ("uid,song\n1,a\n", ["--item-column", "track"], "has no column 'user', 'track'"),
    ],
)
def test_bad_logs_are_one_line_errors(content, extra, message, tmp_path, capsys):
    path = tmp_path / "log.csv"
    if content is not None:
        path.write_text(content)
    status = main(
        ["select", "GumbelTopK", "--k", "1", "--epsilon", "1", "--data", str(path), *extra]
    )
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.count("\n") == 1


def test_unknown_data_set_name(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DPAUDIT_DATA", str(tmp_path))
    assert main(["select", "GumbelTopK", "--k", "1", "--epsilon", "1", "--data", "nope"]) == 2
    assert "no data set 'nope'" in capsys.readouterr().err
