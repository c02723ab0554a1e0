"""Pair families aimed at the cut of top-k̄ mechanisms: the restricted domain, the threshold ladder.

Mechanisms that look only at the top ``k̄ + 1`` counts (seed 001's framework F, LimitDomain,
TopStable) are most sensitive where an item sits at the cut; those that test counts against a
fixed threshold ``τ`` above ``h_(k̄+1)``, where the top block stands at ``τ``.
[`default_pairs`][dpaudit.neighbours.pairs.default_pairs] adds these families when ``k̄`` is known.
"""

from __future__ import annotations

import numpy as np

from mechanisms.claims import AddRemoveUser, BoundedChange, Substitute

from .neighbour_pair import array_pair, unique_pairs
from .relations import is_neighbour

__all__ = ["restricted_domain_pairs", "threshold_ladder_pairs", "threshold_offset"]


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
                            pairs.append(array_pair(c, c2, "restricted domain"))
                    if isinstance(relation, (BoundedChange, Substitute)):
                        # one record moves from the k̄-th item to the one at the cut
                        c2 = c.copy()
                        c2[kbar] += 1
                        c2[kbar - 1] -= 1
                        if np.all(c2 >= 0):
                            pairs.append(array_pair(c, c2, "restricted domain"))
                    elif relation.max_items is None or relation.max_items >= 2:
                        # One user removed from the whole top k̄ (at most Δ of it).
                        limit = (
                            kbar if relation.max_items is None else min(kbar, relation.max_items)
                        )
                        c2 = c.copy()
                        c2[kbar - limit : kbar] -= 1
                        if np.all(c2 >= 0):
                            pairs.append(array_pair(c, c2, "restricted domain"))
    return unique_pairs(pairs)


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
                pairs.append(array_pair(c, c2, "threshold ladder"))
    return unique_pairs(pairs)
