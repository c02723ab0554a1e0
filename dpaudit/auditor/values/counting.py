"""Outcome counts of a batch: every row packed into one int64 key, grouped by ``np.unique``.

Rows are packed in base ``max id + 3`` (so PAD = -2 and BOTTOM = -1 fit), much faster
than ``np.unique`` over rows; batches whose keys would overflow int64 fall back to
[`mechanisms.count_outcomes`][mechanisms.count_outcomes].
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from mechanisms import PAD, count_outcomes

__all__ = ["count_batch"]


def count_batch(batch) -> Counter:
    """``{outcome tuple: count}`` of an int64 ``(size, width)`` batch."""
    batch = np.asarray(batch)
    if batch.ndim != 2:
        raise ValueError(f"a sample batch must be 2-D (size, width), got shape {batch.shape}")
    if batch.shape[0] == 0:
        return Counter()
    batch = batch.astype(np.int64, copy=False)
    width = batch.shape[1]
    if width == 0:
        return Counter({(): int(batch.shape[0])})
    low = int(batch.min())
    if low < PAD:
        raise ValueError(f"sample batch holds {low}, below PAD={PAD}")
    base = int(batch.max()) + 3
    if width * math.log2(max(base, 2)) >= 62:
        return count_outcomes(batch)
    shifted = batch + 2  # PAD -> 0, BOTTOM -> 1, item i -> i + 2
    keys = shifted[:, 0].copy()
    for column in range(1, width):
        keys *= base
        keys += shifted[:, column]
    unique, counts = np.unique(keys, return_counts=True)
    # Decode only the distinct keys (few) back to outcome tuples.
    digits = np.empty((unique.size, width), dtype=np.int64)
    rest = unique.copy()
    for column in range(width - 1, -1, -1):
        digits[:, column] = rest % base
        rest //= base
    digits -= 2
    result: Counter[tuple[int, ...]] = Counter()
    if not (digits == PAD).any():
        # Distinct full rows are distinct outcomes: one dict construction.
        return Counter(dict(zip(zip(*digits.T.tolist()), counts.tolist())))
    for row, count in zip(digits.tolist(), counts.tolist()):
        result[tuple(v for v in row if v != PAD)] += count
    return result
