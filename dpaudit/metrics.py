"""Utility metrics of top-k outputs, as defined by the seed papers.

Every metric takes ``outcome`` — one outcome tuple, or a 2-D batch
``(size, width)`` as returned by ``mechanism.sample`` — together with the full
histogram ``counts`` and ``k``; ``BOTTOM`` and ``PAD`` cells are ignored. A
batch gives a float array with one value per row, a tuple gives a float.

The "true top-k" is the top k of the rank order (count high first, ties to the
lower index; DESIGN.md), so with tied counts at the k-th place the metrics
based on membership (P, F1) use that data-independent tie-break, while the
count-based ones (S, SR, ℓ∞) do not depend on it.
"""

from __future__ import annotations

import numpy as np

from mechanisms import rank_order, validate_counts
from mechanisms.validation import require_positive_int

__all__ = [
    "elements_returned",
    "f1_score",
    "linf_error",
    "proportion_true_top_k",
    "relative_sum",
    "score_ratio",
]


def _prepare(outcome, counts, k):
    counts = validate_counts(counts)
    k = require_positive_int("k", k, maximum=counts.size)
    batch = np.asarray(outcome, dtype=np.int64)
    single = batch.ndim == 1
    if single:
        batch = batch[None, :]
    if batch.ndim != 2:
        raise ValueError(
            f"outcome must be a tuple of item ids or a 2-D batch, got shape {batch.shape}"
        )
    valid = batch >= 0  # drops BOTTOM (-1) and PAD (-2)
    if np.any(batch >= counts.size):
        raise ValueError(f"outcome holds an item id >= d={counts.size}")
    items = np.where(valid, batch, 0)
    return counts, k, items, valid, single


def _finish(values, single):
    values = np.asarray(values, dtype=np.float64)
    return float(values[0]) if single else values


def _true_top(counts, k):
    return rank_order(counts)[:k]


def _true_positives(counts, k, items, valid):
    member = np.zeros(counts.size, dtype=bool)
    member[_true_top(counts, k)] = True
    return np.sum(member[items] & valid, axis=1)


def proportion_true_top_k(outcome, counts, k):
    """P: the number of true top-k items returned, divided by k.

    Seed 000 (000_4bf15007bce596ab.txt) Sec. 6, "Comparison Metrics" (P, Proportion of true top-k).

    Parameters
    ----------
    outcome : an outcome tuple or a ``(size, width)`` batch.
    counts : the full histogram.
    k : the number of items asked for.
    """
    counts, k, items, valid, single = _prepare(outcome, counts, k)
    return _finish(_true_positives(counts, k, items, valid) / k, single)


def relative_sum(outcome, counts, k):
    """S: sum of the counts of the returned items / sum of the true top-k counts.

    Seed 000 (000_4bf15007bce596ab.txt) Sec. 6, "Comparison Metrics" (S, Relative Sum).
    If every top-k count is 0 the ratio is defined as 1 (nothing better exists).

    Parameters
    ----------
    outcome : an outcome tuple or a ``(size, width)`` batch.
    counts : the full histogram.
    k : the number of items asked for.
    """
    counts, k, items, valid, single = _prepare(outcome, counts, k)
    best = float(np.sum(counts[_true_top(counts, k)]))
    got = np.sum(np.where(valid, counts[items], 0), axis=1).astype(np.float64)
    return _finish(got / best if best > 0 else np.ones_like(got), single)


def score_ratio(outcome, counts, k):
    """SR: sum of the scores returned / sum of the true top-k scores.

    Seed 001 (001_49698e97f2ea8cba.txt) Sec. 8.3 ("Score Ratio"). With counts as
    scores this is the same quantity as seed 000's S
    ([`relative_sum`][dpaudit.metrics.relative_sum]).

    Parameters
    ----------
    outcome : an outcome tuple or a ``(size, width)`` batch.
    counts : the full histogram (the scores).
    k : the number of items asked for.
    """
    return relative_sum(outcome, counts, k)


def f1_score(outcome, counts, k):
    """F1 = 2TP / (2TP + FP + FN) against the true top-k.

    Seed 001 (001_49698e97f2ea8cba.txt) App. G, eq. (16). TP: returned items in
    the true top-k; FP: returned items outside it; FN: true top-k items not returned.

    Parameters
    ----------
    outcome : an outcome tuple or a ``(size, width)`` batch.
    counts : the full histogram.
    k : the number of items asked for.
    """
    counts, k, items, valid, single = _prepare(outcome, counts, k)
    tp = _true_positives(counts, k, items, valid)
    fp = np.sum(valid, axis=1) - tp
    fn = k - tp
    return _finish(2 * tp / (2 * tp + fp + fn), single)


def elements_returned(outcome):
    """The number of items returned (⊥ and padding not counted).

    Seed 001 (001_49698e97f2ea8cba.txt) Sec. 8.3 ("number of elements returned").

    Parameters
    ----------
    outcome : an outcome tuple or a ``(size, width)`` batch.
    """
    batch = np.asarray(outcome, dtype=np.int64)
    if batch.ndim == 1:
        return int(np.sum(batch >= 0))
    if batch.ndim != 2:
        raise ValueError(
            f"outcome must be a tuple of item ids or a 2-D batch, got shape {batch.shape}"
        )
    return np.sum(batch >= 0, axis=1)


def linf_error(outcome, counts, k):
    """ℓ∞ error ‖S_c − D_c‖_∞ between the returned and the true top-k counts, both sorted decreasingly.

    Seed 004 (004_96d6a41600571c16.txt) Definition 1 (the error minimised by
    TOP-K and measured in Sec. 4). It equals -u*(S) of Lemma 5 for a k-set.
    An outcome with fewer than k items (⊥) is padded with count 0 — an
    extension: the paper only considers k-sets.

    Parameters
    ----------
    outcome : an outcome tuple or a ``(size, width)`` batch.
    counts : the full histogram.
    k : the number of items asked for.
    """
    counts, k, items, valid, single = _prepare(outcome, counts, k)
    if items.shape[1] > k and np.any(np.sum(valid, axis=1) > k):
        raise ValueError(f"an outcome returns more than k={k} items")
    got = np.where(valid, counts[items], 0)
    width = max(k, got.shape[1])
    padded = np.zeros((got.shape[0], width), dtype=np.int64)
    padded[:, : got.shape[1]] = got
    got_sorted = -np.sort(-padded, axis=1)[:, :k]
    best = counts[_true_top(counts, k)]
    return _finish(np.max(np.abs(got_sorted - best[None, :]), axis=1), single)
