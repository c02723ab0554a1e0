"""Encoders' counts and learned rankings against plain Python recounts."""

from collections import Counter

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.values.fitting import RANKED_CELLS, fit_encoder


def _batch(rng, size, width, value_width, shift):
    items = rng.integers(-1, 3, size=(size, width))
    values = rng.laplace(shift, 1.0, size=(size, value_width)).round(1)
    values[rng.random(values.shape) < 0.05] = np.nan
    shared = min(width, value_width)  # a value beside ⊥ is missing
    values[:, :shared][items[:, :shared] == -1] = np.nan
    return M.MixedBatch(items, values)


def _rankings_by_sorting(tally_p, tally_q, n_p, n_q):
    # Cells of each view in tuple order, ranked by the smoothed likelihood ratio both ways.
    rankings = {}
    for view in {k[0] for k in tally_p} | {k[0] for k in tally_q}:
        keys = sorted(k for k in set(tally_p) | set(tally_q) if k[0] == view)
        hp = np.array([tally_p.get(k, 0) for k in keys], dtype=float)
        hq = np.array([tally_q.get(k, 0) for k in keys], dtype=float)
        ratio = ((hp + 0.5) / n_p) / ((hq + 0.5) / n_q)
        ways = []
        for r, seen in ((ratio, hp), (1 / ratio, hq)):
            order = np.lexsort((-seen, -r))
            ways.append(tuple(keys[i] for i in order[:RANKED_CELLS] if seen[i] > 0))
        rankings[view] = tuple(ways)
    return rankings


@pytest.mark.parametrize("width, value_width", [(0, 1), (1, 1), (2, 2), (1, 3)])
def test_counts_and_rankings_equal_recounts_on_python_tuples(width, value_width):
    rng = np.random.default_rng(width * 10 + value_width)
    p = _batch(rng, 3_000, width, value_width, 0.4)
    q = _batch(rng, 2_500, width, value_width, 0.0)
    encoder = fit_encoder(width, value_width, p, q, bins=16, score_bins=16)
    tally_p, tally_q = encoder.count(p), encoder.count(q)
    assert encoder.rankings == _rankings_by_sorting(tally_p, tally_q, p.size, q.size)
    # Counting halves apart and adding them gives the whole (one key per sample per view).
    half = M.MixedBatch(p.items[:1_000], p.values[:1_000])
    rest = M.MixedBatch(p.items[1_000:], p.values[1_000:])
    assert encoder.count(half) + encoder.count(rest) == tally_p
    views = Counter(k[0] for k in tally_p.elements())
    assert set(views.values()) == {p.size}
