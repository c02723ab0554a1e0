"""Joint / JointSequence: validation, invariants, and the no-overflow large cases (seed 004)."""

from __future__ import annotations

import itertools
import time

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

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


def test_size_zero_and_cache_reuse():
    mech = JointSequence(k=2, epsilon=1.0)
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


def _seq_counts_bigint(values_desc, mult, k, u):
    """Independent N_seq(u) as an exact Python integer: Π_i (m_i(u) - i + 1)."""
    sorted_counts = []
    for v, n in zip(values_desc, mult):
        sorted_counts.extend([v] * n)
        if len(sorted_counts) >= k:
            break
    top = sorted_counts[:k]
    total = 1
    for i, a in enumerate(top):
        m = sum(n for v, n in zip(values_desc, mult) if v >= a - u)
        total *= m - i
    return total


def _set_counts_bigint(values_desc, mult, k, u):
    """Independent N_set(u): choose how many items per count value (exact integers)."""
    top = []
    for v, n in zip(values_desc, mult):
        top.extend([v] * min(n, k - len(top)))
        if len(top) == k:
            break
    # ways[j] = number of j-subsets of the value blocks so far whose sorted counts
    # satisfy b_i >= a_i - u for every i <= j.
    ways = [1] + [0] * k
    for v, n in zip(values_desc, mult):
        binom = [1]
        for t in range(1, min(n, k) + 1):
            binom.append(binom[-1] * (n - t + 1) // t)
        new = [0] * (k + 1)
        for j in range(k + 1):
            if ways[j]:
                for t in range(min(n, k - j) + 1):
                    # the new items occupy sorted places j+1..j+t, all with count v
                    if t and top[j + t - 1] - v > u:
                        break
                    new[j + t] += ways[j] * binom[t]
        ways = new
    return ways[k]


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
    values, mult = np.unique(counts, return_counts=True)
    values_desc, mult_desc = values[::-1].tolist(), mult[::-1].tolist()
    count_fn = _seq_counts_bigint if cls is JointSequence else _set_counts_bigint
    max_gap = values_desc[0] - values_desc[-1]
    cumulative = [count_fn(values_desc, mult_desc, k, u) for u in range(max_gap + 1)]
    with mpmath.workdps(60):
        per_gap = [cumulative[0]] + [b - a for a, b in itertools.pairwise(cumulative)]
        z = mpmath.fsum(mpmath.mpf(n) * mpmath.exp(-mpmath.mpf(epsilon) * u / 2)
                        for u, n in enumerate(per_gap))
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


def test_infeasible_set_dp_is_refused_fast():
    """The set-counting DP is O(grid x blocks x k): a case needing ~5e9 cells raises at once.

    Without the guard, d=1e6, k=1000 on U(0, 10^7) counts ran for minutes in silence.
    """
    counts = np.arange(3000)  # distinct counts: one tie block per item
    mech = Joint(k=500, epsilon=1.0)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"k=500.*d=3000.*cell updates.*JointSequence"):
        mech.sample(counts, 2, np.random.default_rng(0))
    assert time.perf_counter() - t0 < 5.0  # the DP itself would take ~40 s
    assert not mech._cache  # nothing half-built is cached
    work, _ = mech.dp_work(counts)
    assert work > joint.MAX_SET_DP_WORK
    # the suggested alternative handles the same input
    seq = JointSequence(k=500, epsilon=1.0).sample(counts, 2, np.random.default_rng(0))
    assert seq.shape == (2, 500)


def test_set_dp_guard_on_table_size(monkeypatch):
    monkeypatch.setattr(joint, "MAX_SET_TABLE", 10)
    with pytest.raises(ValueError, match="sampling tables"):
        Joint(k=3, epsilon=1.0).prepare(np.arange(20))


def test_set_dp_guard_allows_the_benchmark_sizes():
    """d = 1e5, k = 100, U(0, 10 d) counts (seed 004 Sec. 4): well under the limit, and runs."""
    counts = np.random.default_rng(0).integers(0, 10**6, 10**5)
    mech = Joint(k=100, epsilon=1.0)
    work, blocks = mech.dp_work(counts)
    assert work < joint.MAX_SET_DP_WORK / 10 and blocks * 101 < joint.MAX_SET_TABLE
    assert mech.sample(counts, 3, np.random.default_rng(1)).shape == (3, 100)
