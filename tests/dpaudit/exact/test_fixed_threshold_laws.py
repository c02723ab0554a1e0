"""Exact law of FixedThreshold (seed 002 App. F, reconstructed) and its exhaustive verification.

Independent routes: each test's pass probability against mpmath.quad of the Laplace
density, the sampler against the law (chi-square), and the claim (k̄ε, δ) checked on
every neighbouring pair of small families by :func:`dpaudit.exact.verify`.

Broken variants, each overriding ONE documented hook of FixedThreshold, with
:func:`fixed_threshold_law` registered for them (it reads the hook):

* ``FixedThresholdNoMargin`` (dpaudit.catalog) — τ without the +1 of Lemma F.2 item 2:
  an item just inside one strict domain passes with probability e^ε δ/k̄. Caught.
* ``FixedThresholdDeltaNotSplit`` (here) — τ solved against δ instead of δ/k̄ (the
  union over the k̄ tests forgotten): up to k̄ items pass with probability δ each.
  Caught for k̄ >= 2; for k̄ = 1 it IS the correct mechanism.
"""

from dataclasses import dataclass

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits

import mechanisms as M
from dpaudit.catalog import FixedThresholdNoMargin
from dpaudit.exact import output_law, verify, working_precision
from dpaudit.exact.fixed_threshold_laws import fixed_threshold_law, laplace_tails
from dpaudit.exact.profile import hockey_stick
from mechanisms import BOTTOM, FixedThreshold

SAMPLES = 100_000
P_FAIL = 1e-6  # each chi-square test rejects at p < 1e-6: false failure <= 1e-6 per test
SUM_TOL = mpmath.mpf("1e-40")


@dataclass(frozen=True)
class FixedThresholdDeltaNotSplit(FixedThreshold):
    """Bug: τ = 1 + ln(1/(2δ))/ε, solved against δ instead of δ/k̄; still claims (k̄ε, δ)."""

    def threshold_delta(self) -> float:
        return self.delta


output_law.register(FixedThresholdDeltaNotSplit)(fixed_threshold_law)

CASES = [
    (FixedThreshold(kbar=2, epsilon=1.0, delta=1e-3), [3, 2, 2, 0, 1]),
    (FixedThreshold(kbar=3, epsilon=0.8, delta=0.2), [4, 0, 6, 3, 3, 5, 1]),
    (FixedThreshold(kbar=3, epsilon=2.0, delta=0.4), [5, 5, 4, 4]),  # ties at the cut
    (FixedThreshold(kbar=4, epsilon=0.5, delta=0.3), [3, 1]),  # d <= k̄
    (FixedThreshold(kbar=2, epsilon=1.5, delta=0.05), [2, 2, 2]),  # empty strict domain
    (FixedThreshold(kbar=3, epsilon=0.7, delta=0.3), M.top_counts([9, 0, 7, 7, 1, 3], 4)),
]
IDS = [f"case{i}" for i in range(len(CASES))]


@pytest.mark.parametrize("mech,counts", CASES, ids=IDS)
def test_law_sums_to_one_and_has_valid_outcomes(mech, counts):
    law = output_law(mech, counts)
    domain = set(mech.limited_domain(counts)[0].tolist())
    assert len(law) == 2 ** len(domain)
    with working_precision():
        assert abs(mpmath.fsum(law.values()) - 1) < SUM_TOL
    for outcome, p in law.items():
        assert p > 0
        items = [i for i in outcome if i != BOTTOM]
        assert set(items) <= domain and items == sorted(set(items))
        assert outcome == tuple(items) + ((BOTTOM,) if len(items) < mech.kbar else ())
        assert len(outcome) <= mech.width


def _quad_pass_probability(epsilon, x):
    """``P[Lap(1/ε) > x] = ∫_x^∞ (ε/2) e^{−ε|y|} dy`` by mpmath.quad (split at the kink 0)."""
    eps = mpmath.mpf(epsilon)

    def density(y):
        return eps / 2 * mpmath.exp(-eps * abs(y))

    points = [x, mpmath.inf] if x >= 0 else [x, 0, mpmath.inf]
    return mpmath.quad(density, points)


@pytest.mark.parametrize("mech,counts", CASES[:4], ids=IDS[:4])
def test_pass_probabilities_match_quadrature_of_the_laplace_density(mech, counts):
    # Independent route: the marginal P[i reported] summed from the law against
    # quadrature of the density, and the law factorises into those marginals.
    law = output_law(mech, counts)
    items, values, h_next = mech.limited_domain(counts)
    with working_precision():
        # τ = 1 + ln(1/(2 δ_i))/ε with δ_i = δ/k̄ as the double the mechanism uses.
        tau = 1 + mpmath.log(1 / (2 * mpmath.mpf(mech.threshold_delta()))) / mech.epsilon
        marginal = {}
        for item, value in zip(items.tolist(), values.tolist()):
            marginal[item] = mpmath.fsum(p for o, p in law.items() if item in o)
            expected = _quad_pass_probability(mech.epsilon, tau - (value - h_next))
            assert abs(marginal[item] - expected) < mpmath.mpf("1e-35")
        for outcome, p in law.items():
            product = mpmath.fprod(
                marginal[i] if i in outcome else 1 - marginal[i] for i in marginal
            )
            assert abs(p - product) < mpmath.mpf("1e-40")


def test_laplace_tails_are_complementary_on_both_sides():
    with working_precision():
        for x in (-3, -mpmath.mpf("1e-30"), 0, mpmath.mpf("0.5"), 40):
            above, below = laplace_tails(x, mpmath.mpf(2))
            assert abs(above + below - 1) < SUM_TOL
            assert abs(above - _quad_pass_probability(mpmath.mpf("0.5"), x)) < mpmath.mpf("1e-35")
        # a deep tail is computed directly, not as 1 − (1 − tiny)
        assert laplace_tails(-200, 1)[1] == mpmath.exp(-200) / 2


@pytest.mark.parametrize("mech,counts", CASES, ids=IDS)
def test_sampler_matches_exact_law(mech, counts):
    # 10^5 samples, fixed seed; chi-square with cells of expected count < 5 pooled;
    # false-failure probability <= 1e-6 per case.
    law = output_law(mech, counts)
    assert_sampler_fits(law, mech.sample(counts, SAMPLES, np.random.default_rng(20261123)), P_FAIL)


# --- exhaustive verification -------------------------------------------------------------

PARAMS = {"epsilon": 1.0, "delta": 1e-3}


def _test_delta(kbar):
    """δ/k̄ as the double the threshold is solved against (``threshold_delta()``)."""
    return mpmath.mpf(PARAMS["delta"] / kbar)


@pytest.mark.parametrize("kbar", [2, 3])
def test_claim_holds_exhaustively_on_d5_counts_up_to_3(kbar):
    # About 1.5 s each. Counts <= 3 sit far below T = h_(k̄+1) + τ (τ ≈ 7.9 / 8.3), so the
    # worst exact ε at δ is only ~0.95 here; see the next test for the ε part.
    result = verify(FixedThreshold(kbar=kbar, **PARAMS), d=5, max_count=3, progress=False)
    assert result.holds, result
    # The δ part is tight to first order: k̄ items one above the cut, 1 − (1 − δ/k̄)^k̄.
    with working_precision():
        tight = 1 - (1 - _test_delta(kbar)) ** kbar
        assert abs(result.delta_at_epsilon - tight) < mpmath.mpf("1e-30")
    assert result.epsilon_at_delta < 1.0


@pytest.mark.parametrize("kbar", [2, 3])
def test_claim_holds_and_its_epsilon_is_nearly_tight_once_counts_reach_the_threshold(kbar):
    # d = 3, counts <= 10 (about 1 s each): the tests of all k̄ items can sit below T
    # (the Laplace CDF side), where "nothing passes" moves by e^ε per item, so the exact
    # ε at δ = 1e-3 comes within 0.03 of the claimed k̄ε (1.995 for k̄ = 2, 2.979 for 3).
    result = verify(FixedThreshold(kbar=kbar, **PARAMS), d=3, max_count=10, progress=False)
    assert result.holds, result
    assert kbar - 0.03 < result.epsilon_at_delta < kbar


def test_kbar_one_meets_the_claim_with_equality():
    # One test: the item one above the cut passes with probability exactly δ.
    result = verify(FixedThreshold(kbar=1, **PARAMS), d=3, max_count=3, progress=False)
    assert result.holds, result
    assert abs(result.delta_at_epsilon - mpmath.mpf(PARAMS["delta"])) < mpmath.mpf("1e-40")


@pytest.mark.parametrize("kbar", [1, 2, 3])
def test_threshold_without_the_plus_one_is_caught(kbar):
    result = verify(FixedThresholdNoMargin(kbar=kbar, **PARAMS), d=5, max_count=3, progress=False)
    assert not result.holds
    assert result.law_class == "FixedThresholdNoMargin"
    # k̄ items one above the cut, each passing with e^ε δ/k̄ instead of δ/k̄.
    with working_precision():
        worst = 1 - (1 - mpmath.e * _test_delta(kbar)) ** kbar
        assert abs(result.delta_at_epsilon - worst) < mpmath.mpf("1e-30")


def test_catalog_witness_pair_shows_the_missing_plus_one_exactly():
    mech = FixedThresholdNoMargin(kbar=2, **PARAMS)
    c, c2 = np.array([0, 0, 0, 1, 1]), np.zeros(5, dtype=np.int64)
    with working_precision():
        delta = hockey_stick(output_law(mech, c), output_law(mech, c2), mech.claim.epsilon)
        assert abs(delta - (1 - (1 - mpmath.e * _test_delta(2)) ** 2)) < mpmath.mpf("1e-40")
    assert delta > 2.7 * 1e-3


@pytest.mark.parametrize("kbar", [2, 3])
def test_threshold_solved_against_delta_instead_of_delta_over_kbar_is_caught(kbar):
    result = verify(
        FixedThresholdDeltaNotSplit(kbar=kbar, **PARAMS), d=5, max_count=3, progress=False
    )
    assert not result.holds
    with working_precision():
        worst = 1 - (1 - mpmath.mpf(PARAMS["delta"])) ** kbar  # about k̄δ
        assert abs(result.delta_at_epsilon - worst) < mpmath.mpf("1e-30")


def test_delta_not_split_is_harmless_for_a_single_test():
    # k̄ = 1: δ/k̄ = δ, the "bug" is the correct mechanism.
    result = verify(FixedThresholdDeltaNotSplit(kbar=1, **PARAMS), d=5, max_count=3, progress=False)
    assert result.holds, result
