"""Exact laws of the Laplace-family mechanisms: normalisation, known values, sampler fit."""

import mpmath
import numpy as np
import pytest
from scipy import stats

import mechanisms as M
from dpaudit.exact import output_law, working_precision
from dpaudit.exact.laplace_laws import permute_and_flip_law
from mechanisms import count_outcomes

SAMPLES = 100_000
P_FAIL = 1e-6
TOL = mpmath.mpf("1e-30")


_LAWS = {}


def law_of(mech, counts):
    """``output_law`` cached per (mechanism, counts): the Gaussian law takes seconds."""
    key = (mech, tuple(counts) if not isinstance(counts, M.TopCounts) else id(counts))
    if key not in _LAWS:
        _LAWS[key] = output_law(mech, counts)
    return _LAWS[key]


def chi_square_fit(mech, counts, seed):
    """Chi-square goodness of fit of ``mech.sample`` to ``output_law`` (false failure <= P_FAIL).

    Cells with expected count < 5 are pooled into one cell (the usual validity
    rule for the chi-square approximation); a sampled outcome outside the
    law's support fails immediately.
    """
    law = law_of(mech, counts)
    batch = mech.sample(counts, SAMPLES, np.random.default_rng(seed))
    observed = count_outcomes(batch)
    assert set(observed) <= set(law), f"outcomes outside the law: {set(observed) - set(law)}"
    big_obs, big_exp, pool_obs, pool_exp = [], [], 0, 0.0
    for outcome, p in law.items():
        expected = float(p) * SAMPLES
        if expected >= 5:
            big_obs.append(observed.get(outcome, 0))
            big_exp.append(expected)
        else:
            pool_obs += observed.get(outcome, 0)
            pool_exp += expected
    if pool_exp > 0:
        big_obs.append(pool_obs)
        big_exp.append(pool_exp)
    big_exp = np.array(big_exp)
    big_exp *= SAMPLES / big_exp.sum()  # remove float rounding of the exact law
    pvalue = stats.chisquare(big_obs, big_exp).pvalue
    assert pvalue > P_FAIL, f"chi-square p = {pvalue:.3g} for {mech}"


MECHANISMS_AND_COUNTS = [
    (M.ReportNoisyMax(epsilon=1.0), [3, 2, 2, 0, 1]),
    (M.ReportNoisyMax(epsilon=0.7, monotonic=False), [0, 4, 1, 1]),
    (M.LaplaceTopK(k=2, epsilon=2.0), [3, 2, 2, 0, 1]),
    (M.LaplaceTopK(k=3, epsilon=3.0), [2, 0, 1, 2]),
    (M.PermuteAndFlip(epsilon=1.0), [3, 2, 2, 0, 1]),
    (M.PermuteAndFlip(epsilon=0.5, monotonic=False), [0, 1, 5]),
    (M.GaussianTopK(k=1, epsilon=1.0, delta=1e-3, max_items=2), [2, 0, 1]),
    (M.LaplaceLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3, max_items=1), [5, 4, 4, 1, 0]),
    (M.LaplaceLimitDomain(k=2, kbar=3, epsilon=0.5, delta=0.05, max_items=2), [3, 3, 2, 2, 2]),
    (M.LaplaceLimitDomain(k=3, kbar=3, epsilon=2.0, delta=0.1, max_items=1), [1, 0]),
]
IDS = [f"{type(m).__name__}-{i}" for i, (m, _) in enumerate(MECHANISMS_AND_COUNTS)]


@pytest.mark.parametrize("mech,counts", MECHANISMS_AND_COUNTS, ids=IDS)
def test_law_sums_to_one_and_has_valid_outcomes(mech, counts):
    law = law_of(mech, counts)
    with working_precision():
        assert abs(mpmath.fsum(law.values()) - 1) < TOL
    for outcome, p in law.items():
        assert p >= 0
        assert len(outcome) <= mech.width
        items = [i for i in outcome if i != M.BOTTOM]
        assert len(set(items)) == len(items)
        assert all(0 <= i < len(counts) for i in items)


@pytest.mark.parametrize("mech,counts", MECHANISMS_AND_COUNTS, ids=IDS)
def test_sampler_matches_exact_law(mech, counts):
    # 10^5 samples, fixed seed; false-failure probability <= 1e-6 (chi-square at p < 1e-6).
    chi_square_fit(mech, counts, seed=20261123)


@pytest.mark.slow
def test_gaussian_top_2_sampler_matches_exact_law():
    # About 15 s of quadrature; false-failure probability <= 1e-6.
    chi_square_fit(M.GaussianTopK(k=2, epsilon=1.0, delta=1e-3, max_items=2), [2, 0, 1], seed=7)


def test_report_noisy_max_two_items_paper_formula():
    # P[c2 + Lap(b) > c1 + Lap(b)] = e^{-g/b}(2 + g/b)/4 with g = c1 - c2 (seed 002 Lemma D.1).
    mech = M.ReportNoisyMax(epsilon=0.5)
    law = output_law(mech, [4, 1])
    with working_precision():
        x = mpmath.mpf(3) * mpmath.mpf("0.5")
        assert abs(law[(1,)] - mpmath.exp(-x) * (2 + x) / 4) < TOL


def test_laplace_top_1_equals_non_monotone_report_noisy_max():
    # Lap(2k/ε) with k = 1 is Lap(2/ε): the same law as RNM for sensitivity-1 queries.
    counts = [2, 5, 3, 3]
    a = output_law(M.LaplaceTopK(k=1, epsilon=0.8), counts)
    b = output_law(M.ReportNoisyMax(epsilon=0.8, monotonic=False), counts)
    assert a.keys() == b.keys()
    assert all(abs(a[o] - b[o]) < TOL for o in a)


def test_permute_and_flip_two_items_by_hand():
    # Items 0 (top) and 1 with p_1 = e^{-g/s}: item 1 wins only if visited first and heads.
    with working_precision():
        law = permute_and_flip_law([3, 1], 1)
        assert abs(law[(1,)] - mpmath.exp(-2) / 2) < TOL
        assert abs(law[(0,)] - (1 - mpmath.exp(-2) / 2)) < TOL


def test_permute_and_flip_three_items_by_enumeration():
    # Average over all 3! visiting orders of P[first heads is r] (McKenna & Sheldon Alg. 1).
    import itertools

    counts, scale = [2, 0, 1], 2
    with working_precision():
        p = [mpmath.exp(mpmath.mpf(c - 2) / scale) for c in counts]
        expected = [mpmath.mpf(0)] * 3
        for perm in itertools.permutations(range(3)):
            survive = mpmath.mpf(1)
            for r in perm:
                expected[r] += survive * p[r] / 6
                survive *= 1 - p[r]
        law = permute_and_flip_law(counts, scale)
        assert all(abs(law[(r,)] - expected[r]) < TOL for r in range(3))


def test_permute_and_flip_never_worse_than_exponential_mechanism_on_top_item():
    # McKenna & Sheldon Thm 2: P&F's probability of the top item is >= EM's
    # (EM with P ∝ exp(ε c / 2Δ) for general, exp(ε c) for monotone quality).
    counts, eps = [4, 3, 3, 1], 1.0
    law = output_law(M.PermuteAndFlip(epsilon=eps), counts)
    with working_precision():
        weights = [mpmath.exp(eps * c) for c in counts]
        assert law[(0,)] >= weights[0] / mpmath.fsum(weights)


def test_laplace_limit_domain_uses_only_top_kbar_plus_one():
    full = [9, 0, 7, 7, 1, 3, 0, 2]
    mech = M.LaplaceLimitDomain(k=2, kbar=3, epsilon=1.0, delta=0.01, max_items=1)
    top = M.top_counts(full, 4)
    a, b = output_law(mech, full), output_law(mech, top)
    assert a.keys() == b.keys()
    assert all(abs(a[o] - b[o]) < TOL for o in a)
    assert all(i in (0, 2, 3) for o in a for i in o if i != M.BOTTOM)


def test_laplace_limit_domain_law_verified_on_small_family():
    # Exhaustive exact check of the claim, d = 3, counts <= 2 (a few seconds).
    from dpaudit.exact import verify

    mech = M.LaplaceLimitDomain(k=2, kbar=2, epsilon=1.0, delta=1e-3, max_items=1)
    result = verify(mech, d=3, max_count=2, progress=False)
    assert result.holds


@pytest.mark.slow
def test_laplace_limit_domain_verified_d5_counts_le_3():
    # The task's family: LaplaceLimitDomain(k=2, k̄=3, Δ=1), ε=1, δ=1e-3, d=5, counts <= 3.
    from dpaudit.exact import verify

    mech = M.LaplaceLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3, max_items=1)
    result = verify(mech, d=5, max_count=3, progress=False)
    assert result.holds


@pytest.mark.parametrize(
    "mech",
    [
        M.ReportNoisyMax(epsilon=1.0),
        M.ReportNoisyMax(epsilon=1.0, monotonic=False),
        M.LaplaceTopK(k=2, epsilon=1.0),
        M.PermuteAndFlip(epsilon=1.0),
        M.PermuteAndFlip(epsilon=1.0, monotonic=False),
    ],
    ids=lambda m: f"{type(m).__name__}-{getattr(m, 'monotonic', '')}",
)
def test_full_domain_claims_verified_on_small_family(mech):
    # Exhaustive exact check of the pure-DP claims: d = 3, counts <= 2, under each
    # mechanism's own neighbour relation (under a second each).
    from dpaudit.exact import verify

    result = verify(mech, d=3, max_count=2, progress=False)
    assert result.holds
    assert result.epsilon_at_delta <= mech.claim.epsilon * (1 + 1e-9)
