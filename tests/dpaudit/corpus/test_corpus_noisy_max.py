"""The noisy-max bugs: exact laws and witnesses by quadrature and scipy; samplers fit their laws."""

import math

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from scipy import integrate, optimize, special, stats

from dpaudit.corpus import entry, noisy_max
from dpaudit.corpus import exact as X


def test_truncated_max_probability_by_integrating_the_density():
    scale = 2 / noisy_max.EPSILON
    for counts in noisy_max._LAPLACE_PAIR:
        for k in (-3, 0, 4):
            low, high = (k - 1, k) if k < 0 else ((-1, 1) if k == 0 else (k, k + 1))
            with X.working_precision():
                mass = mpmath.quad(
                    lambda x, c=counts: noisy_max.laplace_max_density(c, x, scale),
                    sorted({low, high, *[c for c in counts if low < c < high]}),
                )
            assert abs(noisy_max.truncated_max_probability(counts, k, scale) - mass) < 1e-15
    assert noisy_max._truncated_value_exact()[0] == pytest.approx(
        noisy_max.QUERIES * noisy_max.EPSILON / 2, rel=1e-12
    )


def test_laplace_max_density_against_derivative_of_its_cdf():
    scale = 2 / noisy_max.EPSILON
    for counts in noisy_max._LAPLACE_PAIR:
        with X.working_precision():

            def cdf(x, counts=counts):
                out = mpmath.mpf(1)
                for c in counts:
                    out *= X.laplace_cdf(x - c, scale)
                return out

            for x in (-3, 0.5, 7):
                derivative = mpmath.diff(cdf, x)
                assert abs(noisy_max.laplace_max_density(counts, x, scale) - derivative) < 1e-15


def test_exponential_max_witness_mass_by_quadrature():
    # P(max of d Exp(2/ε) < 1) as the integral of the density of the maximum.
    e, d = noisy_max.EPSILON, noisy_max.QUERIES
    with X.working_precision():
        lam = mpmath.mpf(e) / 2

        def density(x):
            return d * lam * mpmath.exp(-lam * x) * (1 - mpmath.exp(-lam * x)) ** (d - 1)

        mass = mpmath.quad(density, [0, 1])
    assert float(mass) == pytest.approx(entry("rnm-exponential-max-value").true.delta, rel=1e-12)


def test_opendp_noisy_max_against_quadrature_and_a_direct_conversion():
    item = entry("opendp-noisy-max-zcdp")
    low, high = item.pair
    # P(argmax = 1 | (2, 0)) = ∫ e^{−x} P(X₁ > x + 2) dx for X₀, X₁ ~ Exp(1), by scipy.
    p1 = integrate.quad(lambda x: math.exp(-x) * math.exp(-(x + 2.0)), 0, np.inf)[0]
    assert p1 == pytest.approx(math.exp(-2) / 2, rel=1e-12)
    # The claimed curve at the head: the Canonne–Kamath–Steinke bound minimised over α.
    rho, head = noisy_max.OPENDP_EPSILON**2 / 8, noisy_max.OPENDP_HEAD_EPSILON

    def log_bound(alpha):
        return (
            (alpha - 1) * (alpha * rho - head)
            - math.log(alpha - 1)
            + alpha * math.log1p(-1 / alpha)
        )

    best = optimize.minimize_scalar(
        log_bound, bounds=(1.0001, 20), method="bounded", options={"xatol": 1e-10}
    )
    claimed = math.exp(best.fun)
    assert item.claim.delta == pytest.approx(claimed, rel=1e-6)
    true = 0.5 - math.exp(head) * p1
    assert true == pytest.approx(item.true.delta, rel=1e-9) and true > 1.5 * claimed
    assert math.log((0.5 - claimed) / p1) == pytest.approx(item.true.epsilon, rel=1e-5)
    # The samplers: P(1 | (2, 0)) is e^{−2}/2 (bug) and 1/(1 + e²) (Gumbel twin); binomial
    # tests, false failure 1e-6 each.
    n = 400_000
    for build, p in ((item.build, p1), (item.twin, 1 / (1 + math.exp(2)))):
        out = build().sample(np.array(high), n, np.random.default_rng(19))
        assert stats.binomtest(int((out[:, 0] == 1).sum()), n, p).pvalue > 1e-6
        out = build().sample(np.array(low), n, np.random.default_rng(20))
        assert stats.binomtest(int((out[:, 0] == 1).sum()), n, 0.5).pvalue > 1e-6


def _loss_by_logsumexp(p_counts, q_counts, factor, outcome=0):
    """ln P(outcome | p) / P(outcome | q) of softmax(factor · q) in doubles (scipy)."""
    p, q = (factor * np.asarray(c, dtype=float) for c in (p_counts, q_counts))
    return (p[outcome] - special.logsumexp(p)) - (q[outcome] - special.logsumexp(q))


def test_jam_selection_epsilon_by_mbis_own_conversion():
    # ρ = cdp_rho(1, 1e-9) by bisection on mbi's cdp_delta (Canonne–Kamath–Steinke 2020,
    # Prop. 12, minimised over α here by scipy), then ε = √(8 · 0.2ρ/30).
    def cdp_delta(rho, eps):
        def log_bound(alpha):
            return (alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha)

        best = optimize.minimize_scalar(
            lambda a: log_bound(a) - math.log(a - 1),
            bounds=(1.0001, 1e4),
            method="bounded",
            options={"xatol": 1e-12},
        )
        return math.exp(best.fun)

    rho = optimize.brentq(lambda r: cdp_delta(r, 1.0) - 1e-9, 1e-4, 0.5, xtol=1e-15)
    expected = math.sqrt(8 * rho * noisy_max.JAM_ALPHA / noisy_max.JAM_ROUNDS)
    assert expected == pytest.approx(noisy_max.JAM_SELECTION_EPSILON, rel=1e-6)


def test_jam_losses_by_logsumexp_and_the_sampler_fits_the_softmax_law():
    item = entry("jam-exponential-sensitivity")
    eps = item.claim.epsilon
    bug, twin = eps / 4, eps / 8  # 0.5 ε / Δ at Δ = 2 (shipped) and 4 (fixed)
    (a, b) = item.pair
    # The witness pair by scipy in doubles, against the mpmath law.
    law_a, law_b = (noisy_max.softmax_law(c, bug) for c in (a, b))
    loss = _loss_by_logsumexp(b, a, bug)
    assert loss == pytest.approx(float(mpmath.log(law_b[0] / law_a[0])), rel=1e-9)
    assert loss > eps
    # The supremum 8a = 2ε: far scores in doubles agree with the stated value.
    far = (0,) + (10_000,) * 4
    near = (4,) + (9_996,) * 4
    assert _loss_by_logsumexp(near, far, bug) == pytest.approx(item.true.epsilon, rel=1e-12)
    # The fixed twin stays within ε on the same pairs (its supremum is 8 · ε/8 = ε).
    assert _loss_by_logsumexp(b, a, twin) <= eps
    assert _loss_by_logsumexp(near, far, twin) == pytest.approx(eps, rel=1e-12)
    # The sampler: chi-square against the exact law on both histograms (false failure 1e-6).
    for counts, law in ((a, law_a), (b, law_b)):
        out = item.build().sample(np.array(counts), 200_000, np.random.default_rng(41))
        assert_sampler_fits({(i,): p for i, p in enumerate(law)}, out)


def test_gumbel_twin_is_within_the_claimed_curve_on_the_pair():
    # The exponential mechanism's two-outcome law on (1, 1) and (2, 0): ½ and 1/(1 + e²).
    claim = entry("opendp-noisy-max-zcdp").twin().claim
    p, q = (0.5, 0.5), (math.exp(2) / (1 + math.exp(2)), 1 / (1 + math.exp(2)))
    for epsilon in np.linspace(0.05, 2.5, 50):
        factor = math.exp(epsilon)
        delta = max(
            sum(max(0.0, a - factor * b) for a, b in zip(p, q)),
            sum(max(0.0, b - factor * a) for a, b in zip(p, q)),
        )
        assert delta <= claim.delta_at(epsilon) + 1e-12
