"""Laplace threshold-crossing tails, the papers' bounds, δ_q solvers, analytic Gaussian σ."""

import math
import sys

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import lambertw

from mechanisms import accounting
from mechanisms.tail_bounds import (
    analytic_gaussian_sigma,
    delta_q_for_target,
    gaussian_delta,
    laplace_difference_tail,
    laplace_difference_tail_mp,
    laplace_limit_domain_delta,
    laplace_tail_bound,
    log_delta_q_for_target,
    log_laplace_difference_tail,
    log_laplace_tail_bound,
    restricted_domain_delta_q,
    restricted_domain_tail_bound,
    tail_threshold,
    top_stable_delta_q,
)

rates = st.floats(min_value=0.01, max_value=20.0, allow_nan=False)
cs = st.floats(min_value=0.05, max_value=20.0, allow_nan=False)
targets = st.floats(min_value=1e-100, max_value=0.4, allow_nan=False)


def quad_tail(a, b, t, dps=30):
    """P[Lap(1/a) > t + Lap(1/b)] as the convolution integral of seed 000 Lemma 3.1's proof,
    ∫ p_a(x) P[Lap(1/b) < x − t] dx, split at 0 and t where the integrand has kinks."""
    with mpmath.workdps(dps):
        a, b, t = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(t)

        def laplace_cdf(y):
            return mpmath.exp(b * y) / 2 if y < 0 else 1 - mpmath.exp(-b * y) / 2

        def integrand(x):
            return a / 2 * mpmath.exp(-a * abs(x)) * laplace_cdf(x - t)

        points = sorted({mpmath.mpf(0), t})
        return mpmath.quad(integrand, [-mpmath.inf, *points, mpmath.inf])


# --- exact tail ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, t",
    [
        (1.0, 1.0, 0.0),
        (1.0, 1.0, 3.0),
        (0.5, 2.0, 4.0),
        (2.0, 0.5, 4.0),
        (0.3, 0.37, 25.0),
        (1.0, 1.0, -2.0),
        (0.7, 3.0, -1.5),
        (5.0, 0.1, 0.25),
    ],
)
def test_closed_form_matches_mpmath_quadrature(a, b, t):
    reference = quad_tail(a, b, t)
    assert float(abs(laplace_difference_tail_mp(a, b, t, dps=30) - reference)) <= 1e-20 * float(
        reference
    )
    assert laplace_difference_tail(a, b, t) == pytest.approx(float(reference), rel=1e-12)


@given(a=rates, b=rates, t=st.floats(min_value=-50, max_value=50, allow_nan=False))
@settings(max_examples=150, deadline=None)
def test_float_tail_matches_mpmath_closed_form(a, b, t):
    reference = laplace_difference_tail_mp(a, b, t, dps=60)
    assert laplace_difference_tail(a, b, t) == pytest.approx(float(reference), rel=1e-11, abs=0)


def test_log_tail_is_accurate_far_beyond_float_underflow():
    # P ≈ e^{-1000}: the probability itself underflows to 0 in float, its log must not.
    for a, b, t in [(1.0, 2.0, 1000.0), (0.5, 0.5, 3000.0), (1.0, 1.0 + 1e-9, 800.0)]:
        reference = mpmath.log(laplace_difference_tail_mp(a, b, t, dps=80))
        assert log_laplace_difference_tail(a, b, t) == pytest.approx(float(reference), rel=1e-13)


@pytest.mark.parametrize("gap", [1e-13, 1e-9, 1e-6, 1e-3])
def test_nearly_equal_scales_are_computed_without_cancellation(gap):
    a, b, t = 1.3, 1.3 * (1 + gap), 7.0
    reference = laplace_difference_tail_mp(a, b, t, dps=80)
    assert laplace_difference_tail(a, b, t) == pytest.approx(float(reference), rel=1e-12)


def test_unequal_scale_tail_worked_by_hand():
    # a = 1, b = 2, T = 1: (b² e^{-aT} − a² e^{-bT}) / (2(b² − a²))
    #   = (4·0.36787944 − 0.13533528)/6 = (1.47151776 − 0.13533528)/6 = 0.22269708
    assert laplace_difference_tail(1.0, 2.0, 1.0) == pytest.approx(0.22269708, rel=1e-7)


def test_equal_scale_tail_is_the_limit_form_worked_by_hand():
    # a = b = 1, T = 2: e^{-2}(2 + 2)/4 = e^{-2} = 0.1353352832...
    assert laplace_difference_tail(1.0, 1.0, 2.0) == pytest.approx(math.exp(-2.0), rel=1e-14)
    # T = 0: the difference of two symmetric variables exceeds 0 with probability 1/2
    assert laplace_difference_tail(0.4, 3.0, 0.0) == pytest.approx(0.5, rel=1e-15)


@given(a=rates, b=rates, t=st.floats(min_value=0, max_value=40))
@settings(max_examples=100, deadline=None)
def test_tail_is_symmetric_in_the_scales_and_decreasing_in_t(a, b, t):
    assert log_laplace_difference_tail(a, b, t) == pytest.approx(
        log_laplace_difference_tail(b, a, t), rel=1e-12, abs=1e-14
    )
    # strictly decreasing: checked in log space, since the plain tail underflows to 0.0
    # (e.g. a = b = 20, t = 38: about e^-760) where both sides would compare equal
    assert log_laplace_difference_tail(a, b, t + 0.5) < log_laplace_difference_tail(a, b, t)
    assert laplace_difference_tail(a, b, t + 0.5) <= laplace_difference_tail(a, b, t)
    # the two halves add up: P[Z > t] + P[Z > −t] = 1 by symmetry of Z
    assert laplace_difference_tail(a, b, t) + laplace_difference_tail(a, b, -t) == pytest.approx(
        1.0
    )


def test_monte_carlo_agrees_with_the_closed_form():
    # 10^6 draws, a=0.5, b=1.2, T=2; p ≈ 0.22. Binomial two-sided test at level 1e-6
    # (scipy.stats.binomtest): false failure probability <= 1e-6.
    from scipy.stats import binomtest

    rng = np.random.default_rng(20261123)
    n = 1_000_000
    a, b, t = 0.5, 1.2, 2.0
    hits = int(np.count_nonzero(rng.laplace(0, 1 / a, n) > t + rng.laplace(0, 1 / b, n)))
    assert binomtest(hits, n, laplace_difference_tail(a, b, t)).pvalue > 1e-6


# --- paper bounds ------------------------------------------------------------------------


def test_lemma_31_bound_hand_table():
    # seed 000 Lemma 3.1: (2δ^c + δ − c(δ^c + 2δ)) / (4(1 − c))
    # δ=1e-6, c=0.5: δ^c = 1e-3 -> (2e-3 + 1e-6 − 0.5(1e-3 + 2e-6)) / 2 = 1.5e-3 / 2 = 7.5e-4
    assert laplace_tail_bound(1e-6, 0.5) == pytest.approx(7.5e-4, rel=1e-12)
    # δ=0.01, c=2: δ^c = 1e-4 -> (2e-4 + 0.01 − 2(1e-4 + 0.02)) / (−4) = −0.03/−4 = 0.0075
    assert laplace_tail_bound(0.01, 2.0) == pytest.approx(0.0075, rel=1e-12)
    # seed 001 eq. (6): ¼·1e-3·(3 + ln 1000) = 0.25e-3·9.9077553 = 2.47693883e-3
    assert restricted_domain_tail_bound(1e-3) == pytest.approx(2.47693883e-3, rel=1e-8)
    assert laplace_tail_bound(1e-3, 1.0) == restricted_domain_tail_bound(1e-3)


@pytest.mark.parametrize("c", [1 - 1e-7, 1 + 1e-9, 1.1746, 0.3, 3.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-5, 0.3])
def test_lemma_31_bound_matches_the_formula_in_high_precision(c, delta):
    with mpmath.workdps(60):
        d, cc = mpmath.mpf(delta), mpmath.mpf(c)
        reference = (2 * d**cc + d - cc * (d**cc + 2 * d)) / (4 * (1 - cc))
    assert laplace_tail_bound(delta, c) == pytest.approx(float(reference), rel=1e-10)


@given(log_delta=st.floats(min_value=-600, max_value=0), c=cs)
@settings(max_examples=200, deadline=None)
def test_lemma_31_bound_is_above_the_exact_tail(log_delta, c):
    # With ε_a = 1, ε_b = c, T = ln(1/δ): the exact crossing probability never exceeds the bound.
    delta = math.exp(log_delta)
    if delta == 0.0:
        return
    exact = log_laplace_difference_tail(1.0, c, -log_delta)
    assert exact <= log_laplace_tail_bound(delta, c) + 1e-12


def test_laplace_limit_domain_delta_hand_value():
    # δ = 1e-6, Δ = 5: ln(5e6) = 1.6094379 + 13.8155106 = 15.4249485;
    # (δ/4)(3 + 15.4249485) = 0.25e-6 · 18.4249485 = 4.60623713e-6
    assert laplace_limit_domain_delta(1e-6, 5) == pytest.approx(4.60623713e-6, rel=1e-8)
    assert laplace_limit_domain_delta(1e-6, 5) == pytest.approx(
        5 * restricted_domain_tail_bound(1e-6 / 5)
    )
    with pytest.raises(ValueError, match="max_items"):
        laplace_limit_domain_delta(1e-6, 0)


def test_equal_scale_bound_is_loose_by_exactly_delta_over_4():
    # With ε_a = ε_b the exact tail at T = ln(1/δ)/ε is ¼δ(2 + ln 1/δ), eq. (6) says ¼δ(3 + ln 1/δ).
    for delta in [1e-9, 1e-4, 0.2]:
        exact = laplace_difference_tail(0.8, 0.8, tail_threshold(0.8, delta))
        assert exact == pytest.approx(delta * (2 + math.log(1 / delta)) / 4, rel=1e-12)
        assert restricted_domain_tail_bound(delta) - exact == pytest.approx(delta / 4, rel=1e-9)


# --- δ_q solvers -------------------------------------------------------------------------


@pytest.mark.parametrize("delta_r", [1e-12, 1e-6, 1e-3, 0.1])
def test_restricted_domain_delta_q_matches_lambert_w(delta_r):
    # ¼δ(3 − ln δ) = R  ⇔  x e^{−x} = 4R e^{−3} with x = 3 − ln δ >= 3  ⇒  δ = e^{3 + W_{−1}(−4R/e³)}
    paper = math.exp(3 + lambertw(-4 * delta_r / math.e**3, -1).real)
    assert restricted_domain_delta_q(delta_r) == pytest.approx(paper, rel=1e-12)
    # exact: ¼δ(2 − ln δ) = R  ⇒  δ = e^{2 + W_{−1}(−4R/e²)}
    exact = math.exp(2 + lambertw(-4 * delta_r / math.e**2, -1).real)
    assert restricted_domain_delta_q(delta_r, calibration="exact") == pytest.approx(
        exact, rel=1e-12
    )


@given(log_target=st.floats(min_value=-700, max_value=math.log(0.4)), c=cs)
@settings(max_examples=150, deadline=None)
def test_delta_q_is_the_largest_value_meeting_the_target(log_target, c):
    target = math.exp(log_target)
    for calibration, log_f in [
        ("paper", lambda x: log_laplace_tail_bound(math.exp(x), c)),
        ("exact", lambda x: log_laplace_difference_tail(1.0, c, -x)),
    ]:
        log_delta_q = log_delta_q_for_target(target, c, calibration)
        assert log_delta_q <= 0
        if log_delta_q < math.log(sys.float_info.min):  # below float range: only the log form
            with pytest.raises(ValueError, match="below the float range"):
                delta_q_for_target(target, c, calibration)
            continue
        delta_q = delta_q_for_target(target, c, calibration)
        assert log_f(math.log(delta_q)) <= math.log(target)
        assert delta_q == pytest.approx(math.exp(log_delta_q), rel=1e-12)
        bigger = min(1.0, delta_q * (1 + 1e-9))
        if bigger < 1.0:
            assert log_f(math.log(bigger)) > math.log(target)
        bigger_log = log_delta_q + 1e-9 * max(1.0, -log_delta_q)
        if bigger_log < 0:
            assert log_f(bigger_log) > math.log(target)


@given(target=targets, c=cs)
@settings(max_examples=100, deadline=None)
def test_exact_calibration_allows_a_larger_delta_q(target, c):
    assert log_delta_q_for_target(target, c, "exact") >= log_delta_q_for_target(target, c, "paper")


def test_large_targets_give_threshold_zero():
    # at δ_q = 1 (T = 0) the bound is 3/4 and the exact tail 1/2
    assert delta_q_for_target(0.8, 1.5) == 1.0
    assert delta_q_for_target(0.6, 1.5, "exact") == 1.0
    assert delta_q_for_target(0.6, 1.5) < 1.0


def test_top_stable_delta_q_follows_line_2():
    # seed 000 Alg. 3, p1 = 0.37: c = 2·0.37/0.63 = 1.174603; δ/k̄ = 1e-6/10 = 1e-7
    delta_q = top_stable_delta_q(epsilon=1.0, delta=1e-6, kbar=10)
    c = 2 * 0.37 / 0.63
    assert laplace_tail_bound(delta_q, c) == pytest.approx(1e-7, rel=1e-9)
    # Thm 4.1's proof claims δ/k̄ < δ_q when 1.5 < c < 2 (p1 = 7/15 gives c = 1.75)
    assert top_stable_delta_q(epsilon=1.0, delta=1e-6, kbar=10, p1=7 / 15) > 1e-7
    exact = top_stable_delta_q(epsilon=1.0, delta=1e-6, kbar=10, calibration="exact")
    t = tail_threshold(0.63 / 2, exact)
    assert laplace_difference_tail(0.63 / 2, 0.37, t) == pytest.approx(1e-7, rel=1e-9)


def test_tail_threshold_hand_value():
    # T = ln(1/δ_q)/(ε_2/2) with δ_q = e^{-10}, ε_2 = 0.5 -> 10/0.25 = 40
    assert tail_threshold(0.25, math.exp(-10)) == pytest.approx(40.0)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: delta_q_for_target(0.0), "target"),
        (lambda: delta_q_for_target(1.0), "target"),
        (lambda: delta_q_for_target(float("nan")), "target"),
        (lambda: delta_q_for_target(1e-3, c=0.0), "c must"),
        (lambda: delta_q_for_target(1e-3, calibration="loose"), "calibration"),
        (lambda: top_stable_delta_q(epsilon=1.0, delta=1e-6, kbar=0), "kbar"),
        (lambda: top_stable_delta_q(epsilon=1.0, delta=1e-6, kbar=3, p1=1.0), "p1"),
        (lambda: restricted_domain_delta_q(-1e-3), "delta_r"),
        (lambda: laplace_tail_bound(0.0), "delta"),
        (lambda: laplace_difference_tail(0.0, 1.0, 1.0), "epsilon_a"),
        (lambda: laplace_difference_tail(1.0, -1.0, 1.0), "epsilon_b"),
        (lambda: laplace_difference_tail(1.0, 1.0, math.inf), "threshold"),
        (lambda: tail_threshold(1.0, 1.5), "delta_q"),
        (lambda: analytic_gaussian_sigma(0.0, 1e-5), "epsilon"),
        (lambda: analytic_gaussian_sigma(1.0, 1.0), "delta"),
        (lambda: analytic_gaussian_sigma(1.0, 1e-5, sensitivity=-2), "sensitivity"),
        (lambda: gaussian_delta(0.0, 1.0), "sigma"),
    ],
)
def test_bad_parameters_are_rejected_by_name(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


# --- analytic Gaussian ---------------------------------------------------------------------


def mp_gaussian_delta(sigma, epsilon, sensitivity, dps=50):
    # Balle & Wang 2018 Thm 8 evaluated with mpmath's normal cdf (independent of scipy)
    with mpmath.workdps(dps):
        s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
        return mpmath.ncdf(d / (2 * s) - e * s / d) - mpmath.exp(e) * mpmath.ncdf(
            -d / (2 * s) - e * s / d
        )


@pytest.mark.parametrize(
    "epsilon, delta, sensitivity",
    [
        (1.0, 1e-5, 1.0),
        (0.1, 1e-6, 1.0),
        (3.0, 1e-9, math.sqrt(5)),
        (0.01, 1e-3, 2.0),
        (8.0, 1e-12, 1.0),
    ],
)
def test_analytic_gaussian_sigma_is_the_smallest_sufficient_sigma(epsilon, delta, sensitivity):
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert float(mp_gaussian_delta(sigma, epsilon, sensitivity)) <= delta * (1 + 1e-9)
    assert float(mp_gaussian_delta(sigma * (1 - 1e-7), epsilon, sensitivity)) > delta
    assert gaussian_delta(sigma, epsilon, sensitivity) == pytest.approx(delta, rel=1e-8)


def test_gaussian_delta_worked_by_hand():
    # σ = Δ = ε = 1: Φ(0.5 − 1) − e·Φ(−0.5 − 1) = Φ(−0.5) − e·Φ(−1.5)
    #   2.71828183·0.06680720 = 0.13361440 + 0.71828183·0.06680720 = 0.13361440 + 0.04798640
    #   = 0.18160080; δ = 0.30853754 − 0.18160080 = 0.12693674
    assert gaussian_delta(1.0, 1.0, 1.0) == pytest.approx(0.12693674, rel=1e-7)


def test_analytic_gaussian_matches_dp_accounting():
    from dp_accounting.pld import accountant, common

    for epsilon, delta, sensitivity in [(1.0, 1e-5, 1.0), (0.3, 1e-8, 2.0)]:
        theirs = accountant.get_smallest_gaussian_noise(
            common.DifferentialPrivacyParameters(epsilon, delta), 1, sensitivity
        )
        assert analytic_gaussian_sigma(epsilon, delta, sensitivity) == pytest.approx(
            theirs, rel=1e-6
        )


@given(
    epsilon=st.floats(min_value=0.01, max_value=0.99),
    log_delta=st.floats(min_value=-30, max_value=-2),
    sensitivity=st.floats(min_value=0.1, max_value=10),
)
@settings(max_examples=60, deadline=None)
def test_analytic_gaussian_beats_the_classical_calibration_and_scales(
    epsilon, log_delta, sensitivity
):
    delta = math.exp(log_delta)
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    classical = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon  # Dwork–Roth Thm A.1
    assert sigma <= classical
    assert sigma == pytest.approx(
        sensitivity * analytic_gaussian_sigma(epsilon, delta, 1.0), rel=1e-9
    )


def test_tail_bounds_are_re_exported_from_accounting():
    assert accounting.analytic_gaussian_sigma is analytic_gaussian_sigma
    assert accounting.top_stable_delta_q is top_stable_delta_q
    assert "restricted_domain_delta_q" in accounting.__all__
