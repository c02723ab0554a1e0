"""The array steps of the restricted-domain framework F: positions to items, and STEP 2's test.

seed 001 (001_49698e97f2ea8cba.txt) Alg. 1 (lines 4-9) and Alg. 2 (the halting SVT):
[`RestrictedDomain`][mechanisms.restricted_domain.RestrictedDomain] samples by these two
functions after its wrapped mechanism (STEP 1) has drawn.
"""

from __future__ import annotations

import numpy as np

from .histogram import TopCounts
from .outcomes import BOTTOM, PAD

__all__ = ["halting_test", "items_of_positions"]

_BIG = np.iinfo(np.int64).max


def items_of_positions(batch: np.ndarray, top: TopCounts, ordered: bool) -> np.ndarray:
    """Map the wrapped mechanism's rank positions to item ids; a set's items in ascending id.

    seed 001 Alg. 1 line 1: the wrapped mechanism saw the top-k̄ counts in rank order.

    Parameters
    ----------
    batch : the wrapped mechanism's outcomes, one row each (positions, ``PAD``, ``BOTTOM``).
    top : the top entries the positions index.
    ordered : whether the wrapped mechanism's outcomes are ordered (else sorted here).
    """
    batch = np.asarray(batch, dtype=np.int64)
    is_item = batch >= 0
    mapped = np.where(is_item, top.items[np.where(is_item, batch, 0)], batch)
    if not ordered:
        keyed = np.where(is_item, mapped, _BIG)
        keyed.sort(axis=1)
        n_items = is_item.sum(axis=1)
        columns = np.arange(batch.shape[1])
        tail = np.where(columns[None, :] < n_items[:, None], keyed, PAD)
        # keep an inner BOTTOM right after the items
        has_bottom = (batch == BOTTOM).any(axis=1)
        rows = np.flatnonzero(has_bottom)
        tail[rows, n_items[rows]] = BOTTOM
        mapped = tail
    return mapped


def halting_test(
    mapped: np.ndarray,
    top: TopCounts,
    h_ref: int,
    threshold: float,
    scale: float,
    width: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """STEP 2: keep the selected items in order while their noisy gap beats the noisy threshold.

    seed 001 Alg. 1 lines 4-9 and Alg. 2: item i passes when
    ``(c_i − h_ref − 1) + Lap(scale) > T + Lap(scale)``; the first failure appends ``BOTTOM``
    and halts. Draws the threshold noise (``size``) first, then the items' (``size × columns``).

    Parameters
    ----------
    mapped : the selected item ids, one row per outcome (``PAD``/``BOTTOM`` after the items).
    top : the top entries, for the items' counts.
    h_ref : the reference count (line 4).
    threshold : T (line 3).
    scale : the Laplace scale 2/ε_R (lines 3, 7).
    width : the outcome width.
    rng : the generator.
    """
    size, columns = int(mapped.shape[0]), int(mapped.shape[1])
    out = np.full((size, width), PAD, dtype=np.int64)
    if size == 0:
        return out
    is_item = mapped >= 0
    n_items = is_item.sum(axis=1)
    # gap of every selected item to the reference count (line 8)
    count_of = np.zeros(top.domain_size, dtype=np.int64)
    count_of[top.items] = top.counts
    gaps = np.where(is_item, count_of[np.where(is_item, mapped, 0)] - h_ref - 1, 0)
    noisy_threshold = threshold + rng.laplace(0.0, scale, size)
    passes = (gaps + rng.laplace(0.0, scale, (size, columns)) > noisy_threshold[:, None]) | (
        ~is_item
    )
    lead = np.where(passes.all(axis=1), columns, np.argmin(passes, axis=1))
    lead = np.minimum(lead, n_items)
    kept = np.arange(columns)[None, :] < lead[:, None]
    out[:, :columns] = np.where(kept, mapped, PAD)
    failed = lead < n_items
    out[np.flatnonzero(failed), lead[failed]] = BOTTOM
    inner_bottom = ~failed & (mapped == BOTTOM).any(axis=1)
    out[np.flatnonzero(inner_bottom), n_items[inner_bottom]] = BOTTOM
    return out
