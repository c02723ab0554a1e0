"""Joint on coarse knots: exact law, count bounds and big-integer counts up to d = 300.

The coarse knot mixture (mechanisms/joint/knots.py; docs/joint.md, "Knots") is forced on small
histograms by setting FULL_COUNT_WORK below zero, so the rejection sampler is
checked against the enumerated law of seed 004 (004_96d6a41600571c16.txt,
Definition 3 with the utility of Lemma 5).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits, chi_square_pvalue
from hypothesis import example, given, settings
from hypothesis import strategies as st
from joint_reference import count_blocks, set_count

from dpaudit.exact import output_law
from mechanisms import joint
from mechanisms.joint import Joint


def _coarse(monkeypatch, placements=None, work=None):
    monkeypatch.setattr(joint.limits, "FULL_COUNT_WORK", -1.0)
    if placements is not None:
        monkeypatch.setattr(joint.limits, "KNOT_PLACEMENTS", placements)
    if work is not None:
        monkeypatch.setattr(joint.limits, "KNOT_COUNT_WORK", work)


# d <= 8 with spread counts (long grids: the knots are a strict subset) and ties
KNOT_CASES = [
    ([60, 45, 33, 20, 12, 7, 3, 0], 3, 0.3),
    ([90, 88, 40, 40, 40, 11, 0, 2], 2, 0.2),
    ([30, 29, 27, 22, 15, 6, 1], 4, 0.5),
    ([50, 50, 50, 0, 0, 0], 3, 0.15),
]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("counts, k, epsilon", KNOT_CASES)
def test_coarse_knots_sample_the_exact_law(monkeypatch, counts, k, epsilon, sparse):
    """Chi-square against the enumerated law; false failure <= 1e-6 per case (p < 1e-6).

    ``sparse`` keeps only the first probes as knots (no placement, no
    refinement): the cut knot then carries an upper bound, not its count, so
    both acceptance factors (count and level) are exercised.
    """
    _coarse(monkeypatch, placements=0 if sparse else None, work=0.0 if sparse else None)
    mech = Joint(k=k, epsilon=epsilon)
    prepared = mech.prepare(np.array(counts))
    assert not prepared.exact_mixture
    if sparse and prepared.grid.size > 20:  # more grid values than probes
        assert prepared.knots.size < prepared.grid.size
    law = output_law(mech, counts)
    batch = mech.sample(np.array(counts), 40_000, np.random.default_rng(31))
    assert batch.shape == (40_000, k)
    assert chi_square_pvalue(law, batch) > 1e-6


@pytest.mark.parametrize("counts, k, epsilon", KNOT_CASES)
def test_knot_counts_and_levels_are_valid_bounds(monkeypatch, counts, k, epsilon):
    """At every knot log_knot_n >= log N_set (= where marked exact), levels decrease, cut kept."""
    _coarse(monkeypatch, placements=0, work=0.0)
    prepared = Joint(k=k, epsilon=epsilon).prepare(np.array(counts))
    values_desc, mult_desc = count_blocks(counts)
    knots = prepared.knots
    assert knots[-1] == prepared.grid.size - 1 and np.all(np.diff(knots) > 0)
    assert np.all(np.diff(prepared.log_level) < 0)
    for j, t in enumerate(knots.tolist()):
        ref = math.log(set_count(values_desc, mult_desc, k, int(prepared.grid[t])))
        if prepared.knot_exact[j]:
            assert abs(prepared.log_knot_n[j] - ref) <= 1e-12 * (1 + ref)
        else:
            assert prepared.log_knot_n[j] >= ref
    # the lazily counted full table agrees with the big integers as well
    for t, u in enumerate(prepared.grid.tolist()):
        ref = math.log(set_count(values_desc, mult_desc, k, u))
        assert abs(prepared.log_n[t] - ref) <= 1e-12 * (1 + ref)


def test_coarse_knots_utility_law_at_d_1000(monkeypatch):
    """d = 1000, k = 12, ε = 0.2 on coarse knots: sampled utilities follow the exact utility law.

    The utility law comes from the full per-utility table (counted on every
    grid value, checked against big integers elsewhere), the samples from the
    knot mixture with rejection. Chi-square with cells of expected count >= 5;
    false failure <= 1e-6 (p < 1e-6).
    """

    from dpaudit.exact.joint_laws import joint_utility

    _coarse(monkeypatch)
    rng = np.random.default_rng(12)
    counts = rng.integers(0, 10_000, 1000)
    mech = Joint(k=12, epsilon=0.2)
    prepared = mech.prepare(counts)
    assert not prepared.exact_mixture and prepared.knots.size < prepared.grid.size / 4
    utilities, log_p = mech.utility_law(counts)
    batch = mech.sample(counts, 10_000, rng)
    values = counts.tolist()
    sampled = np.array([joint_utility(values, row) for row in batch.tolist()])
    assert (np.exp(log_p) * sampled.size >= 5).sum() >= 20
    assert_sampler_fits(dict(zip(utilities.tolist(), np.exp(log_p))), Counter(sampled.tolist()))


def _histograms(max_d):
    """Random histograms up to max_d items: heavy ties (counts <= 25) or spread (<= 5000)."""
    sizes = st.one_of(st.integers(2, 40), st.integers(max_d // 2, max_d))
    return st.tuples(sizes, st.sampled_from([25, 5000]), st.integers(0, 2**32 - 1)).map(
        lambda t: np.random.default_rng(t[2]).integers(0, t[1] + 1, t[0])
    )


_D300_TIES = np.random.default_rng(1).integers(0, 26, 300)
_D300_SPREAD = np.random.default_rng(2).integers(0, 5001, 300)


def _check_counts_against_bigint(counts, k, epsilon, rows):
    k = min(k, counts.size)
    values_desc, mult_desc = count_blocks(counts)
    prepared = Joint(k=k, epsilon=epsilon).prepare(counts)
    assert prepared.grid[0] == 0 and np.all(np.diff(prepared.grid) > 0)
    assert prepared.log_tail_bound <= -joint.limits.LOG_TAIL
    picks = np.unique(np.linspace(0, prepared.grid.size - 1, rows).round().astype(int))
    for t in picks.tolist():
        u = int(prepared.grid[t])
        ref = math.log(set_count(values_desc, mult_desc, k, u))
        assert abs(prepared.log_n[t] - ref) <= 1e-12 * (1 + ref), (u, t)
    with pytest.MonkeyPatch.context() as mp:
        _coarse(mp)
        coarse = Joint(k=k, epsilon=epsilon).prepare(counts)
        for j, t in enumerate(coarse.knots.tolist()):
            ref = math.log(set_count(values_desc, mult_desc, k, int(coarse.grid[t])))
            if coarse.knot_exact[j]:
                assert abs(coarse.log_knot_n[j] - ref) <= 1e-12 * (1 + ref)
            else:
                assert coarse.log_knot_n[j] >= ref


def _log_counts_bigint(counts, k, gaps):
    values_desc, mult_desc = count_blocks(counts)
    return np.array([math.log(set_count(values_desc, mult_desc, k, int(u))) for u in gaps])


@pytest.mark.parametrize("room, pascal_ratio", [(1.0, 4), (960.0, 0), (960.0, 10**9), (3.0, 1)])
@pytest.mark.parametrize("merge", [False, True])
def test_set_forward_arithmetic_paths_equal_big_integers(monkeypatch, room, pascal_ratio, merge):
    """Every path of the scaled count programme gives the big-integer count (rel. 1e-12).

    ``room`` = 1 renormalises before every Pascal step (exact power-of-two
    rescaling, flat exponents over zeros); ``pascal_ratio`` = 0 sends every
    block of more than 16 items through the log-space transition, 10**9 none.
    Heavy ties (blocks of ~40 items) and spread counts, k = 9.
    """
    monkeypatch.setattr(joint.set_count, "_EXPONENT_ROOM", room)
    monkeypatch.setattr(joint.set_count, "_PASCAL_RATIO", pascal_ratio)
    rng = np.random.default_rng(7)
    for counts in (rng.integers(0, 8, 300), rng.integers(0, 3000, 300)):
        sorted_counts = np.sort(counts)[::-1]
        gaps = np.array([0, 1, 3, 7, 20, 60, 200, 3000])
        got = joint.set_count._set_forward(sorted_counts, 9, gaps, merge=merge)[0]
        ref = _log_counts_bigint(counts, 9, gaps)
        assert np.all(np.abs(got - ref) <= 1e-12 * (1 + ref)), (got, ref)


def test_set_forward_renormalises_within_long_runs(monkeypatch):
    """2,500 distinct counts within reach: more Pascal steps than one renormalisation allows.

    With the real constants a run of single-item blocks exceeds the growth
    budget (<= _EXPONENT_ROOM steps), so mantissas are renormalised inside the
    run; counts still equal the big integers (rel. 1e-12).
    """
    counts = np.random.default_rng(9).permutation(np.arange(2500) * 3)
    sorted_counts = np.sort(counts)[::-1]
    gaps = np.array([0, 30, 3000, 7497])
    assert (
        joint.grid._prefix_sizes(-sorted_counts, sorted_counts[:15], gaps)[-1, -1]
        > joint.set_count._EXPONENT_ROOM
    )
    calls = []
    renormalise = joint.set_count._renormalise
    monkeypatch.setattr(
        joint.set_count, "_renormalise", lambda *a: calls.append(a[2]) or renormalise(*a)
    )
    got = joint.set_count._set_forward(sorted_counts, 15, gaps, merge=True)[0]
    assert len(calls) >= 2  # the first one, and at least one inside the run
    ref = _log_counts_bigint(counts, 15, gaps)
    assert np.all(np.abs(got - ref) <= 1e-12 * (1 + ref)), (got, ref)


@settings(max_examples=25, deadline=None)
@given(counts=_histograms(300), k=st.integers(1, 12), epsilon=st.floats(0.05, 5.0))
@example(counts=_D300_TIES, k=12, epsilon=0.1)
@example(counts=_D300_SPREAD, k=12, epsilon=0.1)
def test_set_counts_equal_big_integers_up_to_d_300(counts, k, epsilon):
    """Property: log N_set (full table and coarse knots) is the exact big-integer count (rel. 1e-12).

    d <= 300 with heavy ties or spread counts, k <= 12, any ε; a dozen grid
    values per example keep the fast suite fast (the slow test checks more).
    """
    _check_counts_against_bigint(counts, k, epsilon, rows=12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(counts=_histograms(300), k=st.integers(1, 30), epsilon=st.floats(0.02, 5.0))
def test_set_counts_equal_big_integers_up_to_d_300_thorough(counts, k, epsilon):
    """The same property with k <= 30, ε down to 0.02 and 60 grid values per example."""
    _check_counts_against_bigint(counts, k, epsilon, rows=60)


def test_hashed_shuffle_equals_the_sparse_shuffle():
    """Same uniforms -> same sequences as the O(k^2) sparse shuffle (so the same stream)."""
    rng = np.random.default_rng(4)
    rows, k = 300, 60
    highs = np.sort(rng.integers(k, 10**7, (rows, k)), axis=1)
    highs = np.maximum(highs, np.arange(1, k + 1))
    uniforms = rng.random((rows, k))
    hashed = joint.shuffles._hashed_prefix_shuffle(highs, uniforms)
    sparse = joint.shuffles._sparse_fisher_yates(np.tile(np.arange(k), (rows, 1)), highs, uniforms)
    assert np.array_equal(hashed, sparse)
    # tight prefixes: collisions in the table and swaps with the slot itself
    tight = np.tile(np.arange(1, k + 1) + 2, (rows, 1))
    assert np.array_equal(
        joint.shuffles._hashed_prefix_shuffle(tight, uniforms),
        joint.shuffles._sparse_fisher_yates(np.tile(np.arange(k), (rows, 1)), tight, uniforms),
    )


@pytest.mark.parametrize("kind", ["wide", "tight", "ties"])
def test_sorted_and_dense_shuffles_equal_the_sparse_shuffle(kind):
    """The O(k) sorted Fisher-Yates and the dense one return the O(k^2) sparse shuffle's output.

    Same uniforms -> same sequences (the random stream of JointSequence does
    not depend on which shuffle the dispatcher picks): wide prefixes up to
    1e7, tight prefixes (long swap chains), and prefixes from a few tie blocks.
    """
    rng = np.random.default_rng({"wide": 5, "tight": 6, "ties": 8}[kind])
    rows, k = 400, 50
    if kind == "wide":
        highs = np.sort(rng.integers(k, 10**7, (rows, k)), axis=1)
    elif kind == "tight":
        highs = np.tile(np.arange(1, k + 1) + 1, (rows, 1))
    else:
        highs = np.sort(rng.choice([60, 75, 200], (rows, k)), axis=1)
    highs = np.maximum(highs, np.arange(1, k + 1))
    uniforms = rng.random((rows, k))
    uniforms[0] = 0.0
    uniforms[1] = np.nextafter(1.0, 0.0)
    sparse = joint.shuffles._sparse_fisher_yates(np.tile(np.arange(k), (rows, 1)), highs, uniforms)
    assert np.array_equal(
        joint.shuffles._sorted_fisher_yates(joint.shuffles._shuffle_picks(highs, uniforms)), sparse
    )
    assert np.array_equal(joint.shuffles._prefix_shuffle(highs, uniforms), sparse)
    if kind != "wide":
        dense = joint.shuffles._dense_fisher_yates(
            joint.shuffles._shuffle_picks(highs, uniforms), int(highs.max())
        )
        assert np.array_equal(dense, sparse)


@pytest.mark.slow
def test_coarse_knots_utility_law_at_benchmark_size():
    """d = 1e5, k = 100, ε = 0.1 on U(0, 10 d) counts (seed 004 Sec. 4): the issue's small-ε case.

    Coarse knots without forcing; sampled utilities (Lemma 5, recomputed from
    the sets) follow the utility law of the full per-utility table, counted
    on demand on every grid value. Chi-square with cells of expected count
    >= 5; false failure <= 1e-6 (p < 1e-6).
    """

    d, k, epsilon = 10**5, 100, 0.1
    rng = np.random.default_rng(23)
    counts = rng.integers(0, 10 * d, d)
    mech = Joint(k=k, epsilon=epsilon)
    prepared = mech.prepare(counts)
    assert not prepared.exact_mixture and prepared.knots.size < prepared.grid.size / 20
    utilities, log_p = mech.utility_law(counts)
    batch = mech.sample(counts, 20_000, rng)
    top = np.sort(counts)[::-1][:k]
    sampled = np.max(top[None, :] - np.sort(counts[batch], axis=1)[:, ::-1], axis=1)
    assert (np.exp(log_p) * sampled.size >= 5).sum() >= 100
    assert_sampler_fits(dict(zip((-utilities).tolist(), np.exp(log_p))), Counter(sampled.tolist()))
