"""Exact laws of the stability family: normalisation, independent closed forms, and
sampler-vs-law goodness of fit (chi-square, fixed seeds, p < 1e-6 -> false failure <= 1e-6
per test)."""

import mpmath
import numpy as np
import pytest
from scipy import stats

import dpaudit  # noqa: F401  (registers the laws)
from dpaudit.exact import output_law, working_precision
from dpaudit.exact.stability_laws import plackett_luce_set_law
from mechanisms import (
    BOTTOM,
    GumbelTopK,
    RestrictedDomain,
    RestrictedGumbel,
    RestrictedNormal,
    SparseVector,
    StabilityRelease,
    TopStable,
    count_outcomes,
)
from mechanisms.tail_bounds import laplace_difference_tail_mp

COUNTS = np.array([5, 0, 3, 3, 9, 1])

MECHANISMS = {
    "svt": SparseVector(threshold=3, epsilon1=1.0, epsilon2=1.0, cutoff=2),
    "svt-halting": SparseVector(threshold=1, epsilon1=1.0, epsilon2=1.0, cutoff=3, halting=True),
    "a-stab": StabilityRelease(k=2, epsilon=1.0, delta=0.1),
    "ts": TopStable(k=2, kbar=3, epsilon=3.0, delta=0.1),
    "ts-exact": TopStable(k=2, kbar=3, epsilon=3.0, delta=0.1, calibration="exact"),
    "ts-em": TopStable(k=2, kbar=4, epsilon=5.0, delta=0.1, epsilon_em=1.0),
    "rg": RestrictedGumbel(k=2, kbar=3, epsilon=1.0, delta=0.0, epsilon_r=3.0, delta_r=1e-2),
    "f-ts": RestrictedDomain(
        mechanism=TopStable(k=2, kbar=3, epsilon=5.0, delta=0.1),
        kbar=4,
        epsilon=2.0,
        delta=0.1,
        calibration="exact",
    ),
}


def _law_floats(law):
    return {k: float(v) for k, v in law.items()}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_law_sums_to_one_and_has_well_formed_outcomes(name):
    mech = MECHANISMS[name]
    law = output_law(mech, COUNTS)
    with working_precision():
        assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf("1e-30")
    for outcome, p in law.items():
        assert p > 0 and 1 <= len(outcome) <= mech.width
        if not mech.ordered:
            items = [v for v in outcome if v != BOTTOM]
            assert items == sorted(items)


def _goodness_of_fit(mech, counts, n, seed):
    law = output_law(mech, counts)
    observed = count_outcomes(mech.sample(counts, n, np.random.default_rng(seed)))
    assert set(observed) <= set(law), (
        f"sampled outcomes outside the law: {set(observed) - set(law)}"
    )
    keys = sorted(law)
    expected = np.array([float(law[k]) * n for k in keys])
    seen = np.array([observed.get(k, 0) for k in keys])
    big = expected >= 5  # pool the rare outcomes so the chi-square approximation holds
    f_exp = np.append(expected[big], expected[~big].sum())
    f_obs = np.append(seen[big], seen[~big].sum())
    if f_exp[-1] < 5:
        f_exp[-2] += f_exp[-1]
        f_obs[-2] += f_obs[-1]
        f_exp, f_obs = f_exp[:-1], f_obs[:-1]
    f_exp *= f_obs.sum() / f_exp.sum()
    if f_exp.size < 2:
        return 1.0
    return stats.chisquare(f_obs, f_exp).pvalue


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_sampler_matches_exact_law(name):
    # 10^5 samples, fixed seed; p < 1e-6 -> false-failure probability <= 1e-6
    assert _goodness_of_fit(MECHANISMS[name], COUNTS, 100_000, seed=20261123) > 1e-6


@pytest.mark.slow
def test_restricted_normal_sampler_matches_exact_law():
    # Gaussian top-k law by nested quadrature (slow); false failure <= 1e-6
    mech = RestrictedNormal(k=2, kbar=3, epsilon=1.0, delta=1e-3, epsilon_r=3.0, delta_r=1e-2)
    assert _goodness_of_fit(mech, COUNTS, 100_000, seed=7) > 1e-6


@pytest.mark.slow
def test_restricted_normal_law_k1_sums_to_one():
    mech = RestrictedNormal(k=1, kbar=2, epsilon=1.0, delta=1e-3, epsilon_r=3.0, delta_r=1e-2)
    law = output_law(mech, np.array([4, 0, 2]))
    with working_precision():
        assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf("1e-30")
    assert set(law) <= {(0,), (2,), (0, BOTTOM)[:1] + (BOTTOM,), (2, BOTTOM), (BOTTOM,)}


# ---- independent closed forms (not the code's own outputs) -----------------------------


def test_halting_svt_single_query_is_the_laplace_difference_tail():
    mech = SparseVector(threshold=2.5, epsilon1=0.7, epsilon2=1.3, cutoff=1, halting=True)
    law = output_law(mech, np.array([4]))
    with working_precision():
        # the law is exact for the float scales the sampler uses (1/1.3 rounded)
        expected = laplace_difference_tail_mp(
            1 / mpmath.mpf(mech.query_scale()),
            1 / mpmath.mpf(mech.threshold_scale()),
            mpmath.mpf(2.5) - 4,
        )
        assert abs(law[(0,)] - expected) < mpmath.mpf("1e-40")


def test_stability_release_is_a_single_laplace_tail():
    mech = StabilityRelease(k=1, epsilon=0.5, delta=0.01)
    law = output_law(mech, np.array([1, 12, 4]))  # top-1 = {1}, gap 12 - 4 - 1 = 7
    with working_precision():
        t = mpmath.log(100) / mpmath.mpf(0.5)  # T = ln(1/δ)/ε > 7
        expected = mpmath.exp(-mpmath.mpf(0.5) * (mpmath.mpf(mech.threshold) - 7)) / 2
        assert abs(mpmath.mpf(mech.threshold) - t) < 1e-12
        assert abs(law[(1,)] - expected) < mpmath.mpf("1e-40")


def test_top_stable_with_kbar_one_is_one_crossing():
    # k̄ = 1: one test, P[q_1 + Lap(2/ε2) > T + Lap(1/ε1)]
    mech = TopStable(k=1, kbar=1, epsilon=2.0, delta=0.05)
    law = output_law(mech, np.array([3, 9, 1]))  # q_1 = 9 - 3 - 1 = 5
    with working_precision():
        expected = laplace_difference_tail_mp(
            1 / mpmath.mpf(mech.gap_scale()),
            1 / mpmath.mpf(mech.threshold_scale()),
            mpmath.mpf(mech.threshold) - 5,
        )
        assert abs(law[(1,)] - expected) < mpmath.mpf("1e-40")
        assert abs(law[(BOTTOM,)] - (1 - expected)) < mpmath.mpf("1e-40")


def test_plackett_luce_set_law_two_of_three_by_hand():
    with working_precision():
        w = [mpmath.mpf(1), mpmath.mpf(2), mpmath.mpf(3)]
        law = plackett_luce_set_law([mpmath.log(x) for x in w], 2)
        # P({0,1}) = w0/6 · w1/5 + w1/6 · w0/4
        assert abs(law[(0, 1)] - (mpmath.mpf(1) / 6 * 2 / 5 + mpmath.mpf(2) / 6 * 1 / 4)) < 1e-40


def test_framework_law_uses_the_wrapped_mechanisms_law():
    # with a huge gap every test passes: F's law equals the inner law mapped to item ids
    counts = np.array([0, 10**6, 0, 10**6 - 1, 0])
    inner = GumbelTopK(k=2, epsilon=1e-6)
    f = RestrictedDomain(mechanism=inner, kbar=2, epsilon=1.0, delta=1e-6)
    law = output_law(f, counts)
    with working_precision():
        assert abs(law[(1, 3)] + law[(3, 1)] - 1) < mpmath.mpf("1e-30")
        # Gumbel top-2 of two nearly equal weights: P(first = 1) = e^{ε}/(1 + e^{ε}), ε = 1e-6
        e = mpmath.mpf(1e-6)
        assert abs(law[(1, 3)] - mpmath.exp(e) / (1 + mpmath.exp(e))) < mpmath.mpf("1e-30")


def _wrapped_cases():
    import mechanisms as M

    cases = [("TopStable", lambda: M.TopStable(k=2, kbar=3, epsilon=5.0, delta=0.1))]
    if hasattr(M, "PeelingEM"):
        cases.append(("PeelingEM", lambda: M.PeelingEM(k=2, epsilon=0.7)))
    if hasattr(M, "LimitDomain"):
        cases.append(("LimitDomain", lambda: M.LimitDomain(k=2, kbar=3, epsilon=0.7, delta=0.1)))
    return cases


_CASES = _wrapped_cases()


@pytest.mark.parametrize("name, build", _CASES, ids=[c[0] for c in _CASES])
def test_framework_around_other_mechanisms_matches_sampler(name, build):
    # F's law is built from output_law(inner, restricted counts). False failure <= 1e-6.
    inner = build()
    mech = RestrictedDomain(mechanism=inner, kbar=4, epsilon=2.0, delta=0.1)
    counts = np.array([6, 0, 2, 9, 3, 1])
    law = output_law(mech, counts)
    with working_precision():
        assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf("1e-30")
    assert _goodness_of_fit(mech, counts, 100_000, seed=99) > 1e-6
