"""Families of neighbouring pairs for the empirical auditor.

Exhaustive enumeration ([`relations`][dpaudit.neighbours.relations]) is hopeless beyond tiny
domains, so the auditor draws from structured families that contain the known worst
cases, plus random pairs; the auditor screens them cheaply (few samples per
pair, [`dpaudit.auditor.screen`][dpaudit.auditor.screen]) before spending its budget on the most
damning ones. Where a mechanism's output changes is found from samples by
[`threshold_search`][dpaudit.neighbours.threshold_search].

Families:

* [`add_remove_pairs`][dpaudit.neighbours.pairs.add_remove_pairs] — add or remove one user
  (unrestricted or touching at most Δ items) on a set of base histograms: flat, staircases with gaps
  of 1 and 2, two-level;
* [`bounded_change_pairs`][dpaudit.neighbours.pairs.bounded_change_pairs] — every count moves by at
  most 1 either way (DP-Sniper's relation): one item up while all others go down, and the like;
* [`substitute_pairs`][dpaudit.neighbours.pairs.substitute_pairs] — replace one user's record
  (bounded DP): one item down and another up, blocks of Δ items down against Δ others up;
* [`restricted_domain_pairs`][dpaudit.neighbours.targeted_pairs.restricted_domain_pairs] — for mechanisms
  that only look at the top k̄ + 1 counts: an item at or next to the (k̄+1)-th count, ties across
  the cut, gaps of exactly 1, at several heights;
* [`threshold_ladder_pairs`][dpaudit.neighbours.targeted_pairs.threshold_ladder_pairs] — for mechanisms that
  test counts against a threshold ``τ`` above ``h_(k̄+1)``: the top k̄ block a few rungs around
  ``τ`` above zeros, one user moving the whole block (or ``h_(k̄+1)``) by one;
* [`random_pairs`][dpaudit.neighbours.pairs.random_pairs] — uniform random bases and random allowed
  moves;
* [`explicit_pairs`][dpaudit.neighbours.neighbour_pair.explicit_pairs] — the user's own pairs, checked
  against the relation.
"""

from __future__ import annotations

import numpy as np

from mechanisms.claims import BoundedChange, Substitute
from mechanisms.histogram import validate_counts

from .neighbour_pair import NAMED, NeighbourPair, array_pair, explicit_pairs, unique_pairs
from .targeted_pairs import restricted_domain_pairs, threshold_ladder_pairs, threshold_offset

__all__ = [
    "NAMED",
    "NeighbourPair",
    "add_remove_pairs",
    "base_histograms",
    "bounded_change_pairs",
    "default_pairs",
    "explicit_pairs",
    "moves_on",
    "random_pairs",
    "restricted_domain_pairs",
    "substitute_pairs",
    "threshold_ladder_pairs",
    "threshold_offset",
]


def base_histograms(d: int, heights=(0, 2, 6)) -> list[np.ndarray]:
    """Base histograms on ``d`` items: flat, staircases (gaps 1, 2), two-level, one item low."""
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    steps = np.arange(d - 1, -1, -1, dtype=np.int64)
    bases = []
    for h in heights:
        bases.append(np.full(d, h, dtype=np.int64))
        bases.append(h + steps)
        bases.append(h + 2 * steps)
        two = np.full(d, h, dtype=np.int64)
        two[: max(1, d // 2)] += 2
        bases.append(two)
    # One item far below the rest: its selection probability sits in the noise
    # tail, where the likelihood ratio of a shifted count is largest.
    for gap in (3, 6):
        low = np.full(d, gap, dtype=np.int64)
        low[-1] = 0
        bases.append(low)
    # A few items low and the rest high, and the converse: users that touch
    # only the low (or only the high) items shift many selection probabilities.
    for m, gap in ((2, 3), (1, 3), (2, 2)):
        if m < d:
            low = np.full(d, gap, dtype=np.int64)
            low[:m] = 0
            bases.append(low)
            high = np.zeros(d, dtype=np.int64)
            high[d - m :] = gap
            bases.append(high)
    return bases


def _probe_items(d):
    """Items whose single-count moves are tried: the ends and the middle (all if d <= 6)."""
    if d <= 6:
        return list(range(d))
    return sorted({0, 1, d // 2, d - 2, d - 1})


def _moves_add_remove(d, max_items):
    limit = d if max_items is None else min(max_items, d)
    moves = [np.eye(d, dtype=np.int64)[i] for i in _probe_items(d)]
    top = np.zeros(d, dtype=np.int64)
    top[:limit] = 1
    bottom = np.zeros(d, dtype=np.int64)
    bottom[d - limit :] = 1
    moves += [top, bottom]
    for m in (2, d // 2):
        if 2 <= m <= limit:
            prefix = np.zeros(d, dtype=np.int64)
            prefix[:m] = 1
            suffix = np.zeros(d, dtype=np.int64)
            suffix[d - m :] = 1
            moves += [prefix, suffix]
    if limit >= d - 1 and d > 1:
        for i in _probe_items(d):
            all_but = np.ones(d, dtype=np.int64)
            all_but[i] = 0
            moves.append(all_but)
    return moves


def add_remove_pairs(counts, max_items=None, family="add/remove") -> list[NeighbourPair]:
    """Neighbours of ``counts`` obtained by adding or removing one user.

    The user touches one item, the top or bottom ``Δ`` items, or (when Δ
    allows) every item or every item but one.
    """
    c = validate_counts(counts)
    pairs = []
    for s in _moves_add_remove(c.size, max_items):
        for sign in (1, -1):
            c2 = c + sign * s
            if np.all(c2 >= 0):
                pairs.append(array_pair(c, c2, family))
    return unique_pairs(pairs)


def bounded_change_pairs(counts, max_change=1, family="bounded change") -> list[NeighbourPair]:
    """Neighbours of ``counts`` where every count moves by at most ``max_change``.

    Moves: one item up and all others down (the report-noisy-max worst case),
    one item alone, every item together, the top half against the bottom half.
    """
    c = validate_counts(counts)
    d = c.size
    m = int(max_change)
    moves = []
    for i in _probe_items(d):
        e = np.zeros(d, dtype=np.int64)
        e[i] = 1
        moves.append(m * (2 * e - 1))
        moves.append(m * e)
    moves.append(np.full(d, m, dtype=np.int64))
    for size in sorted({2, max(1, d // 2)}):
        if size < d:
            half = np.full(d, -m, dtype=np.int64)
            half[:size] = m
            moves.append(half)
    pairs = []
    for v in moves:
        for sign in (1, -1):
            c2 = c + sign * v
            if np.all(c2 >= 0) and np.any(c2 != c):
                pairs.append(array_pair(c, c2, family))
    return unique_pairs(pairs)


def _moves_substitute(d, max_items):
    limit = d // 2 if max_items is None else min(max_items, d // 2)
    moves = []
    probes = _probe_items(d)
    for i in probes:
        for j in probes:
            if i != j:
                v = np.zeros(d, dtype=np.int64)
                v[i], v[j] = -1, 1
                moves.append(v)
    for m in sorted({2, limit}):
        if 2 <= m <= limit:
            # the top m items lose a record that the bottom m gain, and the reverse (sign)
            v = np.zeros(d, dtype=np.int64)
            v[:m], v[d - m :] = -1, 1
            moves.append(v)
    return moves


def substitute_pairs(counts, max_items=1, family="substitute") -> list[NeighbourPair]:
    """Neighbours of ``counts`` where one user's record is replaced by another.

    Moves: one item down and another up (every ordered pair of probe items), and the
    top ``m`` items down against the bottom ``m`` up, for ``m`` in {2, Δ} (Δ items per
    record, at most ``⌊d/2⌋``), each in both directions.
    """
    c = validate_counts(counts)
    pairs = []
    for v in _moves_substitute(c.size, max_items):
        for sign in (1, -1):
            c2 = c + sign * v
            if np.all(c2 >= 0):
                pairs.append(array_pair(c, c2, family))
    return unique_pairs(pairs)


def relation_pairs(counts, relation, family=None) -> list[NeighbourPair]:
    """The structured neighbours of ``counts`` under ``relation`` (the family for its kind)."""
    named = {} if family is None else {"family": family}
    if isinstance(relation, BoundedChange):
        return bounded_change_pairs(counts, relation.max_change, **named)
    if isinstance(relation, Substitute):
        return substitute_pairs(counts, relation.max_items, **named)
    return add_remove_pairs(counts, relation.max_items, **named)


def random_pairs(relation, d: int, max_count: int, n: int, rng) -> list[NeighbourPair]:
    """``n`` random neighbouring pairs: uniform bases in ``[0, max_count]^d`` and random moves."""
    pairs: list[NeighbourPair] = []
    attempts = 0
    while len(pairs) < n and attempts < 50 * max(n, 1):
        attempts += 1
        c = rng.integers(0, max_count + 1, size=d)
        if isinstance(relation, BoundedChange):
            v = rng.integers(-relation.max_change, relation.max_change + 1, size=d)
        elif isinstance(relation, Substitute):
            limit = d // 2 if relation.max_items is None else min(relation.max_items, d // 2)
            if limit < 1:
                break
            size = int(rng.integers(1, limit + 1))
            touched = rng.choice(d, size=2 * size, replace=False)
            v = np.zeros(d, dtype=np.int64)
            v[touched[:size]] = 1
            v[touched[size:]] = -1
        else:
            limit = d if relation.max_items is None else min(relation.max_items, d)
            touched = rng.choice(d, size=int(rng.integers(1, limit + 1)), replace=False)
            v = np.zeros(d, dtype=np.int64)
            v[touched] = 1 if rng.random() < 0.5 else -1
        c2 = c + v
        if np.all(c2 >= 0) and np.any(v != 0):
            pairs.append(array_pair(c, c2, "random"))
    return unique_pairs(pairs)


def moves_on(bases, relation) -> list[NeighbourPair]:
    """The relation's structured moves on each base (add/remove, bounded change, substitute)."""
    pairs = []
    for base in bases:
        pairs += relation_pairs(base, relation)
    return pairs


def default_pairs(
    relation, d: int, kbar=None, counts=None, rng=None, n_random=8, threshold=None
) -> list[NeighbourPair]:
    """The auditor's default candidate family for ``relation`` on ``d`` items.

    Structured moves on the base histograms (or on ``counts`` if given), the
    restricted-domain family when ``kbar`` is known, the threshold ladder when
    ``threshold`` (an offset above ``h_(k̄+1)``, see
    [`threshold_offset`][dpaudit.neighbours.targeted_pairs.threshold_offset]) is known too, and ``n_random``
    random pairs.
    """
    bases = [validate_counts(counts)] if counts is not None else base_histograms(d)
    pairs = moves_on(bases, relation)
    if counts is None and kbar is not None and d >= kbar + 1:
        pairs += restricted_domain_pairs(d, kbar, relation)
        if threshold is not None:
            pairs += threshold_ladder_pairs(d, kbar, threshold, relation)
    if rng is not None and n_random:
        max_count = int(max(8, max(b.max() for b in bases)))
        dd = bases[0].size
        pairs += random_pairs(relation, dd, max_count, n_random, rng)
    return unique_pairs(pairs)
