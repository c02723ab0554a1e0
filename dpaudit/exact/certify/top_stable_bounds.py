"""Bounds on TopStable's ε at δ over a box of free gaps, from exact position probabilities.

TS is seed 000 (000_4bf15007bce596ab.txt) Alg. 3 with ε_EM = 0;
[`top_stable`][dpaudit.exact.certify.top_stable] reduces its neighbouring pairs to shapes, and
[`TopStableBounds`][dpaudit.exact.certify.top_stable_bounds.TopStableBounds] bounds every pair
of a shape whose free gaps lie in a box, at the box's corners (each position probability is
monotone in every gap; ``docs/certify.md``, "TopStable").
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from math import comb

import mpmath

from .. import laplace_calculus as lc
from ..law import working_precision
from .top_stable import _FREE, INF, TopStableShape

__all__ = ["TopStableBounds"]


def _outward(law: dict) -> dict:
    """``(lo, hi)`` mpmath ranges as doubles rounded outward (relative 1e-15, floor 0 / cap 1)."""
    return {
        o: (max(0.0, float(lo) * (1 - 1e-15)), min(1.0, float(hi) * (1 + 1e-15) + 1e-300))
        for o, (lo, hi) in law.items()
    }


class TopStableBounds:
    """Exact position probabilities of TS and bounds on ε at δ over boxes of free gaps.

    ``π_i(q)`` (i = 1..k̄) is the probability that position i is the first to pass (tests at
    k̄, ..., i), ``π_0`` that none passes (seed 000 Alg. 3 line 7; one shared threshold). Each
    is an exact threshold pattern (``laplace_calculus.probability_threshold_pattern``, mpmath
    at the working precision); ``π_i`` rises in ``q_i``, falls in ``q_j`` for j > i and does not
    depend on ``q_j`` for j < i, and ``π_0`` falls in every gap. A gap of INF passes surely.
    """

    def __init__(self, mechanism):
        if mechanism.epsilon_em != 0:
            raise ValueError("only TopStable with epsilon_em = 0 (a uniform k-subset) is modelled")
        self.k, self.kbar = mechanism.k, mechanism.kbar
        self.threshold = Fraction(mechanism.threshold)
        self.threshold_scale = Fraction(mechanism.threshold_scale())
        self.gap_scale = Fraction(mechanism.gap_scale())
        self.half_epsilon2 = mechanism.epsilon2 / 2.0
        self._cache: dict = {}

    # -- exact position probabilities ---------------------------------------------------
    def _pattern(self, tested: tuple, passes_last: bool) -> mpmath.mpf:
        """P[tests on ``tested`` (in order) fail, and the last passes iff ``passes_last``]."""
        key = (tested, passes_last)
        if key not in self._cache:
            means, above = [], []
            value = None
            for j, qv in enumerate(tested):
                last = j == len(tested) - 1
                up = passes_last and last
                if qv == INF:
                    if not up:
                        value = mpmath.mpf(0)  # a test with an infinite gap cannot fail
                        break
                    continue  # it surely passes
                means.append(int(qv))
                above.append(up)
            if value is None:
                with working_precision():
                    if not means:
                        value = mpmath.mpf(1)
                    else:
                        value = lc.probability_threshold_pattern(
                            means, self.gap_scale, above, self.threshold, self.threshold_scale
                        )
            self._cache[key] = value
        return self._cache[key]

    def position(self, q: tuple, i: int) -> mpmath.mpf:
        """``π_i`` at gaps ``q`` (0-based ``q[j]`` is position j + 1; i = 0 is ⊥)."""
        tested = tuple(q[::-1])  # the test order: positions k̄, ..., 1
        if i == 0:
            return self._pattern(tested, False)
        return self._pattern(tested[: self.kbar - i + 1], True)

    def positions(self, q: tuple) -> list[mpmath.mpf]:
        """``[π_0, π_1, ..., π_k̄]`` at gaps ``q``."""
        return [self.position(q, i) for i in range(self.kbar + 1)]

    def position_ranges(self, lo: tuple, hi: tuple) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
        """``(min, max)`` of each ``π_i`` over the box ``lo <= q <= hi`` (monotonicity)."""
        kbar = self.kbar
        ranges = []
        for i in range(kbar + 1):
            if i == 0:
                low_at, high_at = hi, lo
            else:
                p = i - 1  # 0-based position
                low_at = tuple(lo[j] if j == p else hi[j] if j > p else lo[j] for j in range(kbar))
                high_at = tuple(hi[j] if j == p else lo[j] for j in range(kbar))
            ranges.append((self.position(low_at, i), self.position(high_at, i)))
        return ranges

    # -- laws --------------------------------------------------------------------------
    def law_ranges(self, labels: tuple, ranges) -> dict:
        """``{outcome: (lo, hi)}`` for the TS law whose top k̄ are ``labels`` (rank order)."""
        k = self.k
        out: dict = {}

        def add(key, lo, hi):
            a, b = out.get(key, (mpmath.mpf(0), mpmath.mpf(0)))
            out[key] = (a + lo, b + hi)

        for i in range(1, self.kbar + 1):
            lo, hi = ranges[i]
            f_i = labels[:i]
            if i <= k:
                add(frozenset(f_i), lo, hi)
            else:
                n = comb(i, k)
                for subset in itertools.combinations(f_i, k):
                    add(frozenset(subset), lo / n, hi / n)
        add("bottom", *ranges[0])
        return out

    @staticmethod
    def delta_bound(law_a: dict, law_b: dict, epsilon: float) -> float:
        """Upper bound on ``max`` over both directions of ``Σ_o max(0, A(o) − e^ε B(o))``.

        The laws hold ``(lo, hi)`` as floats already rounded outward (``_outward``); ``e^ε`` is
        taken 1e-15 low, and the sum 1e-13 high plus 2e-15 of the sum of the ``hi`` (a
        difference that cancels errs by a few ulps of ``hi``), above the rounding of a few
        double operations.
        """
        factor = math.exp(epsilon) * (1 - 1e-15)
        worst = 0.0
        for p, r in ((law_a, law_b), (law_b, law_a)):
            total, size = 0.0, 0.0
            for o, (_, hi) in p.items():
                low = r[o][0] if o in r else 0.0
                total += max(0.0, hi - factor * low)
                size += hi
            # A term that cancels errs by a few ulps of hi, not of itself (3u·hi when
            # e^ε·low <= 2·hi; otherwise the term is 0 exactly and computed <= 0).
            worst = max(worst, total * (1 + 1e-13) + 2e-15 * size)
        return worst

    def tail(self, q: float) -> mpmath.mpf:
        """``φ(q)``: the probability that the test at position k̄ fails at gap ``q``."""
        return self._pattern((q,), False)

    def _collapses(self, shape: TopStableShape, lo: dict, delta: float) -> bool:
        """Whether the collapse gives δ(ε₂/2) <= ``delta`` on the whole box.

        docs/certify.md, "The tail collapses": with ``f_k̄`` stable and ε_EM = 0, δ at any
        ε >= ε₂/2 is at most ``φ(min(q_k̄, q'_k̄))``; it needs ``|q'_k̄ − q_k̄| <= 1``.
        """
        last = self.kbar - 1
        if shape.gaps[last] is not _FREE or not shape.stable_top:
            return False
        if abs(shape.offsets[last]) > 1:
            raise AssertionError(f"a free last gap moved by more than 1: {shape}")
        low = lo[last] + min(0, shape.offsets[last])
        return bool(self.tail(low) <= mpmath.mpf(delta) * (1 - mpmath.mpf(10) ** -20))

    def holds(self, shape: TopStableShape, lo: dict, hi: dict, epsilon: float, delta) -> bool:
        """Whether every pair of ``shape`` in the box has δ(``epsilon``) <= ``delta``."""
        if epsilon == INF:
            return True
        if epsilon >= self.half_epsilon2 and self._collapses(shape, lo, delta):
            return True
        law_a, law_b = self.box_laws(shape, lo, hi)
        return self.delta_bound(law_a, law_b, epsilon) <= float(delta)

    def box_laws(self, shape: TopStableShape, lo: dict, hi: dict) -> tuple[dict, dict]:
        """The two laws' ranges over the box of free gaps ``[lo, hi]``."""
        ra = self.position_ranges(shape.q(lo), shape.q(hi))
        rb = self.position_ranges(shape.q_prime(lo), shape.q_prime(hi))
        law_a = self.law_ranges(tuple(range(self.kbar)), ra)
        law_b = self.law_ranges(shape.top, rb)
        return _outward(law_a), _outward(law_b)

    def epsilon_bound(self, shape: TopStableShape, lo: dict, hi: dict, delta: float) -> float:
        """An ε with δ(ε) <= ``delta`` for every pair of ``shape`` in the box (INF if none).

        Uses the collapse (docs/certify.md, "The tail collapses"): when ``f_k̄`` is stable and
        ``φ(min q_k̄ over both sides) <= delta``, ε₂/2 suffices.
        """
        if self._collapses(shape, lo, delta):
            return self.half_epsilon2
        law_a, law_b = self.box_laws(shape, lo, hi)
        target = float(delta)
        if self.delta_bound(law_a, law_b, 60.0) > target:
            return INF
        a, b = 0.0, 1.0
        while self.delta_bound(law_a, law_b, b) > target:
            a, b = b, 2 * b
        if self.delta_bound(law_a, law_b, a) <= target:
            return a
        while b - a > 1e-7 * max(1.0, b):
            mid = 0.5 * (a + b)
            if self.delta_bound(law_a, law_b, mid) <= target:
                b = mid
            else:
                a = mid
        return b
