"""Utility metrics: P, S (seed 000 Sec. 6), SR, F1, #returned (seed 001), ℓ∞ (seed 004 Def. 1)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import mechanisms as M
from dpaudit import metrics
from dpaudit.exact.joint_laws import joint_utility

COUNTS = [5, 3, 3, 1, 0]  # true top-2 = items 0, 1 (tie 1/2 to the lower id)


def test_hand_computed_values():
    # returned {0, 3}: one of the top-2 -> P = 1/2; S = (5+1)/(5+3); F1 = 2/(2+1+1)
    assert metrics.proportion_true_top_k((0, 3), COUNTS, 2) == 0.5
    assert metrics.relative_sum((0, 3), COUNTS, 2) == 6 / 8
    assert metrics.score_ratio((0, 3), COUNTS, 2) == 6 / 8
    assert metrics.f1_score((0, 3), COUNTS, 2) == 0.5
    # sorted (5, 1) vs (5, 3) -> 2; sorted (1, 0) vs (5, 3) -> max(4, 3) = 4
    assert metrics.linf_error((3, 0), COUNTS, 2) == 2
    assert metrics.linf_error((3, 4), COUNTS, 2) == 4
    # item 2 ties with item 1: the tie-break puts 1 in the top-2, counts match exactly
    assert metrics.proportion_true_top_k((0, 2), COUNTS, 2) == 0.5
    assert metrics.linf_error((0, 2), COUNTS, 2) == 0


def test_bottom_and_padding_are_ignored():
    assert metrics.elements_returned((4, M.BOTTOM)) == 1
    batch = M.batch_from_outcomes([(0, 1), (2, M.BOTTOM), (M.BOTTOM,)], width=3)
    assert metrics.elements_returned(batch).tolist() == [2, 1, 0]
    assert metrics.proportion_true_top_k(batch, COUNTS, 2).tolist() == [1.0, 0.0, 0.0]
    # F1 of (2,): TP 0, FP 1, FN 2 -> 0; empty outcome: 0/(0+0+2) = 0
    assert metrics.f1_score(batch, COUNTS, 2).tolist() == [1.0, 0.0, 0.0]
    # ℓ∞ pads missing items with count 0: (3, 0) vs (5, 3)
    assert metrics.linf_error(batch, COUNTS, 2).tolist() == [0, 3, 5]


def test_bad_input():
    with pytest.raises(ValueError, match="k"):
        metrics.proportion_true_top_k((0,), COUNTS, 0)
    with pytest.raises(ValueError, match="k"):
        metrics.relative_sum((0,), COUNTS, 6)
    with pytest.raises(ValueError, match="item id"):
        metrics.f1_score((9,), COUNTS, 2)
    with pytest.raises(ValueError, match="counts"):
        metrics.linf_error((0,), [1, -1], 1)
    with pytest.raises(ValueError, match="more than k"):
        metrics.linf_error((0, 1, 2), COUNTS, 2)


def test_relative_sum_all_zero_counts_is_one():
    assert metrics.relative_sum((0, 1), [0, 0, 0], 2) == 1.0


@settings(max_examples=60, deadline=None)
@given(
    counts=st.integers(1, 8).flatmap(lambda d: arrays(np.int64, d, elements=st.integers(0, 9))),
    k=st.integers(1, 4),
    data=st.data(),
)
def test_invariants(counts, k, data):
    d = counts.size
    k = min(k, d)
    chosen = data.draw(st.lists(st.integers(0, d - 1), min_size=0, max_size=k, unique=True))
    outcome = tuple(chosen)
    p = metrics.proportion_true_top_k(outcome, counts, k)
    s = metrics.relative_sum(outcome, counts, k)
    f1 = metrics.f1_score(outcome, counts, k)
    assert 0 <= p <= 1 and 0 <= s <= 1 + 1e-12 and 0 <= f1 <= 1
    assert metrics.elements_returned(outcome) == len(chosen)
    if len(chosen) == k:
        # with k items, F1 = TP / k = P; and ℓ∞ equals -u*(S) of seed 004 Lemma 5
        assert f1 == pytest.approx(p)
        assert metrics.linf_error(outcome, counts, k) == -joint_utility(counts.tolist(), outcome)
    top = tuple(M.rank_order(counts)[:k].tolist())
    assert metrics.proportion_true_top_k(top, counts, k) == 1
    assert metrics.relative_sum(top, counts, k) == 1
    assert metrics.linf_error(top, counts, k) == 0
    # a batch gives the per-row values of the single outcomes
    batch = M.batch_from_outcomes([outcome, top], width=k)
    assert metrics.f1_score(batch, counts, k).tolist() == [f1, 1.0]


def test_linf_is_the_definition_1_minimum():
    # TOP-K(D) = argmin_S ||S_c - D_c||_∞ has error 0, and the minimum over all sets is 0.
    counts = [4, 9, 9, 2, 7]
    errors = [metrics.linf_error(s, counts, 3) for s in itertools.combinations(range(5), 3)]
    # worst set {0, 3, 4}: sorted (7, 4, 2) vs (9, 9, 7) -> max(2, 5, 5) = 5
    assert min(errors) == 0 and max(errors) == 5 == metrics.linf_error((0, 3, 4), counts, 3)
