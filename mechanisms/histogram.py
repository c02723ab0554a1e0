"""Histograms and the data-independent tie-break (DESIGN.md, "Conventions").

A histogram is a 1-D array of non-negative integer counts; the item id is the
index. Items are ranked by count, high first; ties go to the lower index.

Restricted-domain mechanisms only ever look at the top ``m = k̄ + 1`` counts.
[`TopCounts`][mechanisms.histogram.TopCounts] is that prefix (what
``ORDER BY count DESC, item LIMIT m`` returns from a database) together with the domain size ``d``;
every such mechanism accepts either a full histogram or a ``TopCounts``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["TopCounts", "as_top_counts", "rank_order", "top_counts", "validate_counts"]


def validate_counts(counts: ArrayLike, name: str = "counts") -> np.ndarray:
    """Return ``counts`` as a read-only-safe int64 1-D array, or raise ``ValueError``.

    Rejected: non-numeric, empty, not 1-D, negative, NaN/inf, floats with a
    fractional part, booleans. The message names ``name``.
    """
    try:
        array = np.asarray(counts)
    except (ValueError, TypeError) as error:  # ragged lists and the like
        raise ValueError(
            f"{name} must be a 1-D array of non-negative integer counts: {error}"
        ) from None
    if (
        array.dtype == bool
        or array.dtype == object
        or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating))
    ):
        raise ValueError(
            f"{name} must be a 1-D array of non-negative integer counts, got dtype {array.dtype}"
        )
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} must not contain NaN or infinity")
        if np.any(array != np.floor(array)):
            raise ValueError(f"{name} must hold integer counts, got a fractional value")
        if np.any(np.abs(array) > 2**62):
            raise ValueError(f"{name} holds a count too large for int64")
    if np.any(array < 0):
        raise ValueError(f"{name} must be non-negative, got minimum {array.min()}")
    return array.astype(np.int64, copy=False)


def rank_order(counts: ArrayLike) -> np.ndarray:
    """Item ids sorted by count descending, ties to the lower index (a full O(d log d) sort)."""
    counts = validate_counts(counts)
    # lexsort sorts by the last key first: count descending, then index ascending.
    return np.lexsort((np.arange(counts.size), -counts))


@dataclass(frozen=True, eq=False)
class TopCounts:
    """The top ``len(items)`` entries of a histogram over ``domain_size`` items.

    ``items`` and ``counts`` are in rank order (count descending, ties to the
    lower id). Built by [`top_counts`][mechanisms.histogram.top_counts] or directly from a database
    query.

    Parameters
    ----------
    items : int array of distinct item ids in ``[0, domain_size)``.
    counts : their non-negative integer counts, non-increasing; equal counts
        must list the lower id first.
    domain_size : ``d``, the number of items in the whole histogram.
    """

    items: np.ndarray
    counts: np.ndarray
    domain_size: int

    def __post_init__(self) -> None:
        items = np.asarray(self.items)
        if items.ndim != 1 or not (np.issubdtype(items.dtype, np.integer) or items.size == 0):
            raise ValueError("items must be a 1-D array of integer item ids")
        items = items.astype(np.int64)
        counts = validate_counts(self.counts, "counts")
        if isinstance(self.domain_size, bool) or not isinstance(
            self.domain_size, (int, np.integer)
        ):
            raise ValueError(f"domain_size must be an integer, got {self.domain_size!r}")
        domain_size = int(self.domain_size)
        if items.size != counts.size:
            raise ValueError(f"items and counts differ in length ({items.size} vs {counts.size})")
        if domain_size < items.size:
            raise ValueError(f"domain_size must be >= len(items) = {items.size}, got {domain_size}")
        if items.size and (items.min() < 0 or items.max() >= domain_size):
            raise ValueError(f"items must lie in [0, domain_size={domain_size})")
        if np.unique(items).size != items.size:
            raise ValueError("items must be distinct")
        drops = np.diff(counts)
        if np.any(drops > 0):
            raise ValueError("counts must be non-increasing (rank order)")
        if np.any((drops == 0) & (np.diff(items) < 0)):
            raise ValueError("equal counts must list the lower item id first (the tie-break)")
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "domain_size", domain_size)

    def __len__(self) -> int:
        return int(self.items.size)


def top_counts(counts: ArrayLike, size: int) -> TopCounts:
    """The top ``size`` items of a full histogram in rank order, in O(d) time.

    ``np.partition`` finds the ``size``-th largest count ``t``; every item above
    ``t`` is kept and the lowest-id items equal to ``t`` fill the rest, which is
    exactly the tie-break. Only the ``size`` survivors are sorted.

    On large histograms the partition runs on a candidate subset: a count
    ``t0`` read off a strided subsample is a lower bound for ``t`` whenever at
    least ``size`` items reach it (checked, else the whole array is used), so
    every item of the top ``size``, ties at ``t`` included, has count >= t0.
    The subset keeps ascending ids, so the tie-break is unchanged; this costs
    one scan of the counts instead of a copy and a partition of all of them.
    """
    counts = validate_counts(counts)
    d = counts.size
    size = int(min(size, d))
    if size <= 0:
        return TopCounts(np.empty(0, np.int64), np.empty(0, np.int64), d)
    if size == d:
        order = rank_order(counts)
        return TopCounts(order, counts[order], d)
    ids, values = None, counts
    if d >= _SUBSAMPLE_MIN_SIZE and size * _SUBSAMPLE_STRIDE * 8 <= d:
        sub = counts[::_SUBSAMPLE_STRIDE]
        # Expect about rank * stride items at or above the rank-th largest of
        # the subsample: aim for ~2x size plus slack.
        rank = min(sub.size, 2 * (size // _SUBSAMPLE_STRIDE + 1) + 8)
        t0 = np.partition(sub, sub.size - rank)[sub.size - rank]
        candidates = np.flatnonzero(counts >= t0)
        if candidates.size >= size:
            ids, values = candidates, counts[candidates]
    n = values.size
    threshold = np.partition(values, n - size)[n - size]
    above = np.flatnonzero(values > threshold)
    at = np.flatnonzero(values == threshold)[: size - above.size]
    chosen = np.concatenate([above, at])
    if ids is not None:
        chosen = ids[chosen]
    chosen_counts = counts[chosen]
    order = np.lexsort((chosen, -chosen_counts))
    return TopCounts(chosen[order], chosen_counts[order], d)


# top_counts switches to a subsampled lower bound above this many items.
_SUBSAMPLE_MIN_SIZE = 1 << 15
_SUBSAMPLE_STRIDE = 64


def as_top_counts(data: ArrayLike | TopCounts, size: int) -> TopCounts:
    """Accept a full histogram or a ``TopCounts``; return the top ``size`` entries.

    A ``TopCounts`` with fewer than ``min(size, d)`` entries is rejected, since
    the mechanism would need counts it was not given.
    """
    if isinstance(data, TopCounts):
        need = min(size, data.domain_size)
        if len(data) < need:
            raise ValueError(
                f"counts holds the top {len(data)} items but this mechanism needs the top {need}"
            )
        if len(data) == need:
            return data
        return TopCounts(data.items[:need], data.counts[:need], data.domain_size)
    return top_counts(data, size)
