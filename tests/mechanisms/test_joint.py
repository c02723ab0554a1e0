"""Joint / JointSequence: validation, invariants, and the no-overflow large cases (seed 004)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from joint_reference import count_blocks, sequence_count, set_count

import mechanisms as M
from mechanisms import joint
from mechanisms.joint import Joint, JointSequence

CLASSES = [Joint, JointSequence]


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"k": 0, "epsilon": 1.0}, "k"),
        ({"k": 1.5, "epsilon": 1.0}, "k"),
        ({"k": True, "epsilon": 1.0}, "k"),
        ({"k": 2, "epsilon": 0.0}, "epsilon"),
        ({"k": 2, "epsilon": -1.0}, "epsilon"),
        ({"k": 2, "epsilon": float("nan")}, "epsilon"),
        ({"k": 2, "epsilon": float("inf")}, "epsilon"),
    ],
)
def test_bad_parameters_name_the_argument(cls, kwargs, name):
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)


@pytest.mark.parametrize("cls", CLASSES)
def test_bad_calls(cls):
    mech = cls(k=3, epsilon=1.0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="k must be <="):
        mech.sample([1, 2], 5, rng)
    with pytest.raises(ValueError, match="counts"):
        mech.sample([1, -2, 3], 5, rng)
    with pytest.raises(ValueError, match="size"):
        mech.sample([1, 2, 3], -1, rng)
    with pytest.raises(TypeError, match="rng"):
        mech.sample([1, 2, 3], 5, 42)


@pytest.mark.parametrize("cls", CLASSES)
def test_claim_is_epsilon_dp_add_remove(cls):
    # seed 004 Definition 3 with Δ_{u*} = 1 (Lemma 5): weights exp(ε u/2) give ε-DP.
    claim = cls(k=2, epsilon=0.7).claim
    assert claim == (0.7, 0.0, M.AddRemoveUser())
    assert cls.ordered is (cls is JointSequence)
    assert cls(k=4, epsilon=1.0).width == 4


@settings(max_examples=40, deadline=None)
@given(
    counts=st.integers(1, 12).flatmap(lambda d: arrays(np.int64, d, elements=st.integers(0, 30))),
    k=st.integers(1, 5),
    epsilon=st.floats(0.05, 20.0),
    seed=st.integers(0, 2**32 - 1),
    ordered=st.booleans(),
)
def test_output_invariants(counts, k, epsilon, seed, ordered):
    k = min(k, counts.size)
    mech = (JointSequence if ordered else Joint)(k=k, epsilon=epsilon)
    batch = mech.sample(counts, 50, np.random.default_rng(seed))
    assert batch.dtype == np.int64 and batch.shape == (50, k)
    assert batch.min() >= 0 and batch.max() < counts.size
    assert all(len(set(row)) == k for row in batch.tolist())
    if not ordered:
        assert np.all(np.diff(batch, axis=1) > 0)
    # same generator state -> same output; run() is the first row of sample(.., 1, ..)
    again = mech.sample(counts, 50, np.random.default_rng(seed))
    assert np.array_equal(batch, again)
    one = mech.run(counts, np.random.default_rng(seed))
    assert one == M.outcome_from_row(mech.sample(counts, 1, np.random.default_rng(seed))[0])


@pytest.mark.parametrize("cls", CLASSES)
def test_size_zero_and_cache_reuse(cls):
    mech = cls(k=2, epsilon=1.0)
    counts = np.array([4, 3, 2, 1])
    assert mech.sample(counts, 0, np.random.default_rng(0)).shape == (0, 2)
    assert mech.prepare(counts) is mech.prepare(counts.copy())  # per-histogram work reused


def test_huge_epsilon_returns_the_true_top_k():
    # ε = 1000: any other outcome has weight <= e^{-500}; counts tie-free.
    counts = np.array([3, 50, 7, 49, 0, 12])
    seq = JointSequence(k=3, epsilon=1000.0).sample(counts, 20, np.random.default_rng(1))
    assert np.all(seq == [1, 3, 5])
    sets = Joint(k=3, epsilon=1000.0).sample(counts, 20, np.random.default_rng(1))
    assert np.all(sets == [1, 3, 5])


@pytest.mark.parametrize("cls", CLASSES)
def test_large_histogram_no_overflow_and_top_bucket(cls):
    """d = 10^6, k = 1000 (sequences) / 200 (sets): finite valid output; P(top bucket) exact.

    The reference is computed with Python big integers (counts up to ~10^6000)
    and mpmath, independently of the sampler's log-space tables.
    """
    d, k = 10**6, (1000 if cls is JointSequence else 200)
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, d)  # heavy ties: 6 distinct values
    epsilon = 0.5
    mech = cls(k=k, epsilon=epsilon)
    batch = mech.sample(counts, 200, rng)
    assert batch.shape == (200, k) and batch.min() >= 0 and batch.max() < d
    assert all(len(set(row)) == k for row in batch[:20].tolist())
    values_desc, mult_desc = count_blocks(counts)
    count_fn = sequence_count if cls is JointSequence else set_count
    max_gap = values_desc[0] - values_desc[-1]
    cumulative = [count_fn(values_desc, mult_desc, k, u) for u in range(max_gap + 1)]
    with mpmath.workdps(60):
        per_gap = [cumulative[0]] + [b - a for a, b in itertools.pairwise(cumulative)]
        z = mpmath.fsum(
            mpmath.mpf(n) * mpmath.exp(-mpmath.mpf(epsilon) * u / 2) for u, n in enumerate(per_gap)
        )
        p_top = mpmath.mpf(per_gap[0]) / z
        utilities, log_p = mech.utility_law(counts)
        assert utilities[0] == 0
        assert np.all(np.isfinite(mech.prepare(counts).log_n))
        assert abs(log_p[0] - float(mpmath.log(p_top))) < 1e-9
        assert abs(mech.prepare(counts).log_n[-1] - float(mpmath.log(cumulative[-1]))) < 1e-9 * (
            1 + abs(float(mpmath.log(cumulative[-1])))
        )


@pytest.mark.slow
def test_large_spread_counts_sequence_finite():
    """d = 10^6, k = 1000 with counts ~ U(0, 10 d) (seed 004 Sec. 4): finite tables, valid rows."""
    d, k = 10**6, 1000
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 10 * d, d)
    mech = JointSequence(k=k, epsilon=1.0)
    prepared = mech.prepare(counts)
    assert np.all(np.isfinite(prepared.log_n)) and np.all(np.isfinite(prepared.log_mix))
    # top bucket: gap 0 only for the sorted true top-k when counts are distinct in it
    utilities, log_p = mech.utility_law(counts)
    assert np.all(np.isfinite(log_p[utilities > -50]))
    batch = mech.sample(counts, 20, rng)
    assert batch.shape == (20, k) and all(len(set(r)) == k for r in batch.tolist())


def test_prepared_tables_are_reused_only_by_their_owner():
    counts = np.array([5, 3, 3, 1, 0])
    mech = Joint(k=2, epsilon=1.0)
    prepared = mech.prepare(counts)
    a = mech.sample(prepared, 30, np.random.default_rng(4))
    b = mech.sample(counts, 30, np.random.default_rng(4))
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="JointPrepared"):
        Joint(k=2, epsilon=2.0).sample(prepared, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="JointPrepared"):
        JointSequence(k=2, epsilon=1.0).sample(prepared, 1, np.random.default_rng(0))


def test_set_count_above_the_full_count_limits_samples_on_coarse_knots():
    """A set count planned at ~1.7e9 banded cells (far above FULL_COUNT_WORK) samples.

    Distinct counts one apart at ε = 1, k = 500: the coarse knot mixture
    counts a few grid values only.
    """
    counts = np.arange(3000)  # distinct counts: one tie block per item
    mech = Joint(k=500, epsilon=1.0)
    work, _ = mech.dp_work(counts)
    assert work > 1e9  # beyond what counting every grid value can afford
    prepared = mech.prepare(counts)
    assert not prepared.exact_mixture
    assert prepared.knots.size < prepared.grid.size / 4
    assert prepared.log_tail_bound <= -joint.limits.LOG_TAIL
    batch = mech.sample(counts, 3, np.random.default_rng(0))
    assert batch.shape == (3, 500) and all(len(set(r)) == 500 for r in batch.tolist())


def test_coarse_full_table_is_guarded(monkeypatch):
    """On coarse knots the per-utility table (``log_n``) is counted on demand, under MAX_SET_DP_WORK."""
    monkeypatch.setattr(joint.limits, "FULL_COUNT_WORK", -1.0)
    monkeypatch.setattr(joint.limits, "MAX_SET_DP_WORK", 10.0)
    prepared = Joint(k=3, epsilon=0.5).prepare(np.arange(40))
    assert not prepared.exact_mixture
    with pytest.raises(ValueError, match="per-utility table"):
        prepared.log_n  # noqa: B018


def test_set_dp_guard_on_table_size(monkeypatch):
    monkeypatch.setattr(joint.limits, "MAX_SET_TABLE", 10)
    with pytest.raises(ValueError, match="sampling tables"):
        Joint(k=3, epsilon=1.0).prepare(np.arange(20))


def test_set_dp_guard_allows_the_benchmark_sizes():
    """d = 1e5, k = 100, U(0, 10 d) counts (seed 004 Sec. 4): well under the limit, and runs."""
    counts = np.random.default_rng(0).integers(0, 10**6, 10**5)
    mech = Joint(k=100, epsilon=1.0)
    work, blocks = mech.dp_work(counts)
    assert work < joint.limits.MAX_SET_DP_WORK / 10 and blocks * 101 < joint.limits.MAX_SET_TABLE
    assert mech.sample(counts, 3, np.random.default_rng(1)).shape == (3, 100)


# -- the pieces of the samplers, each against its exact law ------------------------


@pytest.mark.parametrize(
    "n, t",
    [
        (9, 2),
        (12, 1),
        (6, 3),
        (5, 4),
        (4, 4),
        (30, 3),
    ],  # sparse, sparse, dense, dense, full, sparse
)
def test_uniform_subsets_are_uniform(n, t):
    """Every t-subset of range(n) equally likely. Chi-square, p < 1e-6 = false-failure bound."""
    from scipy import stats

    pairs = 40 * math.comb(n, t) if math.comb(n, t) > 1 else 50
    sizes = np.full(pairs, n)
    picks = np.full(pairs, t)
    flat = joint.subsets._uniform_subsets(sizes, picks, np.random.default_rng(11))
    rows = np.sort(flat.reshape(pairs, t), axis=1)
    assert np.all(np.diff(rows, axis=1) > 0) and rows.min() >= 0 and rows.max() < n
    subsets = list(itertools.combinations(range(n), t))
    index = {s: i for i, s in enumerate(subsets)}
    observed = np.bincount([index[tuple(r)] for r in rows.tolist()], minlength=len(subsets))
    if len(subsets) > 1:
        assert stats.chisquare(observed).pvalue > 1e-6


def test_uniform_subsets_mixed_pairs_keep_their_group():
    rng = np.random.default_rng(3)
    sizes = np.array([1, 50, 3, 7, 7, 100_000])
    picks = np.array([1, 2, 3, 5, 1, 40])
    flat = joint.subsets._uniform_subsets(sizes, picks, rng)
    start = 0
    for n, t in zip(sizes, picks):
        part = flat[start : start + t]
        assert len(set(part.tolist())) == t and part.min() >= 0 and part.max() < n
        start += t


def _lexsort_uniform_subsets(sizes, picks, rng):
    """Reference: the original algorithm, one lexsort of all dense keys, a full sort per sparse round."""

    def within(m):
        return np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m)

    out = np.empty(int(picks.sum()), dtype=np.int64)
    first = np.cumsum(picks) - picks
    full = sizes == picks
    out[np.repeat(first[full], picks[full]) + within(picks[full])] = within(picks[full])
    dense = (sizes <= 4 * picks) & ~full
    n, t, at = sizes[dense], picks[dense], first[dense]
    offset = within(n)
    order = np.lexsort((rng.random(offset.size), np.repeat(np.arange(n.size), n)))
    out[np.repeat(at, t) + within(t)] = offset[order][offset < np.repeat(t, n)]
    sparse = ~dense & ~full
    if sparse.any():
        n, t, at = sizes[sparse], picks[sparse], first[sparse]
        pair, bound = np.repeat(np.arange(n.size), t), np.repeat(n, t)
        values = np.minimum((rng.random(pair.size) * bound).astype(np.int64), bound - 1)
        while True:
            key = pair * int(n.max()) + values
            order = np.argsort(key, kind="stable")
            repeated = np.zeros(key.size, dtype=bool)
            repeated[order[1:]] = key[order[1:]] == key[order[:-1]]
            redo = np.flatnonzero(repeated)
            if redo.size == 0:
                break
            draw = rng.random(redo.size) * bound[redo]
            values[redo] = np.minimum(draw.astype(np.int64), bound[redo] - 1)
        out[np.repeat(at, t) + within(t)] = values
    return out


def test_uniform_subsets_match_the_lexsort_algorithm():
    """Same output and same generator state as the original (lexsort) algorithm.

    Keeps the random stream of samplers reproducible. Inputs mix full, dense
    (narrow, and wide ones padded within a size class) and sparse pairs, with
    sparse pairs just past 4 picks so that redraws collide often.
    """
    g = np.random.default_rng(0)
    for trial in range(60):
        m = int(g.integers(0, 60))
        sizes = g.integers(1, int(g.choice([4, 12, 90, 400])), m)
        picks = (g.random(m) * (sizes + 1)).astype(np.int64)
        crowded = g.random(m) < 0.3
        picks[crowded] = np.maximum(1, (sizes[crowded] - 1) // 4)
        ours, theirs = np.random.default_rng(trial), np.random.default_rng(trial)
        got = joint.subsets._uniform_subsets(sizes, picks, ours)
        np.testing.assert_array_equal(got, _lexsort_uniform_subsets(sizes, picks, theirs))
        assert ours.bit_generator.state == theirs.bit_generator.state


def test_sorted_key_rows_break_ties_by_offset():
    """Tied keys (never drawn in practice) keep the stable order, padded rows or not."""
    g = np.random.default_rng(1)
    for width, same in [(5, False), (40, False), (40, True), (130, False)]:
        size = np.full(30, width) if same else g.integers(1, width + 1, 30)
        keys = g.integers(0, 6, int(size.sum())) / 8.0
        start = np.cumsum(size) - size
        rows = joint.subsets._sorted_key_rows(keys, start, size, width)
        for r in range(size.size):
            row = keys[start[r] : start[r] + size[r]]
            np.testing.assert_array_equal(rows[r, : size[r]], np.argsort(row, kind="stable"))


@pytest.mark.parametrize("shuffle", ["dense", "sparse"])
def test_prefix_shuffles_match_the_exact_law(shuffle):
    """Position t uniform over the unplaced ranks below highs[t]: P(seq) = Π 1/(highs_t - t).

    Chi-square over the 2*3*2*3 = 36 feasible sequences; p < 1e-6 = false-failure bound.
    """
    from scipy import stats

    highs_row = np.array([2, 4, 4, 6])
    rows = 60_000
    highs = np.tile(highs_row, (rows, 1))
    uniforms = np.random.default_rng(21).random((rows, 4))
    if shuffle == "dense":
        out = joint.shuffles._dense_fisher_yates(
            joint.shuffles._shuffle_picks(highs, uniforms), int(highs_row.max())
        )
    else:
        out = joint.shuffles._sparse_fisher_yates(np.tile(np.arange(4), (rows, 1)), highs, uniforms)
    feasible = [
        s for s in itertools.permutations(range(6), 4) if all(s[i] < highs_row[i] for i in range(4))
    ]
    prob = 1.0 / np.prod(highs_row - np.arange(4))
    assert math.isclose(len(feasible) * prob, 1.0)
    index = {s: i for i, s in enumerate(feasible)}
    observed = np.bincount([index[tuple(r)] for r in out.tolist()], minlength=len(feasible))
    assert observed.sum() == rows  # no infeasible sequence
    assert stats.chisquare(observed).pvalue > 1e-6


def test_prefix_shuffle_dispatch_same_law_on_long_prefixes():
    """Long prefixes switch to the sparse shuffle: still distinct, in range, right bounds."""
    k = 5
    highs = np.tile(np.array([10**6, 10**6, 2 * 10**6, 2 * 10**6, 3 * 10**6]), (4, 1))
    out = joint.shuffles._prefix_shuffle(highs, np.random.default_rng(0).random((4, k)))
    assert np.all(out < highs) and all(len(set(r)) == k for r in out.tolist())


def _set_log_counts_by_position(sorted_counts, k, gaps):
    """Independent log N_set(u): a programme over POSITIONS, not tie blocks.

    With s_i = r_i - i, a valid set is a non-decreasing s_1 <= ... <= s_k with
    0 <= s_i <= m_i(u) - i, so the count is k running log-sum-exps.
    """
    neg = -np.asarray(sorted_counts)
    top = np.asarray(sorted_counts[:k])
    m = np.searchsorted(neg, gaps[:, None] - top[None, :], side="right")
    bound = m - np.arange(1, k + 1)[None, :]
    cols = np.arange(int(bound.max()) + 1)[None, :]
    g = np.where(cols <= bound[:, :1], 0.0, -np.inf)
    for i in range(1, k):
        g = np.logaddexp.accumulate(g, axis=1)
        g[cols > bound[:, i : i + 1]] = -np.inf
    with np.errstate(divide="ignore"):
        return np.logaddexp.reduce(g, axis=1)


@pytest.mark.parametrize("ties", [False, True])
def test_banded_set_counts_equal_big_integers(ties):
    """Every kept grid value's log N_set equals the exact big-integer count (rel. 1e-12).

    d = 400, k = 40: bands are narrow and cut by the truncation, so the banded
    programme, its probes and the truncation are all exercised.
    """
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 60 if ties else 4000, 400)
    mech = Joint(k=40, epsilon=0.4)
    prepared = mech.prepare(counts)
    values_desc, mult_desc = count_blocks(counts)
    for t in np.linspace(0, prepared.grid.size - 1, 12).round().astype(int):
        u = int(prepared.grid[t])
        exact = set_count(values_desc, mult_desc, 40, u)
        ref = float(mpmath.log(exact))
        assert abs(prepared.log_n[t] - ref) <= 1e-12 * (1 + abs(ref)), u
    assert prepared.log_tail_bound <= -joint.limits.LOG_TAIL


@pytest.mark.slow
def test_large_set_case_top_bucket_against_position_reference():
    """d = 10^6, k = 1000, counts ~ U(0, 10^7) (seed 004 Sec. 4), ε = 1: the issue's large case.

    Finite tables, valid sets, and log P(top utility bucket) equal to an
    independent log-space reference (programme over positions, own normaliser
    over a grid 300 gaps longer than the sampler's) to 1e-9.
    """
    d, k, epsilon = 10**6, 1000, 1.0
    rng = np.random.default_rng(17)
    counts = rng.integers(0, 10 * d, d)
    mech = Joint(k=k, epsilon=epsilon)
    prepared = mech.prepare(counts)
    assert np.all(np.isfinite(prepared.log_n)) and np.all(np.isfinite(prepared.log_mix))
    batch = mech.sample(counts, 50, rng)
    assert batch.shape == (50, k) and batch.min() >= 0 and batch.max() < d
    assert all(len(set(r)) == k for r in batch.tolist())
    assert np.all(np.diff(batch, axis=1) > 0)
    sorted_counts = np.sort(counts)[::-1]
    gaps = np.arange(int(prepared.grid[-1]) + 300)
    log_n = _set_log_counts_by_position(sorted_counts, k, gaps)
    assert np.all(np.isfinite(log_n))
    kept = np.searchsorted(gaps, prepared.grid)
    assert np.allclose(prepared.log_n, log_n[kept], rtol=1e-12, atol=1e-9)
    half = epsilon / 2.0
    log_w = -half * gaps.astype(float)
    log_w[:-1] += np.log(-np.expm1(-half * np.diff(gaps)))
    log_z = np.logaddexp.reduce(log_w + log_n)
    _, log_p = mech.utility_law(counts)
    assert abs(log_p[0] - (log_n[0] - log_z)) < 1e-9


@pytest.mark.slow
def test_large_tied_histogram_sets_at_k_1000():
    """d = 10^6, k = 1000 sets on 6 distinct counts (tie blocks of ~166,000 items).

    The top-1000 all have the largest count c, so m_i(u) = #{count >= c - u}
    for every i and N_set(u) = C(m(u), k) in closed form: an exact reference
    (Python integers, ~3,000 digits) independent of both programmes.
    """
    d, k, epsilon = 10**6, 1000, 0.5
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, d)
    mech = Joint(k=k, epsilon=epsilon)
    batch = mech.sample(counts, 100, rng)
    assert batch.shape == (100, k) and all(len(set(r)) == k for r in batch.tolist())
    top = int(counts.max())
    assert np.count_nonzero(counts == top) > k
    prepared = mech.prepare(counts)
    exact = [math.comb(int(np.count_nonzero(counts >= top - u)), k) for u in range(top + 1)]
    for t, u in enumerate(prepared.grid.tolist()):
        ref = float(mpmath.log(exact[u]))
        assert abs(prepared.log_n[t] - ref) <= 1e-12 * (1 + abs(ref))
    with mpmath.workdps(60):
        per_gap = [exact[0]] + [b - a for a, b in itertools.pairwise(exact)]
        z = mpmath.fsum(
            mpmath.mpf(n) * mpmath.exp(-mpmath.mpf(epsilon) * u / 2) for u, n in enumerate(per_gap)
        )
        _, log_p = mech.utility_law(counts)
        assert abs(log_p[0] - float(mpmath.log(exact[0] / z))) < 1e-9


@settings(max_examples=60, deadline=None)
@given(
    counts=st.integers(2, 30).flatmap(lambda d: arrays(np.int64, d, elements=st.integers(0, 40))),
    k=st.integers(1, 8),
    epsilon=st.floats(0.05, 5.0),
)
def test_set_counts_equal_big_integers_on_random_histograms(counts, k, epsilon):
    """Property: every kept grid value's log N_set is the exact big-integer count (rel. 1e-12).

    Random d <= 30, k <= 8, counts <= 40 (many ties), any ε: the band limits,
    the mask where need grows, tie-block binomials and the cut all vary.
    """
    k = min(k, counts.size)
    prepared = Joint(k=k, epsilon=epsilon).prepare(counts)
    values_desc, mult_desc = count_blocks(counts)
    assert prepared.grid[0] == 0 and np.all(np.diff(prepared.grid) > 0)
    for t, u in enumerate(prepared.grid.tolist()):
        ref = math.log(set_count(values_desc, mult_desc, k, u))
        assert abs(prepared.log_n[t] - ref) <= 1e-12 * (1 + abs(ref)), (u, t)
    assert prepared.log_tail_bound <= -joint.limits.LOG_TAIL


@pytest.mark.parametrize("cls", CLASSES)
def test_sampled_utilities_follow_the_exact_utility_law(cls):
    """d = 300, k = 20 (too big to enumerate): the utilities of 20,000 sampled outcomes.

    Recomputed from the outcomes by Lemma 5, they follow the utility law of the
    tables (which the big-integer tests check). Chi-square with cells of
    expected count >= 5; false failure <= 1e-6 (p < 1e-6).
    """

    from dpaudit.exact.joint_laws import joint_utility, sequence_utility

    rng = np.random.default_rng(8)
    counts = rng.integers(0, 150, 300)
    mech = cls(k=20, epsilon=0.6)
    utilities, log_p = mech.utility_law(counts)
    batch = mech.sample(counts, 20_000, rng)
    utility = sequence_utility if cls.ordered else joint_utility
    values = counts.tolist()
    sampled = np.array([utility(values, row) for row in batch.tolist()])
    assert (np.exp(log_p) * sampled.size >= 5).sum() >= 5  # a real spread of utilities is tested
    assert_sampler_fits(dict(zip(utilities.tolist(), np.exp(log_p))), Counter(sampled.tolist()))


def test_sets_with_only_k_items_in_reach_have_one_outcome():
    """k = d: one set (all items), probability 1; likewise when the rest lie beyond the grid."""
    counts = np.random.default_rng(0).integers(0, 10**4, 300)
    mech = Joint(k=300, epsilon=1.0)
    assert np.all(mech.sample(counts, 4, np.random.default_rng(1)) == np.arange(300))
    utilities, log_p = mech.utility_law(counts)
    assert utilities.tolist() == [0] and log_p.tolist() == [0.0]
    far = np.array([10**6, 10**6 - 1, 0, 0, 0])
    prepared = Joint(k=2, epsilon=1.0).prepare(far)
    assert prepared.grid.tolist() == [0] and prepared.log_tail_bound <= -joint.limits.LOG_TAIL
