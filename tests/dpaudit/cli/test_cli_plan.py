"""``dpaudit plan`` and ``dpaudit audit --from-samples``: files, exit statuses, one-line errors.

Audits use fixed seeds (deterministic); a correct mechanism is flagged with probability
<= alpha = 0.05 per seed, the catalog bug is missed on none of plan seeds 0-4 (measured).
"""

import json
import shutil

import pytest

from dpaudit.cli import main


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """A plan of GumbelTopK(k=2, ε=1) with CSV outcomes sampled from it (8 pairs, 20k)."""
    directory = tmp_path_factory.mktemp("cli") / "gumbel"
    status = main(
        [
            "plan",
            "GumbelTopK",
            "--k",
            "2",
            "--epsilon",
            "1",
            "--samples",
            "20000",
            "--max-pairs",
            "8",
            "--seed",
            "3",
            "--out",
            str(directory),
            "--simulate",
            "csv",
        ]
    )
    assert status == 0
    return directory


def _error_line(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line
    return err


def test_correct_mechanism_is_not_flagged(simulated, capsys):
    capsys.readouterr()
    status = main(["audit", "--from-samples", str(simulated), "--json", "-"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)  # nothing but JSON on stdout
    assert status in (0, 3) and data["exit_status"] == status and data["verdict"] != "violation"
    assert (
        "(offline files)" in captured.err and data["evidence"]["engine"] == "offline outcome files"
    )


def test_catalog_bug_is_flagged(tmp_path, capsys):
    out = tmp_path / "bug"
    assert (
        main(
            [
                "plan",
                "catalog:em-non-monotone",
                "--samples",
                "200000",
                "--max-pairs",
                "20",
                "--out",
                str(out),
                "--simulate",
                "parquet",
            ]
        )
        == 0
    )
    assert len(json.loads((out / "plan.json").read_text())["pairs"]) == 20
    report = tmp_path / "r.md"
    status = main(["audit", "--from-samples", str(out), "--report", str(report)])
    assert status == 1 and "VIOLATION" in capsys.readouterr().out
    assert "# Privacy audit" in report.read_text()


def test_plan_without_a_mechanism(tmp_path, capsys):
    assert main(["plan", "--claim", "1,0", "--out", str(tmp_path / "p")]) == 2
    assert "--claim EPS,DELTA and --width N" in _error_line(capsys)
    assert (
        main(
            [
                "plan",
                "--claim",
                "1,0",
                "--width",
                "2",
                "--relation",
                "bounded-change:1",
                "--domain-size",
                "4",
                "--out",
                str(tmp_path / "p"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "next: write" in out and "--from-samples" in out
    plan = json.loads((tmp_path / "p" / "plan.json").read_text())
    assert (
        plan["relation"] == {"kind": "bounded-change", "max_change": 1} and plan["domain_size"] == 4
    )
    assert main(["plan", "--claim", "1,0", "--width", "2", "--out", str(tmp_path / "p")]) == 2
    assert "exists" in _error_line(capsys)
    assert (
        main(["plan", "--claim", "1,0", "--width", "2", "--out", str(tmp_path / "p"), "--force"])
        == 0
    )
    assert (
        main(
            [
                "plan",
                "--claim",
                "1,0",
                "--width",
                "2",
                "--out",
                str(tmp_path / "q"),
                "--simulate",
                "csv",
            ]
        )
        == 2
    )
    assert "--simulate needs MECH" in _error_line(capsys)


def _rows(path):
    return path.read_text().splitlines(keepends=True)


def _drop_row(d):
    path = d / "outcomes" / "h000.select.csv"
    path.write_text("".join(_rows(path)[:-1]))


def _id_out_of_range(d):
    path = d / "outcomes" / "h001.confirm.csv"
    rows = _rows(path)
    path.write_text("".join(rows[:5] + ["9,0\n"] + rows[6:]))


def _float(d):
    path = d / "outcomes" / "h001.select.csv"
    rows = _rows(path)
    path.write_text("".join(rows[:3] + ["1.0,2\n"] + rows[4:]))


def _copied(d):
    shutil.copy(d / "outcomes" / "h002.select.csv", d / "outcomes" / "h002.confirm.csv")


def _shifted(d):
    # The select rows moved up one, plus one fresh row: a copy at offset 1.
    select = _rows(d / "outcomes" / "h002.select.csv")
    fresh = _rows(d / "outcomes" / "h002.confirm.csv")[-1]
    (d / "outcomes" / "h002.confirm.csv").write_text("".join(select[:1] + select[2:] + [fresh]))


def _missing(d):
    (d / "outcomes" / "h003.confirm.csv").unlink()


def _other_version(d):
    plan = json.loads((d / "plan.json").read_text())
    (d / "plan.json").write_text(json.dumps(dict(plan, format_version=0)))


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (_missing, "missing outcome file outcomes/h003.confirm.csv"),
        (_drop_row, "outcomes; the plan wants exactly"),
        (_id_out_of_range, "ids in [0, 5)"),
        (_float, "'1.0' is not an integer item id"),
        (_copied, "h002.select and outcomes/h002.confirm hold the same rows"),
        (_shifted, "outcomes/h002.confirm is outcomes/h002.select shifted by 1 row"),
        (_other_version, "format version 0"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(simulated, tmp_path, capsys, corrupt, message):
    target = tmp_path / "d"
    shutil.copytree(simulated, target)
    corrupt(target)
    capsys.readouterr()
    assert main(["audit", "--from-samples", str(target)]) == 2
    err = _error_line(capsys)
    assert err.startswith("dpaudit audit: error: ") and message in err


@pytest.mark.parametrize(
    "extra, name",
    [
        (["--seed", "3"], "--seed"),
        (["--samples", "1000"], "--samples"),
        (["--claim", "1,0"], "--claim"),
        (["--alpha", "0.01"], "--alpha"),
    ],
)
def test_from_samples_refuses_options_the_plan_fixes(simulated, capsys, extra, name):
    assert main(["audit", "--from-samples", str(simulated), *extra]) == 2
    assert name in _error_line(capsys)


def test_from_samples_refuses_a_mechanism(simulated, capsys):
    assert main(["audit", "GumbelTopK", "--k", "2", "--from-samples", str(simulated)]) == 2
    assert "plan.json" in _error_line(capsys)
