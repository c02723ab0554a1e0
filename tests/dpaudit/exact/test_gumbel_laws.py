"""Exact laws of the Gumbel / exponential-mechanism family and the limited domain.

Checks: hand-derived values, normalisation (hypothesis), PeelingEM == GumbelTopK
(seed 003 Lemma 4.2, two derivations), numerical integration over the Gumbel
density, and chi-square goodness of fit of every sampler against its law.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from goodness_of_fit import chi_square_pvalue
from hypothesis import given, settings
from hypothesis import strategies as st

import mechanisms as M
from dpaudit.exact import output_law
from dpaudit.exact.gumbel_laws import gumbel_chain_probability, plackett_luce_law
from dpaudit.exact.law import working_precision

# Each chi-square test rejects at p < 1e-6: false failure probability <= 1e-6 per test.
ALPHA = 1e-6

histograms = st.lists(st.integers(0, 6), min_size=1, max_size=5).map(np.array)
epsilons = st.sampled_from([0.1, 0.5, 1.0, 2.0])


def _sum_is_one(law):
    with working_precision():
        return abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf("1e-30")


def _well_formed(law, mech, d):
    for outcome in law:
        assert 1 <= len(outcome) <= mech.width
        items = [i for i in outcome if i != M.BOTTOM]
        assert len(set(items)) == len(items)
        assert all(0 <= i < d for i in items)
        if M.BOTTOM in outcome:
            assert outcome.index(M.BOTTOM) == len(outcome) - 1
    assert all(p > 0 for p in law.values())


# ----------------------------------------------------------- hand-derived values


def test_gumbel_top_k_hand_value():
    # ε = ln 2: weights 4, 2, 1. P(0 then 1) = 4/7 · 2/3 = 8/21.
    law = output_law(M.GumbelTopK(k=2, epsilon=float(np.log(2))), [2, 1, 0])
    with working_precision():
        # ε is ln 2 rounded to a double; tolerance covers that (~1e-16 relative).
        assert abs(law[(0, 1)] - mpmath.mpf(8) / 21) < 1e-15
        assert len(law) == 6


def test_exponential_mechanism_hand_value():
    law = output_law(M.ExponentialMechanism(epsilon=1.0), [1, 0])
    with working_precision():
        assert abs(law[(0,)] - mpmath.e / (mpmath.e + 1)) < mpmath.mpf("1e-45")


def test_limit_domain_tie_break_decides_candidates():
    # k = k̄ = 1, counts (3, 3, 0): the tie goes to item 0, item 1 is not a
    # candidate. h_⊥ = 3 + 1 + ln(min{1, 1, 2}/δ)/ε, so
    # P(0) = e^{3ε} / (e^{3ε} + e^{4ε}/δ) = 1 / (1 + e^ε/δ).
    eps, delta = 0.5, 0.01
    law = output_law(M.LimitDomain(k=1, kbar=1, epsilon=eps, delta=delta), [3, 3, 0])
    assert set(law) == {(0,), (M.BOTTOM,)}
    with working_precision():
        expected = 1 / (1 + mpmath.exp(mpmath.mpf(eps)) / mpmath.mpf(delta))
        assert abs(law[(0,)] - expected) < mpmath.mpf("1e-45")
    # Swapping the tied counts' ids swaps the candidate.
    law_swapped = output_law(M.LimitDomain(k=1, kbar=1, epsilon=eps, delta=delta), [0, 3, 3])
    assert set(law_swapped) == {(1,), (M.BOTTOM,)}


def test_limit_domain_restricted_threshold_hand_value():
    # d = 4, k̄ = 2, Δ = 1: size term min{1, 2, 2} = 1; counts sorted (5, 4 | 1, 0).
    # k = 1: P(⊥) = e^{ε h⊥} / (e^{5ε} + e^{4ε} + e^{ε h⊥}), h⊥ = 1 + 1 + ln(1/δ)/ε.
    eps, delta = 1.0, 0.1
    law = output_law(
        M.LimitDomain(k=1, kbar=2, epsilon=eps, delta=delta, max_items=1), [1, 4, 0, 5]
    )
    with working_precision():
        e = mpmath.e
        bot = e**2 / mpmath.mpf(delta)
        assert abs(law[(M.BOTTOM,)] - bot / (e**5 + e**4 + bot)) < mpmath.mpf("1e-45")
        assert abs(law[(3,)] - e**5 / (e**5 + e**4 + bot)) < mpmath.mpf("1e-45")


def test_strict_limit_domain_drops_boundary_ties():
    # k̄ = 2, counts (4, 2, 2): h_(3) = 2, so only item 0 (> 2) is a candidate;
    # threshold 2 + 1 + ln(k̄/δ)/ε. P(0) = e^{4ε} / (e^{4ε} + e^{3ε} k̄/δ).
    eps, delta = 1.0, 0.05
    law = output_law(M.StrictLimitDomain(k=2, kbar=2, epsilon=eps, delta=delta), [4, 2, 2])
    assert set(law) == {(0, M.BOTTOM), (M.BOTTOM,)}
    with working_precision():
        e = mpmath.e
        bot = e**3 * 2 / mpmath.mpf(delta)
        assert abs(law[(0, M.BOTTOM)] - e**4 / (e**4 + bot)) < mpmath.mpf("1e-45")


def test_small_domain_outcomes():
    # d = 2 < k = 3: GumbelTopK returns both items in some order.
    law = output_law(M.GumbelTopK(k=3, epsilon=1.0), [0, 1])
    assert set(law) == {(0, 1), (1, 0)}
    # LimitDomain with d <= k̄ and k > d: every item then ⊥ is possible.
    law = output_law(M.LimitDomain(k=3, kbar=3, epsilon=1.0, delta=0.1), [2, 0])
    assert (0, 1, M.BOTTOM) in law and (1, 0, M.BOTTOM) in law and (M.BOTTOM,) in law
    assert _sum_is_one(law)


def test_optimized_kbar_is_mixture_of_limit_domain_laws():
    # Seed 002 §6.3: P(k̄) ∝ exp(−ε h_⊥(k̄)), then LimitDom_{k, k̄}; thresholds
    # taken from the mechanism's own h_⊥ (floats) and mixed by hand here.
    counts = np.array([5, 3, 3, 1, 0, 2])
    opt = M.LimitDomainOptimizedKbar(k=2, kbar_max=4, epsilon=0.8, delta=0.05)
    law = output_law(opt, counts)
    with working_precision():
        parts = []
        for kbar in range(2, 5):
            ld = M.LimitDomain(k=2, kbar=kbar, epsilon=0.8, delta=0.05)
            parts.append(
                (
                    mpmath.exp(-mpmath.mpf(0.8) * mpmath.mpf(ld.threshold(counts))),
                    output_law(ld, counts),
                )
            )
        total = mpmath.fsum(w for w, _ in parts)
        for outcome, p in law.items():
            expected = mpmath.fsum(w * part.get(outcome, 0) for w, part in parts) / total
            # float thresholds: agreement to ~1e-14 relative.
            assert abs(p - expected) <= 1e-13 * expected


def test_accepts_top_counts():
    counts = np.array([0, 7, 3, 3, 1, 9])
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3, max_items=2)
    assert output_law(mech, counts) == output_law(mech, M.top_counts(counts, 4))


@pytest.mark.parametrize("bad", [[], [[1, 2]], [1, -1], [1.5, 2], [np.nan]])
def test_bad_counts_rejected(bad):
    for mech in (
        M.ExponentialMechanism(epsilon=1.0),
        M.GumbelTopK(k=1, epsilon=1.0),
        M.PeelingEM(k=1, epsilon=1.0),
        M.LimitDomain(k=1, kbar=1, epsilon=1.0, delta=0.1),
    ):
        with pytest.raises(ValueError):
            output_law(mech, bad)


# ------------------------------------------------------------ property tests


@settings(max_examples=40, deadline=None)
@given(counts=histograms, k=st.integers(1, 3), epsilon=epsilons)
def test_em_family_sums_to_one(counts, k, epsilon):
    d = counts.size
    for mech in (M.ExponentialMechanism(epsilon=epsilon), M.PeelingEM(k=k, epsilon=epsilon)):
        law = output_law(mech, counts)
        assert _sum_is_one(law)
        _well_formed(law, mech, d)
        assert len(law) == len(list(itertools.permutations(range(d), min(mech.width, d))))


@settings(max_examples=25, deadline=None)
@given(counts=histograms, k=st.integers(1, 3), epsilon=epsilons)
def test_peeling_equals_gumbel_top_k(counts, k, epsilon):
    # Seed 003 Lemma 4.2, by two derivations (peeling product vs Gumbel order
    # statistics by inclusion–exclusion): equal to working precision.
    peel = output_law(M.PeelingEM(k=k, epsilon=epsilon), counts)
    gumbel = output_law(M.GumbelTopK(k=k, epsilon=epsilon), counts)
    assert set(peel) == set(gumbel)
    for outcome, p in peel.items():
        assert abs(p - gumbel[outcome]) <= mpmath.mpf("1e-40") * p


@settings(max_examples=60, deadline=None)
@given(
    counts=histograms,
    k=st.integers(1, 3),
    extra=st.integers(0, 3),
    epsilon=epsilons,
    delta=st.sampled_from([1e-6, 1e-3, 0.1, 0.5]),
    max_items=st.sampled_from([None, 1, 2]),
)
def test_limit_domain_family_sums_to_one(counts, k, extra, epsilon, delta, max_items):
    d = counts.size
    kw = {"epsilon": epsilon, "delta": delta, "max_items": max_items}
    for mech in (
        M.LimitDomain(k=k, kbar=k + extra, **kw),
        M.StrictLimitDomain(k=k, kbar=k + extra, **kw),
        M.LimitDomainOptimizedKbar(k=k, kbar_max=k + extra, **kw),
    ):
        law = output_law(mech, counts)
        assert _sum_is_one(law)
        _well_formed(law, mech, d)


@settings(max_examples=40, deadline=None)
@given(counts=histograms, k=st.integers(1, 3), extra=st.integers(0, 2), epsilon=epsilons)
def test_limit_domain_items_are_top_kbar(counts, k, extra, epsilon):
    # Only the true top-k̄ (rank order, ties to the lower id) can be reported.
    kbar = k + extra
    mech = M.LimitDomain(k=k, kbar=kbar, epsilon=epsilon, delta=0.01)
    allowed = {int(i) for i in M.rank_order(counts)[:kbar]}
    reported = {i for outcome in output_law(mech, counts) for i in outcome if i != M.BOTTOM}
    assert reported == allowed


@settings(max_examples=30, deadline=None)
@given(counts=histograms, epsilon=epsilons, delta=st.sampled_from([1e-3, 0.1]))
def test_limit_domain_shift_invariant(counts, epsilon, delta):
    # Adding the same amount to every count changes no score difference.
    mech = M.LimitDomain(k=2, kbar=2, epsilon=epsilon, delta=delta)
    if counts.size <= 2:  # d <= k̄ treats the missing h_(k̄+1) as 0, which does not shift
        return
    a, b = output_law(mech, counts), output_law(mech, counts + 3)
    assert a.keys() == b.keys()
    assert all(abs(a[o] - b[o]) <= mpmath.mpf("1e-45") for o in a)


@pytest.mark.parametrize("counts,epsilon,k", [([30, 0, 15, 1], 2.0, 4), ([100, 0, 50], 1.0, 3)])
def test_peeling_equals_gumbel_top_k_far_apart_counts(counts, epsilon, k):
    # Probabilities down to ~1e-65: the inclusion–exclusion route cancels
    # heavily here, so this checks its guard digits; relative agreement 1e-40.
    peel = output_law(M.PeelingEM(k=k, epsilon=epsilon), counts)
    gumbel = output_law(M.GumbelTopK(k=k, epsilon=epsilon), counts)
    assert min(peel.values()) < 1e-60
    for outcome, p in peel.items():
        assert abs(p - gumbel[outcome]) <= mpmath.mpf("1e-40") * p


@settings(max_examples=30, deadline=None)
@given(
    counts=st.lists(st.integers(-5, 5), min_size=1, max_size=4).filter(lambda c: min(c) < 0)
    | st.lists(st.floats(0.1, 5).filter(lambda x: x != int(x)), min_size=1, max_size=4)
)
def test_invalid_histograms_rejected(counts):
    for mech in (
        M.GumbelTopK(k=2, epsilon=1.0),
        M.PeelingEM(k=2, epsilon=1.0),
        M.LimitDomain(k=1, kbar=2, epsilon=1.0, delta=0.1),
        M.StrictLimitDomain(k=1, kbar=2, epsilon=1.0, delta=0.1),
        M.LimitDomainOptimizedKbar(k=1, kbar_max=2, epsilon=1.0, delta=0.1),
    ):
        with pytest.raises(ValueError, match="counts"):
            output_law(mech, counts)


# ---------------------------------------- independent route: numerical integration


def _gumbel_cdf(x, a):
    return mpmath.exp(-mpmath.exp(a - x))


def _gumbel_pdf(x, a):
    return mpmath.exp(a - x) * _gumbel_cdf(x, a)


def _integrated(locations, first, second=None):
    """P(X_first is largest [and X_second second]) by quadrature of the Gumbel density.

    X_i = a_i + Gumbel(1). k = 1: ∫ g(x − a_i) Π_{j≠i} G(x − a_j) dx. k = 2:
    integrate over the second value x: g(x − a_2) (1 − G(x − a_1)) Π_rest G.
    The integrand is below 1e-30 outside [min a − 8, max a + 75].
    """
    with mpmath.workdps(30):
        a = [mpmath.mpf(v) for v in locations]
        target = first if second is None else second
        others = [j for j in range(len(a)) if j not in (first, second)]

        def integrand(x):
            value = _gumbel_pdf(x, a[target])
            for j in others:
                value *= _gumbel_cdf(x, a[j])
            if second is not None:
                value *= 1 - _gumbel_cdf(x, a[first])
            return value

        points = mpmath.linspace(min(a) - 8, max(a) + 75, 14)
        return mpmath.quad(integrand, points)


@pytest.mark.parametrize("counts,epsilon", [([2, 0, 1], 1.0), ([0, 3, 1, 1], 0.5)])
def test_gumbel_laws_match_quadrature(counts, epsilon):
    locations = [epsilon * c for c in counts]
    d = len(counts)
    law1 = output_law(M.GumbelTopK(k=1, epsilon=epsilon), counts)
    law2 = output_law(M.PeelingEM(k=2, epsilon=epsilon), counts)
    for i in range(d):
        assert abs(law1[(i,)] - _integrated(locations, i)) < 1e-20
    for i, j in list(itertools.permutations(range(d), 2))[:4]:
        assert abs(law2[(i, j)] - _integrated(locations, i, j)) < 1e-20


def test_limit_domain_matches_quadrature():
    # ⊥ is one more Gumbel variable at location ε h_⊥; (i, ⊥) means X_i > X_⊥ > rest.
    counts, eps, delta = [4, 2, 3, 0], 1.0, 0.1
    mech = M.LimitDomain(k=2, kbar=2, epsilon=eps, delta=delta)
    law = output_law(mech, counts)
    # candidates: items 0 (count 4) and 2 (count 3); h_(3) = 2, size min{2, 2} = 2.
    with mpmath.workdps(40):
        h_bot = 2 + 1 + mpmath.log(mpmath.mpf(2) / mpmath.mpf(delta)) / eps
        locations = [eps * 4, eps * 3, eps * h_bot]  # positions: item 0, item 2, ⊥
    assert abs(law[(M.BOTTOM,)] - _integrated(locations, 2)) < 1e-20
    assert abs(law[(2, M.BOTTOM)] - _integrated(locations, 1, 2)) < 1e-20
    assert abs(law[(0, 2)] - _integrated(locations, 0, 1)) < 1e-20


def test_chain_probability_matches_peeling_with_rest():
    with working_precision():
        w = [mpmath.mpf(v) for v in (3, 1, 0.5, 2)]
        pl = plackett_luce_law(w, [0, 1, 2, 3], 3)
        logs = [mpmath.log(v) for v in w]
        chain = gumbel_chain_probability([logs[1], logs[3], logs[0]], [logs[2]])
        assert abs(chain - pl[(1, 3, 0)]) < mpmath.mpf("1e-45")


# ------------------------------------------------- sampler vs law (chi-square)


def _chi_square_p(mech, counts, size, seed):
    law = output_law(mech, counts)
    return chi_square_pvalue(law, mech.sample(counts, size, np.random.default_rng(seed)))


CASES = [
    (M.ExponentialMechanism(epsilon=0.7), [3, 1, 2, 0, 2]),
    (M.PeelingEM(k=2, epsilon=0.7), [3, 1, 2, 0, 2]),
    (M.GumbelTopK(k=3, epsilon=0.5), [3, 1, 2, 0, 2]),
    (M.GumbelTopK(k=4, epsilon=1.0), [1, 0, 2]),
    (M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=0.2), [3, 3, 2, 2, 0]),
    (M.LimitDomain(k=3, kbar=3, epsilon=1.0, delta=0.3, max_items=1), [5, 4, 4, 4, 1, 0]),
    (M.StrictLimitDomain(k=2, kbar=3, epsilon=1.0, delta=0.2), [3, 2, 2, 1, 1]),
    (M.StrictLimitDomain(k=2, kbar=3, epsilon=0.5, delta=0.4), [4, 1, 3, 0]),
    (M.LimitDomainOptimizedKbar(k=2, kbar_max=4, epsilon=0.7, delta=0.3), [6, 4, 4, 2, 1, 0]),
    (
        M.LimitDomainOptimizedKbar(k=1, kbar_max=3, epsilon=1.0, delta=0.2, max_items=2),
        [2, 2, 1, 0],
    ),
]


@pytest.mark.parametrize("mech,counts", CASES, ids=lambda x: type(x).__name__)
def test_sampler_matches_law(mech, counts):
    # 10^5 samples, fixed seed; reject at p < 1e-6 (false failure <= 1e-6).
    assert _chi_square_p(mech, np.array(counts), 100_000, seed=20261123) > ALPHA


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    counts=st.lists(st.integers(0, 5), min_size=1, max_size=6).map(np.array),
    k=st.integers(1, 3),
    extra=st.integers(0, 3),
    epsilon=epsilons,
    delta=st.sampled_from([0.01, 0.2]),
    seed=st.integers(0, 2**32 - 1),
)
def test_sampler_matches_law_random(counts, k, extra, epsilon, delta, seed):
    # 30 random settings × 4 mechanisms at p < 1e-6 each: false failure <= 1.2e-4.
    kw = {"epsilon": epsilon, "delta": delta}
    for mech in (
        M.GumbelTopK(k=k, epsilon=epsilon),
        M.LimitDomain(k=k, kbar=k + extra, **kw),
        M.StrictLimitDomain(k=k, kbar=k + extra, **kw),
        M.LimitDomainOptimizedKbar(k=k, kbar_max=k + extra, **kw),
    ):
        assert _chi_square_p(mech, counts, 100_000, seed) > ALPHA
