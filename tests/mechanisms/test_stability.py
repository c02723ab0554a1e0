import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from mechanisms import (
    BOTTOM,
    PAD,
    AddRemoveUser,
    StabilityRelease,
    TopStable,
    outcome_from_row,
    top_counts,
)
from mechanisms.tail_bounds import laplace_difference_tail, laplace_tail_bound


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"k": 0, "kbar": 3, "epsilon": 1, "delta": 1e-3}, "k"),
        ({"k": 3, "kbar": 2, "epsilon": 1, "delta": 1e-3}, "kbar"),
        ({"k": 1, "kbar": 2, "epsilon": 0, "delta": 1e-3}, "epsilon"),
        ({"k": 1, "kbar": 2, "epsilon": 1, "delta": 1.0}, "delta"),
        ({"k": 1, "kbar": 2, "epsilon": 1, "delta": 1e-3, "epsilon_em": -1}, "epsilon_em"),
        ({"k": 1, "kbar": 2, "epsilon": 1, "delta": 1e-3, "p1": 1 / 3}, "p1"),
        ({"k": 1, "kbar": 2, "epsilon": 1, "delta": 1e-3, "p1": 1.0}, "p1"),
        ({"k": 1, "kbar": 2, "epsilon": 1, "delta": 1e-3, "calibration": "tight"}, "calibration"),
    ],
)
def test_top_stable_rejects_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        TopStable(**kwargs)


@pytest.mark.parametrize("calibration", ["paper", "exact"])
@pytest.mark.parametrize(
    "epsilon, delta, kbar", [(0.1, 1e-9, 10), (1.0, 1e-6, 100), (2.0, 1e-3, 3)]
)
def test_top_stable_threshold_meets_the_per_query_budget(calibration, epsilon, delta, kbar):
    # Thm 3.2's proof: an unstable release (gap 0) passes with probability
    # P[Lap(2/ε2) > T + Lap(1/ε1)] <= δ/k̄, whichever way δ_q was solved.
    mech = TopStable(k=1, kbar=kbar, epsilon=epsilon, delta=delta, calibration=calibration)
    assert mech.epsilon1 + mech.epsilon2 == pytest.approx(epsilon)
    assert mech.c == pytest.approx(2 * 0.37 / 0.63)
    crossing = laplace_difference_tail(mech.epsilon2 / 2, mech.epsilon1, mech.threshold)
    assert crossing <= delta / kbar * (1 + 1e-9)
    if calibration == "paper":
        # line 2 solved with equality: Lemma 3.1's bound at δ_q equals δ/k̄
        assert laplace_tail_bound(mech.delta_q, mech.c) == pytest.approx(delta / kbar, rel=1e-9)


def test_exact_calibration_lowers_the_threshold():
    paper = TopStable(k=5, kbar=50, epsilon=1.0, delta=1e-6)
    exact = TopStable(k=5, kbar=50, epsilon=1.0, delta=1e-6, calibration="exact")
    assert exact.threshold < paper.threshold
    assert exact.claim == paper.claim == (1.0, 1e-6, AddRemoveUser())


def test_claims():
    assert TopStable(k=2, kbar=3, epsilon=0.5, delta=1e-4, epsilon_em=0.25).claim == (
        0.75,
        1e-4,
        AddRemoveUser(),
    )
    assert StabilityRelease(k=2, epsilon=0.5, delta=1e-4).claim == (0.5, 1e-4, AddRemoveUser())
    assert StabilityRelease(k=2, epsilon=0.5, delta=1e-4).threshold == pytest.approx(
        math.log(1e4) / 0.5
    )


def test_stability_release_pass_rate_is_the_laplace_tail():
    mech = StabilityRelease(k=2, epsilon=1.0, delta=0.05)
    counts = [9, 1, 2, 7]  # top-2 = {0, 3}, gap q_2 = 7 - 2 - 1 = 4
    n = 200_000
    batch = mech.sample(counts, n, np.random.default_rng(2))
    released = batch[:, 0] != BOTTOM
    assert np.all(batch[released] == [0, 3])
    # P[4 + Lap(1) > ln 20] = 1 − ½e^{−(4 − ln 20)}; binomial test, false failure <= 1e-6
    p = 1 - 0.5 * math.exp(-(4 - math.log(20)))
    assert binomtest(int(released.sum()), n, p).pvalue > 1e-6


def test_top_stable_returns_the_top_set_on_a_huge_gap():
    counts = np.array([0, 10_000, 3, 10_000, 5, 2])
    mech = TopStable(k=2, kbar=4, epsilon=1.0, delta=1e-6)
    batch = mech.sample(counts, 1000, np.random.default_rng(0))
    # position 2 (gap ~ 10^4) passes; positions 4, 3 (gaps 2, 1) essentially never
    assert np.all(batch == [1, 3])


def test_top_stable_accepts_top_counts():
    counts = np.array([5, 40, 3, 40, 5, 2, 30])
    mech = TopStable(k=2, kbar=3, epsilon=2.0, delta=0.2, epsilon_em=1.0)
    a = mech.sample(counts, 200, np.random.default_rng(4))
    b = mech.sample(top_counts(counts, 4), 200, np.random.default_rng(4))
    assert np.array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(0, 30), min_size=1, max_size=9),
    k=st.integers(1, 3),
    extra=st.integers(0, 3),
    epsilon_em=st.sampled_from([0.0, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_top_stable_outcomes_are_subsets_of_the_top_kbar(counts, k, extra, epsilon_em, seed):
    mech = TopStable(k=k, kbar=k + extra, epsilon=3.0, delta=0.3, epsilon_em=epsilon_em)
    batch = mech.sample(counts, 40, np.random.default_rng(seed))
    assert batch.shape == (40, k) and batch.dtype == np.int64
    assert np.array_equal(batch, mech.sample(counts, 40, np.random.default_rng(seed)))
    top = set(top_counts(counts, k + extra).items.tolist())
    for row in batch:
        outcome = outcome_from_row(row)
        assert np.all(row[len(outcome) :] == PAD)
        if outcome == (BOTTOM,):
            continue
        assert BOTTOM not in outcome
        assert list(outcome) == sorted(set(outcome)) and set(outcome) <= top
        assert 1 <= len(outcome) <= k
