"""The floating-point noise bugs: unreachable outputs, witnesses and samplers; the correct twins."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpaudit.corpus import entry, float_noise
from dpaudit.corpus import exact as X


def test_float_laplace_reachability_is_exact_and_finds_unreachable_outputs():
    scale = 1 / float_noise.EPSILON
    rng = np.random.default_rng(2)
    outputs = float_noise.textbook_laplace(0.0, rng.random(20_000) - 0.5, scale)
    # The inversion finds every output on the value that produced it ...
    assert float_noise.reachable(outputs, 0.0, scale).all()
    # ... and most outputs of count 0 are never produced on count 1 (Mironov 2012).
    unreachable = ~float_noise.reachable(outputs, 1.0, scale)
    assert unreachable.mean() > 0.7
    assert float_noise._witness()[0] == math.inf


def test_float_sum_near_zero_is_exact_on_the_coarse_grid():
    # The lemma behind the Box–Muller witness, by exact rational arithmetic: for any double w,
    # fl(1 + w) below ½ in magnitude is 1 + w exactly and a multiple of 2^-53.
    rng = np.random.default_rng(12)
    w = np.concatenate(
        [
            rng.uniform(-1.5, -0.5, 20_000),
            float_noise.box_muller_gaussian(0.0, 1 - rng.random(200_000), rng.random(200_000), 0.3)
            - 1.0,
        ]
    )
    near = np.abs(1.0 + w) < 0.5
    assert near.sum() > 10_000
    for x in w[near][:5_000]:
        exact = Fraction(1) + Fraction(float(x))
        assert Fraction(1.0 + float(x)) == exact
        assert (exact * 2**53).denominator == 1
    assert not float_noise.fine_near_zero(1.0 + w).any()


def test_box_muller_witness_and_the_sampler_spends_the_estimated_delta():
    item = entry("float-gaussian-box-muller")
    assert float_noise._gaussian_witness()[0] == math.inf
    mech = item.build()
    n = 400_000
    on_one = mech.sample(np.array(item.pair[1]), n, np.random.default_rng(13))
    assert not float_noise.fine_near_zero(on_one).any()
    on_zero = mech.sample(np.array(item.pair[0]), n, np.random.default_rng(14))
    # Binomial test at p < 1e-6 (false failure 1e-6) against the stated estimate.
    hits = int(float_noise.fine_near_zero(on_zero).sum())
    assert stats.binomtest(hits, n, item.true.delta).pvalue > 1e-6


def test_rounded_gaussian_twin_is_within_its_claim():
    # The twin rounds a Gaussian release (post-processing): its δ at ε is the Gaussian's,
    # Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)) (Balle & Wang, ICML 2018, Thm. 8), mpmath.
    eps, delta = float_noise.GAUSSIAN_EPSILON, float_noise.GAUSSIAN_DELTA
    sigma = float_noise.gaussian_sigma(eps, delta)
    assert sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-15)
    with X.working_precision():
        s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
        exact = mpmath.ncdf(-e * s + 1 / (2 * s)) - mpmath.exp(e) * mpmath.ncdf(
            -e * s - 1 / (2 * s)
        )
    assert 0 < exact < delta
    scipy_route = stats.norm.cdf(-eps * sigma + 1 / (2 * sigma)) - math.exp(eps) * stats.norm.cdf(
        -eps * sigma - 1 / (2 * sigma)
    )
    assert float(exact) == pytest.approx(scipy_route, rel=1e-6)
    twin = entry("float-gaussian-box-muller").twin()
    out = twin.sample(np.zeros(5, dtype=int), 10_000, np.random.default_rng(15))
    assert (out == np.round(out)).all() and out.std() == pytest.approx(sigma, rel=0.05)


def test_numpy_laplace_is_numpys_own_sampler_and_the_witness_is_unreachable_from_count_1():
    # numpy's Generator.laplace draws U = random() (53-bit doubles) and applies the formula.
    n = 20_000
    drawn = np.random.default_rng(34).laplace(loc=1.0, scale=10.0, size=n)
    formula = float_noise.numpy_laplace(1.0, np.random.default_rng(34).random(n), 10.0)
    assert np.array_equal(drawn, formula)
    item = entry("float-laplace-numpy-dpsniper")
    assert item.true.compute()[0] == math.inf
    mech = item.build()
    on_one = mech.sample(np.array(item.pair[1]), 400_000, np.random.default_rng(35))
    assert not float_noise.fine_near_zero(on_one).any()
    on_zero = mech.sample(np.array(item.pair[0]), 400_000, np.random.default_rng(36))
    hits = int(float_noise.fine_near_zero(on_zero).sum())
    assert stats.binomtest(hits, 400_000, item.true.delta).pvalue > 1e-6


def test_snapping_twin_releases_multiples_of_lambda_at_the_laplace_rates():
    item = entry("float-laplace-numpy-dpsniper")
    eps = float_noise.SNIPER_EPSILON
    step = float_noise.snapping_lambda((1 + 100 * 2.0**-49) / eps)
    assert step == 16.0
    n = 400_000
    out = item.twin().sample(np.array(item.pair[0]), n, np.random.default_rng(37))
    assert (np.abs(out) <= 100).all()
    inner = np.abs(out) < 100
    assert (np.fmod(out[inner], step) == 0).all()
    # Output 0 (either sign) iff |noise| < Λ/2: P = 1 − e^{−εΛ/2} (binomial, false failure 1e-6).
    p = -math.expm1(-eps * step / 2)
    assert stats.binomtest(int((out == 0).sum()), n, p).pvalue > 1e-6
