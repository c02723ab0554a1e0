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
* [`restricted_domain_pairs`][dpaudit.neighbours.pairs.restricted_domain_pairs] — for mechanisms
  that only look at the top k̄ + 1 counts: an item at or next to the (k̄+1)-th count, ties across
  the cut, gaps of exactly 1, at several heights;
* [`threshold_ladder_pairs`][dpaudit.neighbours.pairs.threshold_ladder_pairs] — for mechanisms that
  test counts against a threshold ``τ`` above ``h_(k̄+1)``: the top k̄ block a few rungs around
  ``τ`` above zeros, one user moving the whole block (or ``h_(k̄+1)``) by one;
* [`random_pairs`][dpaudit.neighbours.pairs.random_pairs] — uniform random bases and random allowed
  moves;
* [`explicit_pairs`][dpaudit.neighbours.pairs.explicit_pairs] — the user's own pairs, checked
  against the relation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechanisms.claims import AddRemoveUser, BoundedChange, Substitute
from mechanisms.histogram import validate_counts

from .relations import is_neighbour

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


#: The ``family`` of a pair the user names (``pairs=``, ``--pair``): such a pair is
#: confirmed, not only screened (``dpaudit.auditor.search.slots.with_named_pairs``).
NAMED = "explicit"


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring histograms (as tuples, so pairs hash) and where they came from."""

    counts: tuple
    counts2: tuple
    family: str = NAMED

    def __post_init__(self):
        a = validate_counts(self.counts, "counts")
        b = validate_counts(self.counts2, "counts2")
        if a.size != b.size:
            raise ValueError(f"counts and counts2 differ in length ({a.size} vs {b.size})")
        object.__setattr__(self, "counts", tuple(int(v) for v in a))
        object.__setattr__(self, "counts2", tuple(int(v) for v in b))

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.counts, dtype=np.int64), np.array(self.counts2, dtype=np.int64)

    def swapped(self) -> NeighbourPair:
        return NeighbourPair(self.counts2, self.counts, self.family)

    def __str__(self) -> str:
        return f"{list(self.counts)} vs {list(self.counts2)}"


def _array_pair(c: np.ndarray, c2: np.ndarray, family: str) -> NeighbourPair:
    """The pair of two count arrays (a pair holds tuples, so that pairs hash)."""
    return NeighbourPair(tuple(c.tolist()), tuple(c2.tolist()), family)


def _dedupe(pairs):
    seen = set()
    out = []
    for pair in pairs:
        key = frozenset([pair.counts, pair.counts2])
        if pair.counts != pair.counts2 and key not in seen:
            seen.add(key)
            out.append(pair)
    return out


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
                pairs.append(_array_pair(c, c2, family))
    return _dedupe(pairs)


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
                pairs.append(_array_pair(c, c2, family))
    return _dedupe(pairs)


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
                pairs.append(_array_pair(c, c2, family))
    return _dedupe(pairs)


def relation_pairs(counts, relation, family=None) -> list[NeighbourPair]:
    """The structured neighbours of ``counts`` under ``relation`` (the family for its kind)."""
    named = {} if family is None else {"family": family}
    if isinstance(relation, BoundedChange):
        return bounded_change_pairs(counts, relation.max_change, **named)
    if isinstance(relation, Substitute):
        return substitute_pairs(counts, relation.max_items, **named)
    return add_remove_pairs(counts, relation.max_items, **named)


def restricted_domain_pairs(d: int, kbar: int, relation=None, heights=(0, 4, 16)):
    """Pairs that target mechanisms looking only at the top ``k̄ + 1`` counts.

    Base: the top ``k̄`` items at height ``h + 1`` (or ``h + 1 + k̄ − 1 − i``,
    gaps of 1), the (k̄+1)-th item tied with the k̄-th or one below, the rest
    at 0 or ``h``. Moves push the item at the cut in or out of the domain, or
    the k̄-th item down, as the relation allows.
    """
    relation = relation if relation is not None else AddRemoveUser()
    if d < kbar + 1:
        raise ValueError(f"restricted_domain_pairs needs d >= kbar + 1 = {kbar + 1}, got d={d}")
    pairs = []
    for h in heights:
        for staircase in (False, True):
            for gap in (0, 1):
                for rest in (0, h):
                    c = np.full(d, rest, dtype=np.int64)
                    if staircase:
                        c[:kbar] = h + 1 + np.arange(kbar - 1, -1, -1)
                    else:
                        c[:kbar] = h + 1
                    c[kbar] = c[kbar - 1] - gap
                    c = np.minimum(c, np.maximum(c, 0))
                    for i, sign in ((kbar, 1), (kbar - 1, -1), (kbar, -1), (kbar - 1, 1)):
                        c2 = c.copy()
                        c2[i] += sign
                        if np.all(c2 >= 0) and is_neighbour(c, c2, relation):
                            pairs.append(_array_pair(c, c2, "restricted domain"))
                    if isinstance(relation, (BoundedChange, Substitute)):
                        # one record moves from the k̄-th item to the one at the cut
                        c2 = c.copy()
                        c2[kbar] += 1
                        c2[kbar - 1] -= 1
                        if np.all(c2 >= 0):
                            pairs.append(_array_pair(c, c2, "restricted domain"))
                    elif relation.max_items is None or relation.max_items >= 2:
                        # One user removed from the whole top k̄ (at most Δ of it).
                        limit = (
                            kbar if relation.max_items is None else min(kbar, relation.max_items)
                        )
                        c2 = c.copy()
                        c2[kbar - limit : kbar] -= 1
                        if np.all(c2 >= 0):
                            pairs.append(_array_pair(c, c2, "restricted domain"))
    return _dedupe(pairs)


def threshold_offset(mech, d: int):
    """How far above ``h_(k̄+1)`` ``mech`` puts a FIXED (noise-free) threshold, or None.

    Read from what the mechanism exposes, never guessed: a numeric ``tau``
    ([`mechanisms.FixedThreshold`][mechanisms.FixedThreshold], also through ``framework``). Noisy
    thresholds (LimitDomain, TopStable, the restricted-domain framework) get no
    ladder on purpose: their block-at-threshold pair wins screening on a few
    hundred samples but confirms poorly, because the threshold noise spreads
    the likelihood ratio. Measured on the default audit of LimitDomain(3, 10,
    ε=1, δ=1e-6), seeds 0-2: ε lower bound 1.79 / 1.59 / 1.95 without the
    ladder, 0.92 / 0.86 / 0.83 with it (rungs at its threshold offset 15.9).
    ``d`` is accepted for hooks that need the domain size.
    """
    for obj in (mech, getattr(mech, "framework", None)):
        tau = getattr(obj, "tau", None) if obj is not None else None
        if isinstance(tau, (int, float, np.floating)) and np.isfinite(tau) and tau > 0:
            return float(tau)
    return None


def threshold_ladder_pairs(d: int, kbar: int, offset: float, relation=None, rungs=(0, 1)):
    """Pairs around a threshold ``offset`` above ``h_(k̄+1)``, for the limited-domain tests.

    Base: the top ``k̄`` items at height ``⌊offset⌋ + r`` for ``r`` in
    ``rungs``, the rest at 0 (so ``h_(k̄+1) = 0``). Moves: one user removed
    from the whole block (its top Δ items when the relation restricts users),
    or added to item ``k̄ + 1`` (the threshold rises by one). At height
    ``⌊offset⌋`` every block item passes a noise-free threshold with
    probability ``P[noise > frac(offset)]`` against ``P[noise > frac + 1]``,
    the largest per-item likelihood ratio with the largest probability: the
    ε-type witness "every item reported" of fixed-threshold tests.
    """
    relation = relation if relation is not None else AddRemoveUser()
    if d < kbar + 1:
        raise ValueError(f"threshold_ladder_pairs needs d >= kbar + 1 = {kbar + 1}, got d={d}")
    base_height = int(np.floor(offset))
    pairs = []
    for r in rungs:
        h = base_height + int(r)
        if h < 1:
            continue
        c = np.zeros(d, dtype=np.int64)
        c[:kbar] = h
        moves = []
        if isinstance(relation, BoundedChange):
            block = np.zeros(d, dtype=np.int64)
            block[:kbar] = -1
            moves.append(block)
        elif isinstance(relation, Substitute):
            # a record leaves the block's last items for items below the cut
            limit = min(kbar, d - kbar)
            limit = limit if relation.max_items is None else min(limit, relation.max_items)
            block = np.zeros(d, dtype=np.int64)
            block[kbar - limit : kbar] = -1
            block[kbar : kbar + limit] = 1
            moves.append(block)
        else:
            limit = kbar if relation.max_items is None else min(kbar, relation.max_items)
            block = np.zeros(d, dtype=np.int64)
            block[:limit] = -1
            moves.append(block)
        up = np.zeros(d, dtype=np.int64)
        up[kbar] = 1
        moves.append(up)
        for v in moves:
            c2 = c + v
            if np.all(c2 >= 0) and is_neighbour(c, c2, relation):
                pairs.append(_array_pair(c, c2, "threshold ladder"))
    return _dedupe(pairs)


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
            pairs.append(_array_pair(c, c2, "random"))
    return _dedupe(pairs)


def explicit_pairs(pairs, relation=None) -> list[NeighbourPair]:
    """The user's ``[(counts, counts2), ...]``; each is checked against ``relation`` if given."""
    out = []
    for item in pairs:
        pair = item if isinstance(item, NeighbourPair) else NeighbourPair(item[0], item[1], NAMED)
        if relation is not None and not is_neighbour(pair.counts, pair.counts2, relation):
            raise ValueError(f"pair {pair} is not a pair of neighbours under {relation}")
        out.append(pair)
    if not out:
        raise ValueError("pairs must hold at least one (counts, counts2) pair")
    return out


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
    [`threshold_offset`][dpaudit.neighbours.pairs.threshold_offset]) is known too, and ``n_random``
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
    return _dedupe(pairs)
