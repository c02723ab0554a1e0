import json

import mpmath
import numpy as np
import pytest

from dpaudit.cli import SUBCOMMAND_MODULES, main
from dpaudit.cli.bounds import calibration_rows, tail_rows
from dpaudit.exact import working_precision
from mechanisms import tail_bounds as tb

EPSILONS = [0.1, 0.5, 1.0, 2.0]
DELTAS = [1e-3, 1e-6, 1e-9]


def test_registered():
    assert "bounds" in SUBCOMMAND_MODULES


def _exact_tail_mp(c, delta):
    # independent 50-digit evaluation of P[Lap(1) > ln(1/δ) + Lap(1/c)] by quadrature over
    # the second variable (not the closed form under test)
    with working_precision():
        c, t = mpmath.mpf(c), mpmath.log(1 / mpmath.mpf(delta))

        def integrand(y):  # density of Lap(1/c) at y times P[Lap(1) > t + y]
            s = t + y
            sf = mpmath.exp(-s) / 2 if s >= 0 else 1 - mpmath.exp(s) / 2
            return c / 2 * mpmath.exp(-c * abs(y)) * sf

        return mpmath.quad(integrand, [-mpmath.inf, -t, 0, mpmath.inf])


@pytest.mark.parametrize("delta", DELTAS)
def test_every_paper_bound_is_at_least_the_exact_tail_on_the_grid(delta):
    for row in tail_rows([delta]):
        exact = _exact_tail_mp(row["c"], delta)
        assert abs(row["exact"] / float(exact) - 1) < 1e-9  # closed form agrees
        assert row["paper"] >= row["exact"], row  # the bound is a bound
        assert row["holds"]


@pytest.mark.parametrize("p1", [0.2, 0.37, 0.45])
def test_lemma_3_1_holds_for_other_splits(p1):
    assert all(r["holds"] for r in tail_rows(DELTAS + [0.1, 1e-15], p1))


def test_exact_calibration_never_raises_the_threshold_and_meets_the_target():
    rows = calibration_rows(EPSILONS, DELTAS, kbar=10)
    assert len(rows) == 2 * len(EPSILONS) * len(DELTAS)
    for r in rows:
        assert r["delta_q_exact"] >= r["delta_q_paper"]
        assert r["T_exact"] <= r["T_paper"] and r["T_saved"] >= 0
        target = r["delta"] / 10 if r["mechanism"] == "TS" else r["delta"]
        c = 2 * 0.37 / 0.63 if r["mechanism"] == "TS" else 1.0
        crossing = tb.laplace_difference_tail(1.0, c, np.log(1 / r["delta_q_exact"]))
        assert crossing <= target * (1 + 1e-9)


def test_cli_prints_tables_and_writes_json(tmp_path, capsys):
    out = tmp_path / "b.json"
    status = main(["bounds", "--epsilons", "0.5,1", "--deltas", "1e-3,1e-6", "--json", str(out)])
    assert status == 0
    text = capsys.readouterr().out
    assert "Lemma 3.1" in text and "eq. (6)" in text and "T paper" in text
    data = json.loads(out.read_text())
    assert len(data["tails"]) == 4 and len(data["calibration"]) == 8


@pytest.mark.parametrize(
    "argv",
    [
        ["bounds", "--epsilons", "x"],
        ["bounds", "--deltas", "2"],
        ["bounds", "--epsilons", "-1"],
        ["bounds", "--kbar", "0"],
    ],
)
def test_cli_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err
