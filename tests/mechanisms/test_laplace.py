"""Validation, claims and sampler invariants of mechanisms.laplace."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mechanisms as M
from mechanisms.tail_bounds import gaussian_delta

COUNTS = [5, 1, 3, 3, 0, 2]


def all_mechanisms():
    return [
        M.ReportNoisyMax(epsilon=1.0),
        M.ReportNoisyMax(epsilon=1.0, monotonic=False),
        M.LaplaceTopK(k=3, epsilon=1.0),
        M.PermuteAndFlip(epsilon=1.0),
        M.PermuteAndFlip(epsilon=1.0, monotonic=False),
        M.GaussianTopK(k=2, epsilon=1.0, delta=1e-5, max_items=3),
    ]


@pytest.mark.parametrize("mech", all_mechanisms(), ids=lambda m: type(m).__name__)
def test_batch_shape_dtype_and_padding(mech):
    batch = mech.sample(COUNTS, 500, np.random.default_rng(0))
    assert batch.shape == (500, mech.width) and batch.dtype == np.int64
    assert np.all((batch >= 0) & (batch < len(COUNTS)))
    for row in batch[:50]:
        assert len(set(row.tolist())) == len(row)  # distinct items
    assert mech.sample(COUNTS, 0, np.random.default_rng(0)).shape == (0, mech.width)


@pytest.mark.parametrize("mech", all_mechanisms(), ids=lambda m: type(m).__name__)
def test_same_rng_state_same_output(mech):
    a = mech.sample(COUNTS, 100, np.random.default_rng(42))
    b = mech.sample(COUNTS, 100, np.random.default_rng(42))
    assert np.array_equal(a, b)
    assert mech.run(COUNTS, np.random.default_rng(3)) == M.outcome_from_row(
        mech.sample(COUNTS, 1, np.random.default_rng(3))[0]
    )


@pytest.mark.parametrize("mech", all_mechanisms(), ids=lambda m: type(m).__name__)
def test_rng_and_counts_are_checked(mech):
    with pytest.raises(TypeError, match="rng"):
        mech.sample(COUNTS, 10, 123)
    with pytest.raises(ValueError, match="counts"):
        mech.sample([1, -1, 2], 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="size"):
        mech.sample(COUNTS, -1, np.random.default_rng(0))


def test_top_k_is_ordered_by_noisy_count_when_noise_is_negligible():
    # Huge ε makes the noise tiny relative to gaps of 1: the true order comes out.
    batch = M.LaplaceTopK(k=3, epsilon=1e6).sample([1, 9, 4, 7], 20, np.random.default_rng(1))
    assert np.all(batch == [1, 3, 2])
    batch = M.GaussianTopK(k=2, epsilon=1e3, delta=0.5, max_items=1).sample(
        [1, 90, 40, 70], 20, np.random.default_rng(1)
    )
    assert np.all(batch == [1, 3])


def test_k_larger_than_domain_pads():
    batch = M.LaplaceTopK(k=4, epsilon=1.0).sample([3, 1], 50, np.random.default_rng(0))
    assert np.all(batch[:, 2:] == M.PAD)
    assert np.all(np.sort(batch[:, :2], axis=1) == [0, 1])


def test_claims_follow_the_papers():
    assert M.ReportNoisyMax(epsilon=0.3).claim == (0.3, 0.0, M.AddRemoveUser())
    assert M.ReportNoisyMax(epsilon=0.3).scale == pytest.approx(1 / 0.3)
    assert M.ReportNoisyMax(epsilon=0.3, monotonic=False).claim == (0.3, 0.0, M.BoundedChange(1))
    assert M.ReportNoisyMax(epsilon=0.3, monotonic=False).scale == pytest.approx(2 / 0.3)
    # seed 004 §4: LAPLACE adds Lap(2k/ε).
    assert M.LaplaceTopK(k=5, epsilon=0.5).scale == pytest.approx(20.0)
    assert M.LaplaceTopK(k=5, epsilon=0.5).claim == (0.5, 0.0, M.BoundedChange(1))
    assert M.PermuteAndFlip(epsilon=2.0).claim == (2.0, 0.0, M.AddRemoveUser())
    g = M.GaussianTopK(k=3, epsilon=0.8, delta=1e-6, max_items=4)
    assert g.claim == (0.8, 1e-6, M.AddRemoveUser(4))
    # σ is the analytic-Gaussian σ for L2 sensitivity √Δ: its exact δ at ε is δ (Balle–Wang Thm 8).
    assert gaussian_delta(g.sigma, 0.8, math.sqrt(4)) == pytest.approx(1e-6, rel=1e-6)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1", True, None])
def test_epsilon_is_validated(bad):
    for build in (
        lambda e: M.ReportNoisyMax(epsilon=e),
        lambda e: M.LaplaceTopK(k=1, epsilon=e),
        lambda e: M.PermuteAndFlip(epsilon=e),
        lambda e: M.GaussianTopK(k=1, epsilon=e, delta=0.1, max_items=1),
    ):
        with pytest.raises(ValueError, match="epsilon"):
            build(bad)


def test_other_fields_are_validated():
    with pytest.raises(ValueError, match="k must"):
        M.LaplaceTopK(k=0, epsilon=1.0)
    with pytest.raises(ValueError, match="monotonic"):
        M.ReportNoisyMax(epsilon=1.0, monotonic="yes")
    with pytest.raises(ValueError, match="delta"):
        M.GaussianTopK(k=1, epsilon=1.0, delta=0.0, max_items=1)
    with pytest.raises(ValueError, match="max_items"):
        M.GaussianTopK(k=1, epsilon=1.0, delta=0.1, max_items=0)
    with pytest.raises(TypeError):
        M.ReportNoisyMax(1.0, True, 3)  # no extra positional fields


@settings(max_examples=30, deadline=None)
@given(
    counts=hnp.arrays(np.int64, st.integers(1, 8), elements=st.integers(0, 50)),
    k=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_rows_are_valid_outcomes_for_any_histogram(counts, k, seed):
    rng = np.random.default_rng(seed)
    for mech in (
        M.LaplaceTopK(k=k, epsilon=1.0),
        M.ReportNoisyMax(epsilon=1.0),
        M.PermuteAndFlip(epsilon=1.0),
    ):
        batch = mech.sample(counts, 20, rng)
        taken = min(mech.width, counts.size)
        assert np.all(batch[:, taken:] == M.PAD)
        body = batch[:, :taken]
        assert np.all((body >= 0) & (body < counts.size))
        assert all(len(set(r)) == taken for r in body.tolist())


def test_permute_and_flip_returns_argmax_when_unique_and_far_ahead():
    # p_r = exp(ε(c_r − c*)) ≈ 0 for the others: only the top item can be flipped heads.
    batch = M.PermuteAndFlip(epsilon=50.0).sample([0, 10, 2], 200, np.random.default_rng(5))
    assert np.all(batch == 1)
