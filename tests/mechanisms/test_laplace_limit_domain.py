"""Validation, claim and sampler invariants of mechanisms.laplace_limit_domain."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mechanisms as M


def make(**over):
    fields = {"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 1e-3, "max_items": 1}
    fields.update(over)
    return M.LaplaceLimitDomain(**fields)


def test_claims_worked_by_hand():
    # ε = 0.4, δ = 1e-4, Δ = 3:  ε' = (Δ + 1)ε = 1.6;
    # δ̄ = (δ/4)(3 + ln(Δ/δ)) = 2.5e-5 · (3 + ln 30000) = 2.5e-5 · 13.308952660644 = 3.32723816516e-4;
    # proved (seed 002 Lemmas 6.3 + 6.4): (1 + e^1.6) δ̄ = 5.953032424395 · 3.32723816516e-4
    #                                                  = 1.98071566809e-3;
    # restated (seed 001 App. E.1): δ̄.
    mech = make(epsilon=0.4, delta=1e-4, max_items=3)
    eps, delta, rel = mech.claim
    assert eps == pytest.approx(1.6) and rel == M.AddRemoveUser(3)
    assert delta == pytest.approx(1.98071566809e-3, rel=1e-10)
    restated = make(epsilon=0.4, delta=1e-4, max_items=3, claim_basis="restated")
    assert restated.claim.delta == pytest.approx(3.32723816516e-4, rel=1e-10)
    assert restated.claim.epsilon == eps
    with pytest.raises(ValueError, match="claim_basis"):
        make(claim_basis="folklore")


def test_threshold_formula():
    # h_⊥ = h_(k̄+1) + 1 + ln(Δ/δ)/ε; a missing h_(k̄+1) counts as 0.
    mech = make(epsilon=0.5, delta=0.01, max_items=2)
    assert mech.threshold([9, 8, 7, 6, 5]) == pytest.approx(6 + 1 + math.log(200) / 0.5)
    assert mech.threshold([9, 8]) == pytest.approx(0 + 1 + math.log(200) / 0.5)


def test_outcome_structure():
    mech = make(k=3, kbar=4, epsilon=0.3, delta=0.1, max_items=1)
    counts = [6, 0, 5, 5, 4, 1, 1]
    batch = mech.sample(counts, 3000, np.random.default_rng(2))
    assert batch.shape == (3000, mech.width) and batch.dtype == np.int64
    allowed = {0, 2, 3, 4}  # the top k̄ = 4 items
    for outcome in M.count_outcomes(batch):
        items = [i for i in outcome if i != M.BOTTOM]
        assert set(items) <= allowed and len(set(items)) == len(items)
        if M.BOTTOM in outcome:
            assert outcome[-1] == M.BOTTOM and len(outcome) <= mech.k
        else:
            assert len(outcome) == mech.k
    # With a tiny ε the threshold is far off: both ⊥-first and full outcomes should show up.
    seen = M.count_outcomes(batch)
    assert any(o[-1] == M.BOTTOM for o in seen)


def test_accepts_top_counts_and_never_needs_more():
    full = np.array([9, 0, 7, 7, 1, 3, 0, 2])
    mech = make()
    top = M.top_counts(full, mech.kbar + 1)
    a = mech.sample(full, 200, np.random.default_rng(11))
    b = mech.sample(top, 200, np.random.default_rng(11))
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="top"):
        mech.sample(M.top_counts(full, 2), 10, np.random.default_rng(0))


def test_small_domain_and_determinism():
    mech = make(k=3, kbar=5)
    a = mech.sample([2, 1], 100, np.random.default_rng(9))
    b = mech.sample([2, 1], 100, np.random.default_rng(9))
    assert np.array_equal(a, b)
    # Only 2 candidates: at most 2 items then ⊥.
    assert np.all((a[:, 2] == M.BOTTOM) | (a[:, 2] == M.PAD))


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="kbar"):
        make(k=3, kbar=2)
    with pytest.raises(ValueError, match="delta"):
        make(delta=1.0)
    with pytest.raises(ValueError, match="max_items"):
        make(max_items=0)
    with pytest.raises(ValueError, match="epsilon"):
        make(epsilon=-1)
    with pytest.raises(ValueError, match="k must"):
        make(k=0)
    with pytest.raises(TypeError, match="rng"):
        make().sample([1, 2, 3], 5, None)


@settings(max_examples=30, deadline=None)
@given(
    counts=hnp.arrays(np.int64, st.integers(1, 9), elements=st.integers(0, 20)),
    k=st.integers(1, 3),
    extra=st.integers(0, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_rows_are_valid_for_any_histogram(counts, k, extra, seed):
    mech = make(k=k, kbar=k + extra, epsilon=1.0, delta=0.05)
    top_items = set(M.top_counts(counts, mech.kbar).items.tolist())
    batch = mech.sample(counts, 30, np.random.default_rng(seed))
    for row in batch.tolist():
        outcome = M.outcome_from_row(row)
        assert 1 <= len(outcome) <= k
        items = [i for i in outcome if i != M.BOTTOM]
        assert set(items) <= top_items and len(set(items)) == len(items)
        assert M.BOTTOM not in outcome[:-1]
        assert outcome[-1] == M.BOTTOM or len(outcome) == k
