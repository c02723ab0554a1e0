"""Exact laws of JOINT / JointSequence (enumeration, mpmath) against the samplers (seed 004)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from goodness_of_fit import chi_square_pvalue

import mechanisms as M
from dpaudit.exact import output_law, working_precision
from dpaudit.exact.joint_laws import joint_utility, joint_utility_law, sequence_utility

# d <= 9, k <= 4, with and without ties (incl. all equal and zeros).
CASES = [
    ([5, 3, 3, 1, 0], 2),
    ([2, 2, 2, 2], 3),
    ([4, 1, 1, 1, 0, 3], 3),
    ([0, 0, 0], 2),
    ([7, 7, 1, 1, 2], 1),
    ([9, 0, 4, 6, 2, 8, 1], 3),
    ([3, 3, 3, 1, 1, 0, 5, 5, 2], 4),
    ([10, 8, 6, 4, 2, 0, 1, 3, 5], 2),
    # one tie block of 9 (sparse uniform subsets) and of 7 (sparse and dense picks)
    ([1, 1, 1, 1, 1, 1, 1, 1, 1], 2),
    ([6, 2, 2, 2, 2, 2, 2, 2, 0], 3),
]
CLASSES = [M.Joint, M.JointSequence]


def test_utility_matches_lemma_5_by_hand():
    counts = [5, 3, 3, 1, 0]  # top-2 counts (5, 3)
    assert joint_utility(counts, (0, 1)) == 0
    assert joint_utility(counts, (1, 2)) == -2  # sorted (3, 3) vs (5, 3)
    assert joint_utility(counts, (3, 4)) == -4  # (1, 0) vs (5, 3): max(4, 3)
    assert sequence_utility(counts, (1, 0)) == -2  # (3, 5) vs (5, 3): max(2, -2)
    assert sequence_utility(counts, (0, 2)) == 0


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("counts, k", CASES)
def test_law_sums_to_one_and_covers_every_outcome(cls, counts, k):
    law = output_law(cls(k=k, epsilon=0.9), counts)
    d = len(counts)
    expected = math.perm(d, k) if cls.ordered else math.comb(d, k)
    assert len(law) == expected
    with working_precision():
        assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf("1e-30")
    if not cls.ordered:
        assert all(list(o) == sorted(o) for o in law)


@pytest.mark.parametrize("epsilon", [0.3, 2.0])
@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("counts, k", CASES)
def test_sampler_tables_equal_enumeration(cls, counts, k, epsilon):
    """The sampler's own per-utility counts and probabilities equal the enumeration.

    Counts are integers: the float log-count must round-trip to them (rel. 1e-9);
    probabilities agree to 1e-12 (float64 tables vs 50-digit mpmath).
    """
    mech = cls(k=k, epsilon=epsilon)
    reference = joint_utility_law(mech, counts)
    prepared = mech.prepare(np.array(counts))
    log_count = prepared.log_count_per_utility
    log_p = prepared.log_utility_probabilities(epsilon)
    grid = prepared.grid.tolist()
    cumulative = 0
    for gap, (n, p) in reference.items():
        t = grid.index(gap)  # every realised utility is on the grid
        cumulative += n
        assert abs(math.exp(log_count[t]) - n) <= 1e-9 * n
        assert abs(prepared.log_n[t] - math.log(cumulative)) <= 1e-12 * (1 + math.log(cumulative))
        assert abs(log_p[t] - float(mpmath.log(p))) <= 1e-10
    # grid points that no outcome realises must carry no mass
    for t, gap in enumerate(grid):
        if gap not in reference:
            assert math.exp(log_count[t]) < 1e-9


def _gof_pvalue(law, batch):
    return chi_square_pvalue(law, batch)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("counts, k", CASES)
def test_sampler_matches_exact_law(cls, counts, k):
    """Chi-square goodness of fit, fixed seed; false failure <= 1e-6 per case (p < 1e-6)."""
    mech = cls(k=k, epsilon=1.1)
    law = output_law(mech, counts)
    batch = mech.sample(np.array(counts), 60_000, np.random.default_rng(2024))
    assert _gof_pvalue(law, batch) > 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("cls", CLASSES)
def test_sampler_matches_exact_law_many_histograms(cls):
    """Every histogram on d=4 with counts <= 3, k=2: chi-square at p < 1e-6 each.

    256 cases x 1e-6 -> family-wise false failure <= 2.6e-4.
    """
    rng = np.random.default_rng(99)
    mech = cls(k=2, epsilon=0.8)
    for flat in range(4**4):
        counts = [(flat // 4**i) % 4 for i in range(4)]
        law = output_law(mech, counts)
        batch = mech.sample(np.array(counts), 20_000, rng)
        assert _gof_pvalue(law, batch) > 1e-6, counts


@pytest.mark.slow
@pytest.mark.parametrize("cls", CLASSES)
def test_exhaustive_verification(cls):
    """The exact privacy profile meets the ε-DP claim on every pair of the family d=4, counts <= 3."""
    from dpaudit.exact import verify

    result = verify(cls(k=2, epsilon=0.5), d=4, max_count=3, progress=False)
    assert result.holds, result


@pytest.mark.parametrize("cls", CLASSES)
def test_truncated_tables_match_enumeration(cls):
    """Spread counts and a large ε make the sampler drop gaps > u_cut (module docstring).

    The dropped mass is bounded by e^{log_tail_bound} < 1e-50, so every kept
    utility's probability equals the enumeration to far below float precision.
    """
    counts = [0, 1000, 3, 500, 999, 2]
    mech = cls(k=2, epsilon=5.0)
    prepared = mech.prepare(np.array(counts))
    assert prepared.log_tail_bound < math.log(1e-50)
    assert prepared.grid.max() < 500  # gaps of 500 and more were dropped
    reference = joint_utility_law(mech, counts)
    utilities, log_p = mech.utility_law(counts)
    for u, lp in zip(utilities.tolist(), log_p.tolist()):
        n, p = reference.get(-u, (0, mpmath.mpf(0)))
        if n:
            assert abs(lp - float(mpmath.log(p))) < 1e-10
        else:
            assert lp < math.log(1e-12)
    # the sampler never returns an item that only appears in dropped outcomes
    batch = mech.sample(np.array(counts), 1000, np.random.default_rng(5))
    assert set(np.unique(batch).tolist()) <= {1, 4}
