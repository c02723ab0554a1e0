"""The betting capital and the root search for its confidence set's ends
(dpaudit.auditor.bounds.betting_capital)."""

import math

import numpy as np

from dpaudit.auditor.bounds.betting_capital import (
    betting_ends,
    bracketed_root,
    log_factors,
    plug_in_bets,
)

ALPHA = 0.05


def _sample(seed=0, n=400):
    return np.random.default_rng(seed).beta(2.0, 5.0, size=n)


def _log_capital(x, bets, m, upper):
    logs, _ = log_factors(x, bets, m, upper)
    return logs.sum()


def test_ends_are_rejected_and_just_inside_is_not():
    x = _sample()
    bets = plug_in_bets(x, ALPHA, None)
    low, high = betting_ends(x, bets, ALPHA)
    threshold = math.log(1.0 / ALPHA)
    assert 0.0 < low < x.mean() < high < 1.0
    assert _log_capital(x, bets, float(low), upper=False) >= threshold
    assert _log_capital(x, bets, float(high), upper=True) >= threshold
    assert _log_capital(x, bets, float(low) * (1 + 1e-5), upper=False) < threshold
    assert _log_capital(x, bets, float(high) * (1 - 1e-5), upper=True) < threshold


def test_a_batch_gives_each_sequence_its_own_root():
    x = np.stack([_sample(0), _sample(1)])
    bets = plug_in_bets(x, ALPHA, 400)
    batch = bracketed_root(x, bets, math.log(1.0 / ALPHA), upper=False)
    for row in range(2):
        one = bracketed_root(x[row], bets[row], math.log(1.0 / ALPHA), upper=False)
        assert batch[row] == one


def test_too_few_values_give_the_trivial_bound():
    x = np.array([0.5])
    low, high = betting_ends(x, plug_in_bets(x, ALPHA, None), ALPHA)
    assert (low, high) == (0.0, 1.0)
