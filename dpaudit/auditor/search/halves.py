"""Two independent halves of a histogram's tally, a function of the tally alone.

Screening ranks outcome unions on one half of the samples and counts them on the other
([`event_table`][dpaudit.auditor.search.event_table]), so that a union is not picked for the
chance excess of the samples that built it.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["split_tally", "split_value_tally"]


def split_tally(counter, n):
    """Two independent halves of the samples ``{outcome: count}`` (``n`` in all).

    Each sample goes to the first half with probability ½ (binomial thinning): given
    the halves' sizes, the two are independent draws of the same law. The split is a
    function of the tallies alone (a generator seeded by their content), so an audit
    stays the same for a seed in one process, a pool or a cluster.

    Returns ``(first, n_first, second, n_second)``.
    """
    outcomes, counts, rng = _seeded_by(counter, n)
    first = rng.binomial(counts, 0.5)
    return _halves(outcomes, counts, first, int(first.sum()), n)


def _seeded_by(counter, n):
    """``(outcomes sorted, their counts, a generator seeded by the tally's content)``."""
    outcomes = sorted(counter)
    counts = np.fromiter((counter[o] for o in outcomes), dtype=np.int64, count=len(outcomes))
    digest = hashlib.blake2b(repr((int(n), outcomes, counts.tolist())).encode(), digest_size=16)
    return outcomes, counts, np.random.default_rng(int.from_bytes(digest.digest(), "little"))


def _halves(outcomes, counts, first, n_first, n):
    """``(first, n_first, second, n − n_first)`` as tallies, from the first half's counts."""
    second = counts - first
    return (
        {o: int(c) for o, c in zip(outcomes, first) if c},
        n_first,
        {o: int(c) for o, c in zip(outcomes, second) if c},
        int(n) - n_first,
    )


def split_value_tally(counter, n):
    """Two independent halves of a value release's samples ``{key: count}`` (``n`` in all).

    A value tally has one key per sample in each view of its encoder (the key leads with
    the view), so its counts sum to ``n`` times the number of views and a key-by-key
    thinning would give every view halves of its own size. Here each view's samples are
    split into exactly ``n // 2`` and ``n − n // 2`` at random (a multivariate
    hypergeometric draw over the view's keys): a uniformly random part of fixed size of
    i.i.d. samples is itself i.i.d. and independent of the rest, and every event, which
    lives in one view, is counted on halves of the same two sizes. Seeded by the tally's
    content, as [`split_tally`][dpaudit.auditor.search.halves.split_tally].

    Returns ``(first, n // 2, second, n − n // 2)``.
    """
    outcomes, counts, rng = _seeded_by(counter, n)
    half = int(n) // 2
    if int(counts.sum()) == int(n):  # one key per sample (a release of items only)
        views = np.zeros(len(outcomes), dtype=np.int64)
    else:
        views = np.fromiter((o[0] for o in outcomes), dtype=np.int64, count=len(outcomes))
    first = np.zeros_like(counts)
    for view in np.unique(views):
        rows = np.flatnonzero(views == view)
        if int(counts[rows].sum()) != int(n):
            raise ValueError(
                f"a value tally of {n} samples has view {view} with "
                f"{int(counts[rows].sum())} keys: expected one key per sample"
            )
        first[rows] = rng.multivariate_hypergeometric(counts[rows], half, method="marginals")
    return _halves(outcomes, counts, first, half, n)
