"""Value encoders learned on learning samples: quantile bins, a learned score, float views, rankings.

The encoder ([`encoders.ValueEncoder`][dpaudit.auditor.values.encoders.ValueEncoder]) must be
fixed before the samples it counts; everything here looks only at learning samples.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import repeat

import numpy as np

from mechanisms import MixedBatch

from .batches import column_items
from .encoders import ValueEncoder
from .floats import fit_float_model, grid_separates, has_fractions
from .outcome_events import outcome_matrix
from .score import fit_linear_score

__all__ = [
    "RANKED_CELLS",
    "TAIL_SUPPORT",
    "fit_encoder",
    "learned_rankings",
    "quantile_edges",
    "tail_edges",
]


def quantile_edges(values: np.ndarray, bins: int) -> tuple[float, ...]:
    """At most ``bins - 1`` distinct interior quantiles of the finite ``values``."""
    finite = values[np.isfinite(values)]
    if finite.size == 0 or bins < 2:
        return ()
    qs = np.quantile(finite, np.linspace(0, 1, bins + 1)[1:-1])
    return tuple(float(v) for v in np.unique(qs))


def fit_encoder(
    width,
    value_width,
    samples_p: MixedBatch,
    samples_q: MixedBatch | None = None,
    bins: int = 128,
    score: bool = True,
    score_bins: int = 128,
    floats: bool = True,
    item_tails: bool = True,
) -> ValueEncoder:
    """An encoder learned on learning samples only (never on the ones it will count).

    Bins per value column are quantiles of both sides pooled; with several value
    columns the per-column bins shrink so that the joint view stays countable
    (``bins ** (1 / value_width)``, at least 8). The score view needs both sides; so do
    the float views, except the grid of a one-sided fit
    ([`floats.has_fractions`][dpaudit.auditor.values.floats.has_fractions]).
    """
    pooled = (
        samples_p.values if samples_q is None else np.vstack([samples_p.values, samples_q.values])
    )
    per_column = max(8, round(bins ** (1.0 / max(value_width, 1))))
    edges = tuple(quantile_edges(pooled[:, j], per_column) for j in range(value_width))
    fitted = None
    score_edges: tuple[float, ...] = ()
    if score and samples_q is not None and samples_p.size and samples_q.size:
        fitted = fit_linear_score(
            samples_p.items, samples_p.values, samples_q.items, samples_q.values
        )
        scores = np.concatenate(
            [fitted(samples_p.items, samples_p.values), fitted(samples_q.items, samples_q.values)]
        )
        score_edges = quantile_edges(scores, score_bins)
    two_sided = samples_q is not None and samples_p.size > 0 and samples_q.size > 0
    model = None
    if floats and samples_q is not None and two_sided:
        model = fit_float_model(samples_p, samples_q)
    pooled_batch = samples_p if samples_q is None else MixedBatch.stack([samples_p, samples_q])
    tails = tail_edges(pooled_batch) if item_tails else ()
    # The grid view is noise-agnostic: it is kept when no noise model explains the
    # doubles and the learning samples show grids one side never reaches; fitted on one
    # side (screening: nothing to compare), for any release of non-integer doubles.
    if samples_q is None:
        grid = floats and has_fractions(samples_p.values)
    else:
        grid = floats and two_sided and model is None and grid_separates(samples_p, samples_q)
    encoder = ValueEncoder(
        int(width), int(value_width), edges, fitted, score_edges, False, model, tails, grid
    )
    if samples_q is None or not two_sided:
        return encoder
    return replace(encoder, rankings=learned_rankings(encoder, samples_p, samples_q))


#: Cells kept per ranking (the largest candidate region).
RANKED_CELLS = 64


def learned_rankings(encoder: ValueEncoder, samples_p: MixedBatch, samples_q: MixedBatch):
    """Per view, the cells ordered by ``(hits_p + ½)/n_p ÷ (hits_q + ½)/n_q``, both ways."""
    tally_p, tally_q = encoder.count(samples_p), encoder.count(samples_q)
    n_p, n_q = max(samples_p.size, 1), max(samples_q.size, 1)
    cells = list(set(tally_p) | set(tally_q))
    matrix = outcome_matrix(cells)
    hits_p = np.fromiter(map(tally_p.get, cells, repeat(0)), dtype=float, count=len(cells))
    hits_q = np.fromiter(map(tally_q.get, cells, repeat(0)), dtype=float, count=len(cells))
    rankings = {}
    for view in {key[0] for key in tally_p} | {key[0] for key in tally_q}:
        rows = np.flatnonzero(matrix[:, 0] == view)
        # A view's keys have one length: the lexicographic order of their rows is the
        # order of the tuples.
        rows = rows[np.lexsort(matrix[rows].T[::-1])]
        keys = [cells[i] for i in rows.tolist()]
        hp, hq = hits_p[rows], hits_q[rows]
        ratio = ((hp + 0.5) / n_p) / ((hq + 0.5) / n_q)
        ways = []
        for r, seen in ((ratio, hp), (1 / ratio, hq)):
            order = np.lexsort((-seen, -r))  # ties: the more frequent cell first
            ways.append(tuple(keys[i] for i in order[:RANKED_CELLS] if seen[i] > 0))
        rankings[view] = tuple(ways)
    return rankings


#: Tail levels: an edge at quantile 2^-k (and 1 - 2^-k) needs this many learning values beyond it.
TAIL_SUPPORT = 8


def tail_edges(batch: MixedBatch) -> tuple[tuple[int, int, tuple[float, ...]], ...]:
    """Edges per (value column, released item) at quantiles ``2^-k`` and ``1 − 2^-k``.

    As deep into each tail as the learning values support (``TAIL_SUPPORT`` beyond the
    last edge), so that events reach the far tails of each item's own value law.
    """
    found = []
    for column in range(batch.value_width):
        values = batch.values[:, column]
        items = column_items(batch.items, column)
        finite = np.isfinite(values)
        for item in np.unique(items[finite]).tolist():
            group = values[finite & (items == item)]
            levels = [0.5]
            k = 2
            while group.size * 2.0**-k >= TAIL_SUPPORT:
                levels += [2.0**-k, 1 - 2.0**-k]
                k += 1
            if group.size < 4 * TAIL_SUPPORT:
                continue
            edges = tuple(float(v) for v in np.unique(np.quantile(group, sorted(levels))))
            found.append((column, int(item), edges))
    return tuple(found)
