"""Discrete Laplace noise: the ratio rounds up, the sampler follows the law, errors are named."""

import math

import numpy as np
import pytest
from scipy import stats

from mechanisms.discrete_laplace import (
    RATIO_BITS,
    _geometric,
    discrete_laplace,
    discrete_laplace_ratio,
)


@pytest.mark.parametrize("epsilon", [1e-6, 0.05, 0.5, 1.0, 3.0, 40.0])
def test_ratio_is_an_upper_bound_within_three_units(epsilon):
    # The claim needs r >= e^{-ε} (noise at least as wide): checked against the exact
    # exponential of the double ε by Fraction arithmetic on a high-precision decimal.
    import mpmath

    with mpmath.workdps(40):
        exact = mpmath.exp(-mpmath.mpf(epsilon)) * 2**RATIO_BITS
        numerator = discrete_laplace_ratio(epsilon)
        assert numerator >= exact and numerator - exact <= 3


def test_ratio_rejects_what_53_bits_cannot_hold():
    with pytest.raises(ValueError, match="epsilon_per_unit"):
        discrete_laplace_ratio(1e-17)
    with pytest.raises(ValueError, match="epsilon_per_unit"):
        discrete_laplace_ratio(-1.0)


def test_geometric_counts_follow_their_law():
    # Chi-square against (1 - r) r^g, tail beyond 15 pooled: fixed seed, false failure <= 1e-6.
    numerator = discrete_laplace_ratio(0.4)
    r = numerator / 2**RATIO_BITS
    draws = _geometric(numerator, 100_000, np.random.default_rng(2))
    g = np.arange(16)
    expected = np.concatenate([(1 - r) * r**g, [r**16]]) * draws.size
    observed = [np.sum(draws == v) for v in g] + [np.sum(draws >= 16)]
    assert stats.chisquare(observed, expected).pvalue > 1e-6


def test_discrete_laplace_is_symmetric_integer_noise_of_the_stated_shape():
    numerator = discrete_laplace_ratio(1.0)
    noise = discrete_laplace(numerator, (300, 4), np.random.default_rng(0))
    assert noise.shape == (300, 4) and noise.dtype == np.int64
    r = numerator / 2**RATIO_BITS
    # E|Z| = 2r / (1 - r^2); a 6-sigma band over 1200 draws.
    mean_abs = 2 * r / (1 - r**2)
    sd = math.sqrt(2 * r * (1 + r**2) / (1 - r**2) ** 2 - mean_abs**2)
    assert abs(np.abs(noise).mean() - mean_abs) < 6 * sd / math.sqrt(noise.size)


def _geometric_by_integers(numerator, size, rng):
    # The plain loop of Bernoulli trials through Generator.integers (the reference route).
    out = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        active = active[rng.integers(0, 2**RATIO_BITS, size=active.size) < numerator]
        out[active] += 1
    return out


@pytest.mark.parametrize(
    "bits",
    [np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64, np.random.MT19937],
)
@pytest.mark.parametrize("epsilon", [0.02, 1.0, 30.0])
def test_geometric_draws_and_stream_equal_trials_through_integers(bits, epsilon):
    # The fast trials read raw words; the draws, and where the stream is left, must be
    # those of Generator.integers for every bit generator.
    numerator = discrete_laplace_ratio(epsilon)
    for seed in range(3):
        fast, plain = np.random.Generator(bits(seed)), np.random.Generator(bits(seed))
        got = _geometric(numerator, 500, fast)
        assert np.array_equal(got, _geometric_by_integers(numerator, 500, plain))
        assert np.array_equal(fast.integers(0, 2**62, size=4), plain.integers(0, 2**62, size=4))
