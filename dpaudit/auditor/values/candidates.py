"""Candidate value events with their hits, from selection samples only."""

from __future__ import annotations

from collections import Counter

import numpy as np

from mechanisms import PAD

from .encoders import (
    VIEW_BINS,
    VIEW_FLOAT,
    VIEW_GRID,
    VIEW_ITEM_TAILS,
    VIEW_LOW_BITS,
    VIEW_NAMES,
    VIEW_SCORE,
    ValueEncoder,
)
from .events import ItemValueThreshold, OnItems, ValueRegion, ValueThreshold
from .outcome_candidates import candidate_events
from .outcome_events import Event, OutcomeSet, outcome_matrix

__all__ = ["value_candidate_events"]


def _table(counter):
    """A Counter of keys as ``(key matrix, weights)`` for vectorised tallies."""
    keys = list(counter)
    weights = np.fromiter(counter.values(), dtype=np.float64, count=len(keys))
    return outcome_matrix(keys), weights


def _view_counters(counter, matrix) -> dict:
    """``{view: Counter of that view's keys}``, each in the counter's own order."""
    keys, counts = list(counter), list(counter.values())
    found = {}
    for view in VIEW_NAMES:
        rows = np.flatnonzero(matrix[:, 0] == view).tolist() if keys else []
        found[view] = Counter(dict(zip(map(keys.__getitem__, rows), map(counts.__getitem__, rows))))
    return found


def _items_counter(table, width):
    """``{item tuple: hits}`` of the values view, summed over the value cells."""
    matrix, weights = table
    rows = matrix[:, 0] == VIEW_BINS
    block = matrix[rows, 1 : 1 + width]
    if block.shape[0] == 0:
        return Counter()
    distinct, inverse = np.unique(block, axis=0, return_inverse=True)
    sums = np.bincount(inverse.ravel(), weights=weights[rows], minlength=distinct.shape[0])
    return Counter(
        {
            tuple(v for v in row if v != PAD): int(n)
            for row, n in zip(distinct.tolist(), sums.tolist())
        }
    )


def _threshold_hits(table, view, position, n_codes, item_at=None, item=None):
    """Hits of every ``{code >= b}`` (b = 1..n_codes) and ``{0 < code < b}`` in one view.

    ``item_at``, ``item``: only the keys with ``item`` in key column ``item_at``.
    """
    matrix, weights = table
    rows = matrix[:, 0] == view
    if item_at is not None:
        rows &= matrix[:, item_at] == item
    per_code = np.bincount(matrix[rows, position], weights=weights[rows], minlength=n_codes + 2)
    finite = per_code.astype(float)
    finite[0] = 0.0
    at_least = np.cumsum(finite[::-1])[::-1]  # at_least[b] = hits with code >= b
    below = np.cumsum(finite) - finite  # below[b] = hits with 0 < code < b
    return at_least, below


def _prepared(counter, encoder, cache):
    """Per-counter tallies (key table, per-view counters, item counter), memoised in ``cache``."""
    key = id(counter)
    if cache is None or key not in cache:
        table = _table(counter)
        views = _view_counters(counter, table[0])
        items = _items_counter(table, encoder.width) if encoder.width else Counter()
        found = (table, views, items, counter)  # the counter is kept so its id stays unique
        if cache is None:
            return found
        cache[key] = found
    return cache[key]


def _ranked_regions(ranked, counter_p, counter_q):
    """Prefixes of a learned ranking (sizes 1, 2, 3, then x1.5 up to all), with their hits."""
    if not ranked:
        return []
    cum_p = np.cumsum([counter_p.get(k, 0) for k in ranked])
    cum_q = np.cumsum([counter_q.get(k, 0) for k in ranked])
    sizes = {1, 2, 3, len(ranked)}
    r = 4.0
    while r < len(ranked):
        sizes.add(int(r))
        r *= 1.5
    return [
        (frozenset(ranked[:size]), float(cum_p[size - 1]), float(cum_q[size - 1]))
        for size in sorted(s for s in sizes if 1 <= s <= len(ranked))
    ]


def value_candidate_events(
    encoder: ValueEncoder, counter_p, n_p, counter_q, n_q, focus=(), cache=None, rank_by=None
):
    """Candidate events over encoded keys, with hits: regions, thresholds, item events.

    Views: the value bins, the learned score, the float views (reachability, low bits),
    the values given their item and the grid of the double, each where the encoder has it.

    ``cache``: a dict shared across calls on the same counters (screening scores every
    pair in both directions over shared histograms).

    Regions are likelihood-ratio unions of cells within one view (a union across views
    would count a sample twice): prefixes of the encoder's rankings learned on the
    learning samples where it has them, else
    [`outcome_candidates.candidate_events`][dpaudit.auditor.values.outcome_candidates.candidate_events] on the given counts;
    thresholds cut one value column or the learned score at every bin edge, and the value at one
    position given the item released there at every tail edge of that item; item events are the
    integer auditor's candidates on the item block alone.

    ``rank_by``: ``(counter_p, n_p, counter_q, n_q)`` of other samples on which the
    unions and single cells are chosen
    ([`outcome_candidates.candidate_events`][dpaudit.auditor.values.outcome_candidates.candidate_events]), so that their hits on
    the given counters are honest estimates: chosen and counted on the same few thousand samples,
    the union of the cells that fell on P's side by chance predicts a bound many times the claim on
    every pair, and the pairs that really leak are ranked at random among them. The regions of a
    learned ranking and the thresholds are fixed before these samples and need no other ones.
    """
    found: tuple[list[Event], list[float], list[float]] = ([], [], [])
    table_p, views_p, items_p, _ = _prepared(counter_p, encoder, cache)
    table_q, views_q, items_q, _ = _prepared(counter_q, encoder, cache)
    if rank_by is None:
        rank_views_p, rank_views_q, rank_items_p, rank_items_q = views_p, views_q, items_p, items_q
        m_p, m_q = n_p, n_q
    else:
        rank_p, m_p, rank_q, m_q = rank_by
        _, rank_views_p, rank_items_p, _ = _prepared(rank_p, encoder, cache)
        _, rank_views_q, rank_items_q, _ = _prepared(rank_q, encoder, cache)
    for view in _views(encoder):
        counts = (views_p[view], n_p, views_q[view], n_q)
        _add_regions(
            found, encoder, view, counts, (rank_views_p[view], m_p, rank_views_q[view], m_q)
        )
        _add_thresholds(found, encoder, view, table_p, table_q)
    _add_item_tails(found, encoder, table_p, table_q)
    if encoder.width:
        evs, a, b = candidate_events(
            items_p, n_p, items_q, n_q, focus=focus, rank_by=(rank_items_p, m_p, rank_items_q, m_q)
        )
        for event, x, y in zip(evs, a, b):
            _add(found, OnItems(encoder, event), x, y)
    events, hp, hq = found
    return events, np.asarray(hp, dtype=float), np.asarray(hq, dtype=float)


def _views(encoder: ValueEncoder) -> list[int]:
    """The views the encoder has, in the order their events are listed."""
    views = [VIEW_BINS] + ([VIEW_SCORE] if encoder.score is not None else [])
    views += [VIEW_FLOAT, VIEW_LOW_BITS] if encoder.floats is not None else []
    views += [VIEW_ITEM_TAILS] if encoder.item_edges else []
    views += [VIEW_GRID] if encoder.grid else []
    return views


def _add(found, event: Event, hits_p, hits_q) -> None:
    """Append ``event`` and its hits to ``found = (events, hits P, hits Q)``."""
    found[0].append(event)
    found[1].append(hits_p)
    found[2].append(hits_q)


def _add_regions(found, encoder: ValueEncoder, view: int, counts, rank_by) -> None:
    """The regions of one view: prefixes of the encoder's learned rankings where it has them,
    else likelihood-ratio unions of cells chosen on ``rank_by`` and counted on ``counts``."""
    sub_p, n_p, sub_q, n_q = counts
    if view in encoder.rankings:
        for ranked in encoder.rankings[view]:
            for cells, x, y in _ranked_regions(ranked, sub_p, sub_q):
                _add(found, ValueRegion(encoder, view, cells), x, y)
        return
    evs, a, b = candidate_events(sub_p, n_p, sub_q, n_q, structural=False, rank_by=rank_by)
    for event, x, y in zip(evs, a, b):
        assert isinstance(event, OutcomeSet)
        _add(found, ValueRegion(encoder, view, event.outcomes), x, y)


def _add_thresholds(found, encoder: ValueEncoder, view: int, table_p, table_q) -> None:
    """``value >= edge`` and ``value < edge`` at every bin edge of each value column (values
    view) or of the learned score (score view); nothing in the other views."""
    columns = {VIEW_BINS: range(encoder.value_width), VIEW_SCORE: [-1]}.get(view, [])
    for column in columns:
        edges = encoder.edges[column] if column >= 0 else encoder.score_edges
        position = 1 + encoder.width + max(column, 0)
        n_codes = len(edges) + 1
        ap, bp = _threshold_hits(table_p, view, position, n_codes)
        aq, bq = _threshold_hits(table_q, view, position, n_codes)
        for code in range(2, n_codes + 1):
            _add(found, ValueThreshold(encoder, column, code, True), ap[code], aq[code])
            _add(found, ValueThreshold(encoder, column, code, False), bp[code], bq[code])


def _add_item_tails(found, encoder: ValueEncoder, table_p, table_q) -> None:
    """Both sides of every tail edge of the value at a position given the item released there."""
    for column, item, edges in encoder.item_edges:
        position = 1 + encoder.width + column
        item_at = 1 + column if column < encoder.width else None
        n_codes = len(edges) + 1
        ap, bp = _threshold_hits(table_p, VIEW_ITEM_TAILS, position, n_codes, item_at, item)
        aq, bq = _threshold_hits(table_q, VIEW_ITEM_TAILS, position, n_codes, item_at, item)
        for code in range(2, n_codes + 1):
            for above, x, y in ((True, ap[code], aq[code]), (False, bp[code], bq[code])):
                _add(found, ItemValueThreshold(encoder, column, item, code, above), x, y)
