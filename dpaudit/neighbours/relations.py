"""Enumerate neighbouring histograms and bounded families of neighbouring pairs.

The relations are the ones privacy claims are stated for
([`mechanisms.claims`][mechanisms.claims], DESIGN.md "Neighbours"):

* ``AddRemoveUser(max_items=Δ)``: ``c' = c ± s`` with ``s ∈ {0,1}^d``,
  ``1 <= |s| <= Δ`` (``Δ = d`` when unrestricted) and ``c' >= 0`` — so
  removing a user needs ``c_i >= 1`` on every item the user touches;
* ``BoundedChange(max_change=m)``: every count moves by an amount in
  ``{-m, ..., m}``, ``c' >= 0``, ``c' != c``;
* ``Substitute(max_items=Δ)``: ``c' = c - s + s'`` with ``s, s' ∈ {0,1}^d``,
  ``|s| = |s'| <= Δ`` and ``c - s >= 0``; on histograms ``c' - c ∈ {-1,0,1}^d`` with
  ``k`` entries +1 and ``k`` entries -1, ``1 <= k <= Δ`` (``⌊d/2⌋`` when unrestricted):
  items in both records cancel, and a record ``s`` of the removed ones always exists
  when ``c' >= 0``.

The relations are symmetric, and so is the exact check that consumes them
([`dpaudit.exact.privacy_profile`][dpaudit.exact.privacy_profile] takes the max over both
directions); [`neighbour_pairs`][dpaudit.neighbours.relations.neighbour_pairs] therefore lists every
unordered pair once. Everything is vectorized with numpy: a relation is its set of offsets
``c' - c``.
"""

from __future__ import annotations

import math

import numpy as np

from mechanisms.claims import RELATIONS, AddRemoveUser, BoundedChange, Substitute
from mechanisms.histogram import validate_counts
from mechanisms.validation import require_nonnegative_int, require_positive_int

__all__ = [
    "MAX_CELLS",
    "check_family",
    "count_histograms",
    "histograms",
    "is_neighbour",
    "neighbour_pairs",
    "neighbours_of",
    "offsets",
    "pair_count_add_remove",
]

#: Largest number of int64 cells (rows x d) built in one array (480 MB); beyond it the
#: exhaustive families are too big for exact laws on one machine (a cluster verify of
#: d = 6, counts <= 5 needs 35M cells per side).
MAX_CELLS = 60_000_000


def _check_relation(relation):
    if not isinstance(relation, RELATIONS):
        raise TypeError(
            "relation must be mechanisms.AddRemoveUser, mechanisms.BoundedChange or "
            f"mechanisms.Substitute, got {type(relation).__name__}"
        )
    return relation


def check_family(d: int, max_count: int) -> None:
    """Refuse, before any work, a family of histograms too large to list (``ValueError``).

    The size is judged by its logarithm, so ``d = 10**9`` is refused at once with the figure
    instead of after computing ``(max_count + 1) ** d`` exactly.

    Parameters
    ----------
    d : number of items (>= 1).
    max_count : largest count (>= 0).
    """
    d = require_positive_int("d", d)
    max_count = require_nonnegative_int("max_count", max_count)
    digits = math.log10(d) + d * math.log10(max_count + 1)
    if digits > math.log10(MAX_CELLS):
        raise ValueError(
            f"the histogram family would hold about 10^{digits - math.log10(d):.4g} histograms "
            f"of {d} counts (> {MAX_CELLS} cells); use a smaller family"
        )


def _check_rows(what: str, rows: int, d: int) -> None:
    if rows * d > MAX_CELLS:
        raise ValueError(
            f"{what} would hold {rows} rows of {d} counts (> {MAX_CELLS} cells); "
            "use a smaller family"
        )


def offsets(d: int, relation) -> np.ndarray:
    """Every offset ``c' - c`` the relation allows on ``d`` items, as an int64 ``(n, d)`` array.

    Sign constraints that depend on ``c`` (``c' >= 0``) are not applied here.
    Rows: for ``AddRemoveUser`` first the additions ``+s`` then the removals
    ``-s`` (``s`` by increasing bit pattern); for ``BoundedChange`` every
    non-zero vector of ``{-m..m}^d`` in lexicographic order; for ``Substitute`` every
    vector of ``{-1,0,1}^d`` with ``k`` entries +1 and ``k`` entries -1,
    ``1 <= k <= Δ``, in lexicographic order.

    Parameters
    ----------
    d : number of items (>= 1).
    relation : ``AddRemoveUser``, ``BoundedChange`` or ``Substitute``.
    """
    d = require_positive_int("d", d)
    _check_relation(relation)
    if isinstance(relation, AddRemoveUser):
        _check_rows("the offsets", 2 ** (d + 1), d)
        # Row b of `bits` is the binary expansion of b: all of {0,1}^d.
        bits = (np.arange(2**d, dtype=np.int64)[:, None] >> np.arange(d, dtype=np.int64)) & 1
        weight = bits.sum(axis=1)
        limit = d if relation.max_items is None else relation.max_items
        subsets = bits[(weight >= 1) & (weight <= limit)]
        return np.concatenate([subsets, -subsets]).astype(np.int64)
    if isinstance(relation, Substitute):
        _check_rows("the offsets", 3**d, d)
        grid = np.indices((3,) * d, dtype=np.int64).reshape(d, -1).T - 1
        ups = (grid == 1).sum(axis=1)
        limit = d // 2 if relation.max_items is None else relation.max_items
        return grid[(ups == (grid == -1).sum(axis=1)) & (ups >= 1) & (ups <= limit)]
    m = relation.max_change
    _check_rows("the offsets", (2 * m + 1) ** d, d)
    grid = np.indices((2 * m + 1,) * d, dtype=np.int64).reshape(d, -1).T - m
    return grid[np.any(grid != 0, axis=1)]


def neighbours_of(counts, relation) -> np.ndarray:
    """Every neighbour of histogram ``counts`` under ``relation``, as an int64 ``(n, d)`` array.

    Rows follow [`offsets`][dpaudit.neighbours.relations.offsets] (additions before removals for
    add/remove), with the offsets that would make a count negative dropped. Distinct
    offsets give distinct neighbours, so there are no duplicate rows.

    Parameters
    ----------
    counts : a histogram (1-D non-negative integer counts).
    relation : ``AddRemoveUser``, ``BoundedChange`` or ``Substitute``.
    """
    counts = validate_counts(counts)
    candidates = counts[None, :] + offsets(counts.size, relation)
    return candidates[np.all(candidates >= 0, axis=1)]


def is_neighbour(counts, counts2, relation) -> bool:
    """Whether ``counts2`` is a neighbour of ``counts`` under ``relation`` (symmetric).

    Parameters
    ----------
    counts, counts2 : histograms over the same number of items.
    relation : ``AddRemoveUser``, ``BoundedChange`` or ``Substitute``.
    """
    a = validate_counts(counts, "counts")
    b = validate_counts(counts2, "counts2")
    _check_relation(relation)
    if a.size != b.size:
        raise ValueError(f"counts and counts2 differ in length ({a.size} vs {b.size})")
    diff = b - a
    if not np.any(diff):
        return False
    if isinstance(relation, BoundedChange):
        return bool(np.all(np.abs(diff) <= relation.max_change))
    if isinstance(relation, Substitute):
        ups, downs = int(np.sum(diff == 1)), int(np.sum(diff == -1))
        limit = a.size // 2 if relation.max_items is None else relation.max_items
        return bool(np.all(np.abs(diff) <= 1)) and ups == downs <= limit
    # Add/remove: one sign, every change exactly 1, at most Δ items touched.
    same_sign = bool(np.all(diff >= 0) or np.all(diff <= 0))
    touched = int(np.count_nonzero(diff))
    limit = a.size if relation.max_items is None else relation.max_items
    return same_sign and bool(np.all(np.abs(diff) <= 1)) and touched <= limit


def count_histograms(d: int, max_count: int) -> int:
    """``(max_count + 1) ** d``: the number of histograms [`histograms`][dpaudit.neighbours.relations.histograms] lists."""
    d = require_positive_int("d", d)
    max_count = require_nonnegative_int("max_count", max_count)
    return (max_count + 1) ** d


def histograms(d: int, max_count: int) -> np.ndarray:
    """Every histogram on ``d`` items with counts in ``[0, max_count]``, lexicographic order.

    Returns an int64 ``((max_count + 1) ** d, d)`` array.

    Parameters
    ----------
    d : number of items (>= 1).
    max_count : largest count (>= 0).
    """
    check_family(d, max_count)
    rows = count_histograms(d, max_count)
    _check_rows("the histogram family", rows, d)
    return np.indices((max_count + 1,) * d, dtype=np.int64).reshape(d, -1).T.copy()


def _lex_positive(rows: np.ndarray) -> np.ndarray:
    """Mask of rows whose first non-zero entry is positive (one of each ±t pair)."""
    nonzero = rows != 0
    first = np.argmax(nonzero, axis=1)
    return rows[np.arange(rows.shape[0]), first] > 0


def neighbour_pairs(d: int, max_count: int, relation) -> tuple[np.ndarray, np.ndarray]:
    """Every unordered neighbouring pair touching the family ``{c : 0 <= c_i <= max_count}``.

    A pair ``{c, c'}`` is listed when at least one side is in the family; the
    other side may leave it (e.g. ``c + s`` has a count ``max_count + 1``), so
    every neighbour of every family member is covered — both adding and
    removing a user. Each unordered pair appears exactly once, as
    ``(low, high)`` with ``high - low`` lexicographically positive; this is
    sound because both the relations and the exact two-sided check are
    symmetric. No other symmetry is used: permuting items is not one, because
    the tie-break favours lower ids.

    Returns ``(low, high)``, two int64 ``(n_pairs, d)`` arrays, sorted by
    ``low`` (lexicographically), so consecutive pairs share a left side.

    Parameters
    ----------
    d : number of items (>= 1).
    max_count : largest count in the family (>= 0).
    relation : ``AddRemoveUser``, ``BoundedChange`` or ``Substitute``.
    """
    family = histograms(d, max_count)
    steps = offsets(d, relation)
    steps = steps[_lex_positive(steps)]
    _check_rows("the pair list", 2 * family.shape[0] * steps.shape[0], d)
    # Pairs (c, c + t) with c in the family: c is the low side.
    high = family[:, None, :] + steps[None, :, :]
    keep = np.all(high >= 0, axis=2)
    low_a = np.broadcast_to(family[:, None, :], high.shape)[keep]
    high_a = high[keep]
    # Pairs (c - t, c) with c in the family and c - t outside it (else found above).
    low = family[:, None, :] - steps[None, :, :]
    keep = np.all(low >= 0, axis=2) & np.any(low > max_count, axis=2)
    low_b = low[keep]
    high_b = np.broadcast_to(family[:, None, :], low.shape)[keep]
    low_all = np.concatenate([low_a, low_b])
    high_all = np.concatenate([high_a, high_b])
    # Group by the low side so a caller walking the pairs reuses its law.
    order = np.lexsort(tuple(high_all.T[::-1]) + tuple(low_all.T[::-1]))
    return low_all[order], high_all[order]


def pair_count_add_remove(d: int, max_count: int, max_items: int | None = None) -> int:
    """Closed form of ``len(neighbour_pairs(d, max_count, AddRemoveUser(max_items)))``.

    Every pair is ``(c, c + s)`` with ``c`` in the family (``c - s`` never
    leaves it), so the count is ``(max_count + 1)^d · Σ_{j=1..Δ} C(d, j)``.
    """
    d = require_positive_int("d", d)
    limit = d if max_items is None else min(d, max_items)
    return count_histograms(d, max_count) * sum(math.comb(d, j) for j in range(1, limit + 1))
