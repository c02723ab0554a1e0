"""The reduction of every neighbouring pair of LimitDom to finitely many shapes over a gap box.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 1: LimitDom_{k,k̄} draws a Plackett–Luce prefix over
the true top-k̄ items and ⊥ with weights ``exp(ε (score − h_(k̄+1)))``, the ⊥ score being
``h_(k̄+1) + b`` with ``b = 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε`` (line 2). The law therefore depends
only on which items are the top k̄ and on the differences of the top k̄ + 1 counts (shift
invariance), and ``b`` depends only on d. The argument below is docs/certify.md §2 in short.

Let ``D`` have counts ``h_1 >= ... >= h_d`` in rank order (ties to the lower id), ``h = h_(k̄+1)``,
gaps ``g_i = h_i − h_(i+1)`` (i = 1..k̄), and ``D' = D + 1_S`` (every add/remove pair is such a
pair read in one direction or the other, and δ is taken over both directions).

1. ``h' = h'_(k̄+1) ∈ {h, h + 1}``: the top k̄ + 1 items of D have D' counts >= h, and at most k̄
   items have D count > h, so at most k̄ have D' count > h + 1.
2. An item is a candidate or the (k̄+1)-th of D' only if its D' count is >= h, so only the top
   k̄ + 1 items of D and the *fringe* — items of rank > k̄ + 1 with D count h or h − 1 that are in
   S — matter. A fringe item not in S keeps its count: at h − 1 it is below h'; at h its id is
   larger than every top item at h (it ranks below them in D), and those top items all have D'
   count >= h, so it ranks below k̄ + 1 items in D'. Of the fringe at h (D' count h + 1) and at
   h − 1 (D' count h) at most k̄ + 1 of each can reach the top k̄ + 1 of D'.
3. With every gap classed as 0, 1 or >= 2 (and the x_i = 1_{i ∈ S}), the D' order is fixed up to
   ties: two top items i < j differ in D' by ``g_i + ... + g_(j−1) + x_i − x_j``, which is >= 1
   as soon as one of those gaps is >= 2, and a top item with a gap >= 2 below it has D' count
   >= h + 2 > any fringe item. Items with equal D' count come from two chains — D count c with
   x = 0 and D count c − 1 with x = 1 — each kept in D order (equal D counts are ordered by id);
   the only tie that changes the law is at the k̄-th place, where a shape also fixes how many of
   the k̄-th level's items each chain supplies (``split``). Treating every such interleaving as
   possible only adds pairs, so the cover stays sound; a shape whose interleaving no id order
   realises is marked ``realisable = False`` and never supplies a lower bound.

So the pairs of LimitDom on d items are covered by the finitely many ``Shape`` values
([`cover`][dpaudit.exact.certify.cover] lists them), each with the box ``g_i ∈ [2, ∞]`` (integers) of its free gaps; within a shape every score of either law is
affine in the free gaps, which is what [`bounds`][dpaudit.exact.certify.bounds] bounds.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from mechanisms import BOTTOM, LimitDomain

from ..gumbel_laws import limit_domain_size_term

__all__ = [
    "LimitDomainModel",
    "Score",
    "Shape",
]

#: Gap classes: exactly 0, exactly 1, or free in [2, ∞].
FREE = 2


@dataclass(frozen=True)
class LimitDomainModel:
    """LimitDom_{k,k̄} on a family of histograms, as the certifier sees it.

    Parameters
    ----------
    k, kbar, epsilon : as in [`LimitDomain`][mechanisms.limit_domain.LimitDomain].
    bottom : the ⊥ score minus ``h_(k̄+1)``: ``1 + ln(min{Δ, k̄, d − k̄}/δ)/ε`` for LimitDom, 1 for a
        threshold without its log term.
    d : number of items, or None for every d >= 2 k̄ (where the size term is ``min{Δ, k̄}``).
    max_items : Δ, the most items one user touches (None: unrestricted).
    """

    k: int
    kbar: int
    epsilon: float
    bottom: float
    d: int | None = None
    max_items: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.kbar:
            raise ValueError(f"need 1 <= k <= kbar, got k={self.k}, kbar={self.kbar}")
        if self.d is not None and self.d < self.kbar + 1:
            raise ValueError(f"d must be >= kbar + 1 = {self.kbar + 1}, got {self.d}")

    @classmethod
    def from_mechanism(cls, mechanism: LimitDomain, d: int | None = None) -> LimitDomainModel:
        """The model of a ``LimitDomain`` on ``d`` items (None: every d >= 2 k̄)."""
        if type(mechanism) is not LimitDomain:
            raise TypeError(f"certification knows LimitDomain only, got {type(mechanism).__name__}")
        domain = 2 * mechanism.kbar if d is None else d
        size = limit_domain_size_term(domain, mechanism.kbar, mechanism.max_items)
        bottom = 1.0 + math.log(size / mechanism.delta) / mechanism.epsilon
        return cls(mechanism.k, mechanism.kbar, mechanism.epsilon, bottom, d, mechanism.max_items)

    @property
    def fringe_room(self) -> int:
        """Most fringe items in all (both kinds): d − k̄ − 1, or 2 (k̄ + 1) for every d."""
        return 2 * (self.kbar + 1) if self.d is None else self.d - self.kbar - 1

    def to_dict(self) -> dict:
        return {
            "k": self.k,
            "kbar": self.kbar,
            "epsilon": self.epsilon,
            "bottom": self.bottom,
            "d": self.d,
            "max_items": self.max_items,
        }


@dataclass(frozen=True)
class Score:
    """An affine score ``const + Σ coefs[i] · g_free[i]`` (coefficients 0 or ±1)."""

    const: float
    coefs: tuple[int, ...]

    def minus(self, other: Score) -> Score:
        return Score(
            self.const - other.const, tuple(a - b for a, b in zip(self.coefs, other.coefs))
        )


@dataclass(frozen=True)
class Law:
    """A Plackett–Luce prefix law: candidate labels and scores, ⊥ last; ``k`` draws."""

    labels: tuple[int, ...]
    scores: tuple[Score, ...]
    k: int

    def outcomes(self) -> Iterator[tuple[int, ...]]:
        """Outcomes as candidate positions: k items, or j < k items then ⊥ (the last position)."""
        bottom = len(self.labels) - 1
        items = range(bottom)
        for length in range(self.k):
            for prefix in itertools.permutations(items, length):
                yield (*prefix, bottom)
        yield from itertools.permutations(items, self.k)


@dataclass(frozen=True)
class Shape:
    """One combinatorial case of a pair ``(D, D + 1_S)``; see the module docstring.

    Parameters
    ----------
    classes : per gap g_1..g_k̄: 0, 1 or FREE (>= 2).
    x : per top item of D (ranks 1..k̄+1): 1 if in S.
    above, below : fringe items in S with D count h (``above``) and h − 1 (``below``).
    split : at the k̄-th level of D', how many of the x = 0 chain are candidates (−1: no tie).
    """

    classes: tuple[int, ...]
    x: tuple[int, ...]
    above: int
    below: int
    split: int

    @property
    def free(self) -> tuple[int, ...]:
        """Indices of the free gaps (the coordinates of the box)."""
        return tuple(i for i, c in enumerate(self.classes) if c == FREE)

    def to_dict(self) -> dict:
        return {
            "classes": list(self.classes),
            "x": list(self.x),
            "above": self.above,
            "below": self.below,
            "split": self.split,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Shape:
        return cls(
            tuple(int(c) for c in data["classes"]),
            tuple(int(v) for v in data["x"]),
            int(data["above"]),
            int(data["below"]),
            int(data["split"]),
        )

    # ------------------------------------------------------------ structure

    def _items(self) -> list[tuple[str, int]]:
        kbar = len(self.classes)
        return (
            [("top", i) for i in range(kbar + 1)]
            + [("above", j) for j in range(self.above)]
            + [("below", j) for j in range(self.below)]
        )

    def _rep_count(self, item: tuple[str, int]) -> tuple[int, int]:
        """(D count − h, x) at the representative point (free gaps = 2)."""
        kind, i = item
        if kind == "top":
            return sum(max(c, 0) for c in self.classes[i:]), self.x[i]
        return (0, 1) if kind == "above" else (-1, 1)

    def _levels(self) -> list[tuple[int, list, list]]:
        """D' levels, highest first: (count − h, x = 0 chain, x = 1 chain), chains in D order."""
        levels: dict[int, tuple[list, list]] = {}
        for item in self._items():
            count, x = self._rep_count(item)
            chains = levels.setdefault(count + x, ([], []))
            chains[x].append(item)
        return [(c, *levels[c]) for c in sorted(levels, reverse=True)]

    def boundary(self) -> tuple[list, int, list[int]]:
        """``(candidates of D' above the k̄-th level's tie, h' − h, possible splits)``.

        The splits are ``[-1]`` when there is no tie to split (the candidates are then all k̄).
        """
        kbar = len(self.classes)
        filled: list = []
        levels = self._levels()
        for index, (count, zero, one) in enumerate(levels):
            n = len(zero) + len(one)
            if len(filled) + n <= kbar:
                filled += zero + one
                if len(filled) == kbar:
                    return filled, levels[index + 1][0], [-1]
                continue
            r = kbar - len(filled)
            splits = list(range(max(0, r - len(one)), min(r, len(zero)) + 1))
            if not one or not zero:  # one chain only: no choice
                return filled + zero[:r] + one[:r], count, [-1]
            return filled, count, splits
        raise AssertionError("D' has fewer than k̄ + 1 relevant items")

    def candidates_after(self) -> tuple[list, int]:
        """The k̄ candidates of D' (items) and ``h' − h`` for this shape's split."""
        filled, lift, splits = self.boundary()
        if splits == [-1]:
            return filled, lift
        kbar = len(self.classes)
        r = kbar - len(filled)
        level = next(lv for lv in self._levels() if lv[0] == lift)
        return filled + level[1][: self.split] + level[2][: r - self.split], lift

    # ------------------------------------------------------------------ laws

    def _gap_score(self, start: int) -> Score:
        """``G = g_start + ... + g_k̄`` (D count − h of the top item at 0-based rank ``start``)."""
        free = self.free
        const = sum(c for c in self.classes[start:] if c != FREE)
        return Score(float(const), tuple(1 if f >= start else 0 for f in free))

    def label(self, item: tuple[str, int]) -> int:
        """Model label of an item: top ranks 0..k̄, then the fringe at h, then at h − 1."""
        kind, i = item
        kbar = len(self.classes)
        if kind == "top":
            return i
        return kbar + 1 + i if kind == "above" else kbar + 1 + self.above + i

    def laws(self, model: LimitDomainModel) -> tuple[Law, Law]:
        """The laws on D and on D' with scores affine in the free gaps (⊥ labelled BOTTOM)."""
        return _laws(self, model)

    def _build_laws(self, model: LimitDomainModel) -> tuple[Law, Law]:
        kbar = model.kbar
        nfree = len(self.free)
        bottom = Score(model.bottom, (0,) * nfree)
        law_d = Law(
            tuple(range(kbar)) + (BOTTOM,),
            tuple(self._gap_score(i) for i in range(kbar)) + (bottom,),
            model.k,
        )
        after, lift = self.candidates_after()
        scores = []
        for item in after:
            kind, i = item
            if kind == "top":
                s = self._gap_score(i)
                scores.append(Score(s.const + self.x[i] - lift, s.coefs))
            else:
                scores.append(Score((1.0 if kind == "above" else 0.0) - lift, (0,) * nfree))
        law_d2 = Law(
            tuple(self.label(item) for item in after) + (BOTTOM,), (*scores, bottom), model.k
        )
        return law_d, law_d2

    # ----------------------------------------------------------- realisation

    def realise(self, model: LimitDomainModel, gaps: dict[int, int]) -> tuple | None:
        """An actual pair ``(D, D', ids)`` at integer ``gaps`` for the free gaps, or None.

        ``ids[label]`` is the item id of each model label. Ids come from a topological order of
        the constraints (equal D counts in D order; at the k̄-th level of D' the chosen
        candidates before the others); None if they are cyclic (the shape is not realisable).
        """
        items = self._items()
        index = {item: n for n, item in enumerate(items)}
        before: dict[int, set[int]] = {n: set() for n in range(len(items))}
        by_count: dict[int, list] = {}
        for item in items:
            by_count.setdefault(self._rep_count(item)[0], []).append(item)
        for chain in by_count.values():
            for u, v in itertools.pairwise(chain):
                before[index[v]].add(index[u])
        filled, lift, splits = self.boundary()
        if splits != [-1]:
            chosen = set(self.candidates_after()[0]) - set(filled)
            level = next(lv for lv in self._levels() if lv[0] == lift)
            rest = [it for it in level[1] + level[2] if it not in chosen]
            for u in chosen:
                for v in rest:
                    before[index[v]].add(index[u])
        order: list[int] = []
        ready = sorted(n for n, deps in before.items() if not deps)
        while ready:
            n = ready.pop(0)
            order.append(n)
            for m, deps in before.items():
                if n in deps:
                    deps.discard(n)
                    if not deps and m not in order and m not in ready:
                        ready.append(m)
            ready.sort()
        if len(order) < len(items):
            return None
        d = model.d if model.d is not None else max(2 * model.kbar, len(items))
        base = 2  # h: fringe at h − 1 >= 1 stays above the other items (count 0)
        counts = np.zeros(d, dtype=np.int64)
        counts2 = np.zeros(d, dtype=np.int64)
        ids = {}
        for position, n in enumerate(order):
            item = items[n]
            kind, i = item
            if kind == "top":
                value = base + sum(
                    gaps[j] if c == FREE else c for j, c in enumerate(self.classes) if j >= i
                )
                step = self.x[i]
            else:
                value, step = (base, 1) if kind == "above" else (base - 1, 1)
            counts[position] = value
            counts2[position] = value + step
            ids[self.label(item)] = position
        return counts, counts2, ids

    @property
    def realisable(self) -> bool:
        """Whether some id order realises this shape (the free gaps do not matter)."""
        model = LimitDomainModel(1, len(self.classes), 1.0, 1.0)
        return self.realise(model, dict.fromkeys(self.free, 2)) is not None


@functools.lru_cache(maxsize=1 << 16)
def _laws(shape: Shape, model: LimitDomainModel) -> tuple[Law, Law]:
    return shape._build_laws(model)
