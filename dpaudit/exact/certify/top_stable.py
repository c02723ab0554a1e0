"""TopStable's neighbouring pairs as finitely many shapes, and a bound on each box of gaps.

TS is seed 000 (000_4bf15007bce596ab.txt) Alg. 3, with ε_EM = 0 (a uniform k-subset when the
first stable position i exceeds k, lines 10-11). Its law depends on a histogram only through the
top k̄ ids in rank order and the gaps ``q_i = h_i − h_(i+1) − 1`` (line 6); see
``docs/certify.md``, "TopStable", for the reduction and its tests. Here:

* [`enumerate_shapes`][dpaudit.exact.certify.top_stable.enumerate_shapes] lists every pair
  ``D' = D + 1_S`` (on d >= k̄ items) as a *shape*: the class of each gap of D (−1, 0 or free
  >= 1), the top k̄ of D' as ranks of D (fringe items get labels >= k̄ + 1), and each gap of D'
  as a constant or as the same free gap of D plus a constant offset;
* [`TopStableBounds`][dpaudit.exact.certify.top_stable_bounds.TopStableBounds] (its own module) bounds the ε at δ of
  every pair of a shape whose free gaps lie in a box, from the exact position probabilities
  (``dpaudit.exact.laplace_calculus``, mpmath) at the box's corners: each position probability
  is monotone in every gap.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

__all__ = [
    "INF",
    "TopStableShape",
    "canonical_shapes",
    "enumerate_shapes",
    "shape_of_pair",
]

#: An infinite gap (the test at that position always passes).
INF = math.inf

_FREE = None


@dataclass(frozen=True)
class TopStableShape:
    """One family of add pairs ``D' = D + 1_S``: fixed structure, free gaps of D in a box.

    Parameters
    ----------
    gaps : per position i = 1..k̄, ``q_i`` of D: −1 or 0, or ``None`` for a free gap (>= 1).
    top : the top k̄ items of D' in rank order, each as its rank in D (0-based; k̄ and above are
        the (k̄+1)-th item of D and fringe items, distinct labels).
    offsets : per position, ``q'_i`` of D' is ``q_i + offsets[i]`` when ``gaps[i]`` is free,
        else the constant ``offsets[i]``.
    """

    gaps: tuple[int | None, ...]
    top: tuple[int, ...]
    offsets: tuple[int, ...]

    @property
    def free(self) -> tuple[int, ...]:
        """Positions (0-based) whose gap is free."""
        return tuple(i for i, g in enumerate(self.gaps) if g is _FREE)

    def q(self, point: dict[int, float]) -> tuple[float, ...]:
        """``q`` of D at the free gaps ``point`` (position -> value, INF allowed)."""
        return tuple(point[i] if g is _FREE else g for i, g in enumerate(self.gaps))

    def q_prime(self, point: dict[int, float]) -> tuple[float, ...]:
        """``q'`` of D' at the free gaps ``point``."""
        return tuple(
            point[i] + o if g is _FREE else o
            for i, (g, o) in enumerate(zip(self.gaps, self.offsets))
        )

    @property
    def stable_top(self) -> bool:
        """Whether ``f_k̄`` is the same set in D and D'."""
        return set(self.top) == set(range(len(self.gaps)))

    def to_list(self) -> list:
        return [list(self.gaps), list(self.top), list(self.offsets)]

    @staticmethod
    def from_list(data) -> TopStableShape:
        return TopStableShape(tuple(data[0]), tuple(data[1]), tuple(data[2]))


def _merges(a: list, b: list):
    """Every interleaving of the chains ``a`` and ``b`` (each kept in order)."""
    n = len(a) + len(b)
    for positions in itertools.combinations(range(n), len(a)):
        out, ia, ib = [], 0, 0
        chosen = set(positions)
        for p in range(n):
            if p in chosen:
                out.append(a[ia])
                ia += 1
            else:
                out.append(b[ib])
                ib += 1
        yield out


def _shapes_of(classes, kbar: int, realised_free: int):
    """(shape, realised counts) for every S and fringe with D's gap classes ``classes``.

    Items: D ranks 0..k̄ (the top k̄ + 1), then fringe items at count h_(k̄+1) (ranked below the
    (k̄+1)-th by id) and at h_(k̄+1) − 1, all in S. Counts are relative to h_(k̄+1) = 0, free
    gaps realised as ``realised_free``.
    """
    counts = [0] * (kbar + 1)
    for i in range(kbar - 1, -1, -1):
        g = classes[i]
        counts[i] = counts[i + 1] + (realised_free + 1 if g is _FREE else g + 1)
    for x_top in itertools.product((0, 1), repeat=kbar + 1):
        for n_eq in range(kbar + 2):
            for n_lo in range(kbar + 2 - n_eq):
                items = list(range(kbar + 1 + n_eq + n_lo))
                c = counts + [0] * n_eq + [-1] * n_lo
                x = list(x_top) + [1] * (n_eq + n_lo)
                levels: dict[int, tuple[list, list]] = {}
                for item in items:  # D rank order: chains keep it
                    cp = c[item] + x[item]
                    chains = levels.setdefault(cp, ([], []))
                    chains[x[item]].append(item)
                ordered_levels = sorted(levels, reverse=True)
                merge_lists = [list(_merges(*levels[lv])) for lv in ordered_levels]
                for choice in itertools.product(*merge_lists):
                    order = [item for block in choice for item in block][: kbar + 1]
                    new = [c[i] + x[i] for i in order]
                    q_new = [new[j] - new[j + 1] - 1 for j in range(kbar)]
                    q_old = [counts[j] - counts[j + 1] - 1 for j in range(kbar)]
                    offsets = tuple(
                        q_new[j] - q_old[j] if classes[j] is _FREE else q_new[j]
                        for j in range(kbar)
                    )
                    yield TopStableShape(tuple(classes), tuple(order[:kbar]), offsets)


def enumerate_shapes(kbar: int) -> list[TopStableShape]:
    """Every shape of an add pair on d >= k̄ items whose two laws can differ (sorted, unique).

    Tie-breaks between a D count c not in S and a D count c − 1 in S (equal in D') are left
    free: every interleaving is listed, which can only add pairs. Free gaps (>= 2 in counts)
    keep the order across them, so a shape does not depend on their values; the enumeration
    checks this by realising them as 2 and 3.
    """
    found: set[TopStableShape] = set()
    for classes in itertools.product((-1, 0, _FREE), repeat=kbar):
        a = list(_shapes_of(classes, kbar, 1))
        b = list(_shapes_of(classes, kbar, 2))
        if a != b:
            raise AssertionError(f"a shape depends on a free gap's value: {classes}")
        for shape in a:
            same = shape.top == tuple(range(kbar)) and all(
                o == (0 if g is _FREE else g) for g, o in zip(shape.gaps, shape.offsets)
            )
            if not same:
                found.add(shape)
    return sorted(
        found, key=lambda s: (tuple(-2 if g is None else g for g in s.gaps), s.top, s.offsets)
    )


def shape_of_pair(mechanism, counts, counts2) -> tuple[TopStableShape, dict[int, int]] | None:
    """The shape and free-gap point of an add pair (``counts2 = counts + 1_S``), for tests.

    Returns None when the two laws' keys (top k̄ ids and gaps) coincide.
    """
    top, q = mechanism.positions(counts)
    top2, q2 = mechanism.positions(counts2)
    kbar = mechanism.kbar
    ids = [int(i) for i in top.items[:kbar]]
    ids2 = [int(i) for i in top2.items[:kbar]]
    if ids == ids2 and list(q) == list(q2):
        return None
    label = {item: r for r, item in enumerate(ids)}
    extra = iter(range(kbar, 10**9))
    fourth = int(top.items[kbar]) if len(top.items) > kbar else None
    if fourth is not None:
        label[fourth] = next(extra)
    labels = []
    for item in ids2:
        if item not in label:
            label[item] = next(extra)
        labels.append(label[item])
    gaps = tuple(int(v) if v <= 0 else None for v in q)
    offsets = tuple(int(b - a) if g is None else int(b) for g, a, b in zip(gaps, q, q2))
    point = {i: int(v) for i, v in enumerate(q) if gaps[i] is None}
    return TopStableShape(gaps, tuple(labels), offsets), point


def _canonical(shape: TopStableShape, kbar: int) -> TopStableShape:
    """Relabel the non-top labels of ``shape.top`` in order of appearance (k̄, k̄+1, ...)."""
    extra, relabel = iter(range(kbar, 10**9)), {}
    top = []
    for t in shape.top:
        if t < kbar:
            top.append(t)
        else:
            if t not in relabel:
                relabel[t] = next(extra)
            top.append(relabel[t])
    return TopStableShape(shape.gaps, tuple(top), shape.offsets)


def canonical_shapes(kbar: int) -> list[TopStableShape]:
    """``enumerate_shapes`` with fringe labels renamed in order of appearance (the law only sees
    which labels are equal), deduplicated."""
    return sorted(
        {_canonical(s, kbar) for s in enumerate_shapes(kbar)},
        key=lambda s: (tuple(-2 if g is None else g for g in s.gaps), s.top, s.offsets),
    )
