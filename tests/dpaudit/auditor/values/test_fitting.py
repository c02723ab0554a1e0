"""Encoders learned on learning samples (dpaudit.auditor.values.fitting).

Counts and rankings of fitted encoders are checked against recounts in test_encoders.py.
"""

import numpy as np

import mechanisms as M
from dpaudit.auditor.values import VIEW_FLOAT, VIEW_GRID
from dpaudit.auditor.values.fitting import TAIL_SUPPORT, fit_encoder, quantile_edges, tail_edges


def test_quantile_edges_are_distinct_interior_quantiles_of_finite_values():
    values = np.array([0.0, 1.0, 2.0, 3.0, np.nan, np.inf])
    assert quantile_edges(values, 2) == (1.5,)
    assert quantile_edges(np.array([5.0] * 10), 4) == (5.0,)
    assert quantile_edges(np.array([np.nan]), 4) == ()
    assert quantile_edges(values, 1) == ()


def test_tail_edges_go_as_deep_as_each_item_supports():
    rng = np.random.default_rng(0)
    items = np.repeat([[0], [1]], [1024, 16], axis=0)
    values = rng.normal(size=(items.shape[0], 1))
    found = tail_edges(M.MixedBatch(items, values))
    # item 1 has too few values (< 4 × TAIL_SUPPORT) for any edge
    assert [(column, item) for column, item, _ in found] == [(0, 0)]
    # 1024 values: levels 2^-k down to k = 7 (1024 × 2^-7 = 8 = TAIL_SUPPORT), both tails
    assert len(found[0][2]) == 1 + 2 * 6
    assert TAIL_SUPPORT == 1024 * 2.0**-7


def test_a_one_sided_fit_has_no_score_and_a_grid_only_for_fractions():
    rng = np.random.default_rng(1)
    items = rng.integers(0, 3, size=(500, 1))
    fractions = M.MixedBatch(items, rng.laplace(items, 1.0))
    integers = M.MixedBatch(items, np.round(rng.laplace(items, 3.0)))
    encoder = fit_encoder(1, 1, fractions, None, bins=8)
    assert encoder.score is None and encoder.grid and not encoder.rankings
    assert not fit_encoder(1, 1, integers, None, bins=8).grid
    two_sided = fit_encoder(1, 1, fractions, M.MixedBatch(items, rng.laplace(items, 1.0)), bins=8)
    assert two_sided.score is not None and two_sided.rankings
    views = {key[0] for key in two_sided.count(fractions)}
    assert VIEW_GRID not in views or VIEW_FLOAT not in views
