"""``dpaudit.auditor.values.score``: the learned logistic score separates what it was fitted on."""

import numpy as np
import pytest

from dpaudit.auditor.values.score import LinearScore, fit_linear_score
from mechanisms import BOTTOM, PAD


def _auc(p_scores, q_scores) -> float:
    """P(score of a P sample > score of a Q sample), ties counting half (Mann-Whitney)."""
    p, q = np.asarray(p_scores)[:, None], np.asarray(q_scores)[None, :]
    return float((p > q).mean() + 0.5 * (p == q).mean())


def test_a_shift_in_the_values_is_learned():
    rng = np.random.default_rng(0)
    n = 2000
    items = np.zeros((n, 0), dtype=np.int64)
    values_p, values_q = rng.normal(1.0, 1.0, (n, 1)), rng.normal(-1.0, 1.0, (n, 1))
    score = fit_linear_score(items, values_p, items, values_q)
    assert score.weights[0] > 0  # larger values point to P
    # Fresh samples: the optimal (Bayes) AUC of N(1,1) vs N(-1,1) is Φ(√2) ≈ 0.921.
    fresh_p, fresh_q = rng.normal(1.0, 1.0, (n, 1)), rng.normal(-1.0, 1.0, (n, 1))
    auc = _auc(score(items, fresh_p), score(items, fresh_q))
    assert 0.90 < auc < 0.94


def test_an_item_that_appears_more_under_p_is_learned():
    rng = np.random.default_rng(1)
    n = 2000
    items_p = rng.choice([0, 1], size=(n, 1), p=[0.8, 0.2])
    items_q = rng.choice([0, 1], size=(n, 1), p=[0.2, 0.8])
    values = np.zeros((n, 1))
    score = fit_linear_score(items_p, values, items_q, values)
    on_0 = score(np.array([[0]]), np.zeros((1, 1)))[0]
    on_1 = score(np.array([[1]]), np.zeros((1, 1)))[0]
    assert on_0 > on_1


def test_the_vocabulary_is_by_frequency_capped_with_bottom_last():
    items_p = np.array([[5, 7], [5, BOTTOM], [9, PAD]])
    items_q = np.array([[5, 7], [3, PAD], [7, PAD]])
    values = np.zeros((3, 1))
    score = fit_linear_score(items_p, values, items_q, values, max_vocabulary=2)
    # 5 three times, 7 three times (ties keep id order), then 3 and 9 dropped; ⊥ appended.
    assert score.vocabulary == (5, 7, BOTTOM)


def test_features_are_values_missing_flags_and_item_indicators():
    score = LinearScore(
        vocabulary=(4, BOTTOM), means=(0.0,) * 6, scales=(1.0,) * 6, weights=(0.0,) * 6
    )
    x = score.features(np.array([[4, BOTTOM], [PAD, PAD]]), np.array([[2.5], [np.nan]]))
    assert x.tolist() == [
        [2.5, 0.0, 1.0, 0.0, 0.0, 1.0],  # value, not missing, position 0 is 4, position 1 is ⊥
        [0.0, 1.0, 0.0, 0.0, 0.0, 0.0],  # NaN read as 0 and flagged
    ]


def test_the_score_is_the_standardised_dot_product():
    score = LinearScore(vocabulary=(), means=(1.0, 0.0), scales=(2.0, 1.0), weights=(3.0, -1.0))
    got = score(np.zeros((2, 0), dtype=np.int64), np.array([[5.0], [np.nan]]))
    # (5 - 1)/2 · 3 + (0 - 0) · -1 = 6;  (0 - 1)/2 · 3 + (1 - 0) · -1 = -2.5
    assert got.tolist() == pytest.approx([6.0, -2.5])


def test_a_constant_feature_does_not_divide_by_zero():
    rng = np.random.default_rng(2)
    items = np.zeros((50, 1), dtype=np.int64)  # one item only: a constant indicator
    score = fit_linear_score(items, rng.normal(size=(50, 1)), items, rng.normal(size=(50, 1)))
    assert all(np.isfinite(score.weights)) and 0.0 not in score.scales


def test_separable_samples_keep_finite_weights():
    items = np.zeros((100, 0), dtype=np.int64)
    score = fit_linear_score(items, np.full((100, 1), 1.0), items, np.full((100, 1), -1.0))
    assert all(np.isfinite(score.weights)) and abs(score.weights[0]) < 1e4
