"""The test behind ``dpaudit compare`` (issue 46): its level under the null, and its power.

Null tallies are drawn with numpy from a fixed seed, so each check is deterministic; the
bounds are the 99.9% binomial quantile of the level, so a test that held its level would
fail them with probability at most 0.001 for a fresh seed.
"""

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpaudit.loss_growth import MIN_CELL, Tally, growth_p_value

REPLICATES = 2000
ALPHA = 0.05

#: (name, P, Q, old samples, new samples, claimed ε, claimed δ): the regimes audits produce.
REGIMES = [
    ("an epsilon witness", 0.23, 0.09, 70_000, 70_000, 1.0, 0.0),
    ("a new side stopped at an early look", 0.23, 0.09, 70_000, 4_374, 1.0, 0.0),
    ("few hits", 0.002, 0.0005, 10_000, 10_000, 1.0, 0.0),
    ("a delta witness (Q = 0)", 0.001, 0.0, 100_000, 100_000, 1.0, 1e-6),
    ("P = Q, unequal samples", 0.3, 0.3, 100_000, 2_000, 1.0, 1e-3),
]


def _p_values(rng, p, q, n_old, n_new, epsilon, delta, scale=1.0):
    """p-values of REPLICATES comparisons; the new side's P is ``scale`` × P."""
    draws = zip(
        rng.binomial(n_old, p, REPLICATES),
        rng.binomial(n_old, q, REPLICATES),
        rng.binomial(n_new, min(scale * p, 1.0), REPLICATES),
        rng.binomial(n_new, q, REPLICATES),
    )
    return np.array(
        [
            growth_p_value(Tally(a, n_old, b, n_old), Tally(c, n_new, d, n_new), epsilon, delta)
            for a, b, c, d in draws
        ]
    )


@pytest.mark.parametrize("regime", REGIMES, ids=[r[0] for r in REGIMES])
def test_the_test_holds_its_level_when_nothing_changed(regime):
    """Same P and Q on both sides: at most the 99.9% binomial quantile of ALPHA rejects."""
    _, p, q, n_old, n_new, epsilon, delta = regime
    p_values = _p_values(np.random.default_rng(46), p, q, n_old, n_new, epsilon, delta)
    rejected = int(np.sum(p_values <= ALPHA))
    assert rejected <= binom.ppf(0.999, REPLICATES, ALPHA), (regime, rejected)
    assert np.all((p_values >= 0) & (p_values <= 1))


def test_a_doubled_ratio_is_found_almost_always():
    """P doubles, Q stays (ε grows by ln 2 ≈ 0.69) on 20 000 samples a side."""
    p_values = _p_values(np.random.default_rng(1), 0.02, 0.01, 20_000, 20_000, 1.0, 0.0, 2.0)
    assert np.mean(p_values <= ALPHA) > 0.99


def test_a_grown_delta_witness_is_found_by_the_delta_test():
    """Q = 0 on both sides, P grows tenfold: ln(P/Q) is unknown on either side, so the ε test
    alone has no power; with a claimed δ > 0 the δ test (P − e^ε Q grew) finds it."""
    old, new = Tally(10, 1_000_000, 0, 1_000_000), Tally(100, 1_000_000, 0, 1_000_000)
    assert growth_p_value(old, new, 1.0, 0.0) > 0.1
    assert growth_p_value(old, new, 1.0, 1e-6) < 1e-10


def test_the_loss_counts_in_both_directions():
    """|ln(P/Q)| grows when the new ratio grows the other way round (P < Q)."""
    old = Tally(1000, 10_000, 400, 10_000)
    assert growth_p_value(old, Tally(200, 10_000, 1000, 10_000), 1.0, 0.0) < 1e-6
    assert growth_p_value(old, Tally(400, 10_000, 1000, 10_000), 1.0, 0.0) == 1.0


def test_a_delta_that_stays_below_zero_is_not_a_loss():
    """P − e^ε Q grows but stays below 0 (no δ at ε on either side) and |ln(P/Q)| is the same:
    both P and Q doubled. Not worse."""
    old, new = Tally(1000, 100_000, 1000, 100_000), Tally(2000, 100_000, 2000, 100_000)
    assert growth_p_value(old, new, 1.0, 1e-3) > 0.5


def test_tally_swaps_and_estimates():
    tally = Tally(30, 100, 10, 200)
    assert tally.swapped() == Tally(10, 200, 30, 100) and tally.swapped().swapped() == tally
    assert tally.epsilon_hat() == pytest.approx(math.log(0.3 / 0.05))
    assert tally.swapped().epsilon_hat() == tally.epsilon_hat()
    assert tally.delta_hat(1.0) == pytest.approx(0.3 - math.e * 0.05)
    assert Tally(5, 100, 0, 100).epsilon_hat() == math.inf
    assert math.isnan(Tally(0, 100, 0, 100).epsilon_hat())
    assert Tally(MIN_CELL - 1, 1000, 500, 1000).few_hits
    assert not Tally(MIN_CELL, 1000, 500, 1000).few_hits
