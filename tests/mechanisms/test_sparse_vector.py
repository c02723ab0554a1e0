import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import BOTTOM, PAD, AddRemoveUser, BoundedChange, SparseVector, outcome_from_row
from mechanisms.tail_bounds import laplace_difference_tail


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"threshold": math.nan, "epsilon1": 1, "epsilon2": 1}, "threshold"),
        ({"threshold": 1, "epsilon1": 0, "epsilon2": 1}, "epsilon1"),
        ({"threshold": 1, "epsilon1": 1, "epsilon2": -1}, "epsilon2"),
        ({"threshold": 1, "epsilon1": 1, "epsilon2": 1, "cutoff": 0}, "cutoff"),
        ({"threshold": 1, "epsilon1": 1, "epsilon2": 1, "halting": "yes"}, "halting"),
    ],
)
def test_bad_parameters_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SparseVector(**kwargs)


def test_claims_follow_the_two_papers():
    # seed 000 Thm 2.8: (ε1 + ε2, 0) for queries moving either way;
    # seed 001 Thm 3: (ε, 0) for monotonic queries (add/remove).
    standard = SparseVector(threshold=2, epsilon1=0.3, epsilon2=0.5, cutoff=2)
    halting = SparseVector(threshold=2, epsilon1=0.3, epsilon2=0.5, halting=True)
    assert standard.claim == (0.8, 0.0, BoundedChange(1))
    assert halting.claim == (0.8, 0.0, AddRemoveUser())
    # noise scales of the two algorithms
    assert standard.threshold_scale() == pytest.approx(2 / 0.3)
    assert standard.query_scale() == pytest.approx(2 * 2 / 0.5)
    assert halting.threshold_scale() == pytest.approx(1 / 0.3)
    assert halting.query_scale() == pytest.approx(1 / 0.5)


def test_halting_single_query_pass_rate_matches_the_closed_form_tail():
    # P[c + Lap(1/ε2) > T + Lap(1/ε1)] = P[Lap(1/ε2) > (T − c) + Lap(1/ε1)].
    mech = SparseVector(threshold=3.0, epsilon1=0.7, epsilon2=1.3, cutoff=1, halting=True)
    n = 200_000
    batch = mech.sample([1], n, np.random.default_rng(11))
    passed = int((batch[:, 0] == 0).sum())
    assert set(map(tuple, batch.tolist())) <= {(0,), (BOTTOM,)}
    p = laplace_difference_tail(1.3, 0.7, 2.0)
    # binomial two-sided test; false-failure probability <= 1e-6
    from scipy.stats import binomtest

    assert binomtest(passed, n, p).pvalue > 1e-6


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(0, 8), min_size=1, max_size=8),
    cutoff=st.integers(1, 4),
    halting=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_outcomes_are_well_formed_and_reproducible(counts, cutoff, halting, seed):
    mech = SparseVector(threshold=3, epsilon1=1.0, epsilon2=1.0, cutoff=cutoff, halting=halting)
    a = mech.sample(counts, 50, np.random.default_rng(seed))
    b = mech.sample(counts, 50, np.random.default_rng(seed))
    assert a.dtype == np.int64 and a.shape == (50, cutoff)
    assert np.array_equal(a, b)
    for row in a:
        outcome = outcome_from_row(row)
        # PAD only at the end
        assert np.all(row[len(outcome) :] == PAD)
        items = [v for v in outcome if v != BOTTOM]
        assert items == sorted(set(items)) and all(0 <= v < len(counts) for v in items)
        assert len(outcome) >= 1
        if halting:
            assert items == list(range(len(items)))  # a prefix of the queries
        assert len(items) <= cutoff
        # BOTTOM closes the outcome exactly when fewer than `cutoff` items answered ⊤
        assert (BOTTOM in outcome) == (len(items) < cutoff)
        if BOTTOM in outcome:
            assert outcome[-1] == BOTTOM


def test_run_equals_first_row_and_rng_is_checked():
    mech = SparseVector(threshold=1, epsilon1=1.0, epsilon2=1.0, cutoff=2)
    assert mech.run([3, 0, 2], np.random.default_rng(5)) == outcome_from_row(
        mech.sample([3, 0, 2], 1, np.random.default_rng(5))[0]
    )
    with pytest.raises(TypeError, match="rng"):
        mech.sample([1, 2], 3, 42)
    with pytest.raises(ValueError, match="size"):
        mech.sample([1, 2], -1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="counts"):
        mech.sample([1, -2], 3, np.random.default_rng(0))
