"""Rigorous δ(ε) and ε(δ) of a region of pairs from its law bounds, and of one pair of point laws.

The hockey-stick divergence ``δ_{A‖B}(ε) = Σ_o max(0, A(o) − e^ε B(o))`` (seed 003,
003_9293f5da18078e1b.txt, §4.1) bounded above over a box of gaps from the bounds of
[`bounds`][dpaudit.exact.certify.bounds] (rounded up by 4-8 ulps, as its module docstring says),
and ε(δ) by bisection on those bounds; ``pair_delta`` and ``pair_epsilon`` are the float values
of the search, not bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .bounds import INF, ULP, LawBounds

__all__ = ["Direction", "delta_upper", "epsilon_upper", "pair_delta", "pair_epsilon"]


@dataclass(frozen=True)
class Direction:
    """Per outcome of one direction ``A‖B``: ``(A_hi, B_lo, B_hi, sup log A/B)``."""

    terms: tuple[tuple[float, float, float, float], ...]

    @classmethod
    def build(cls, a: LawBounds, b: LawBounds, log_ratio: dict[tuple, float]) -> Direction:
        terms = []
        for outcome, (_, a_hi) in a.bounds.items():
            b_lo, b_hi = b.bounds.get(outcome, (0.0, 0.0))
            terms.append((a_hi, b_lo, b_hi, log_ratio.get(outcome, INF)))
        return cls(tuple(terms))

    def delta(self, epsilon: float) -> float:
        """Upper bound on ``sup_box δ_{A‖B}(ε)``, rounded up.

        Per outcome the least of ``A_hi − e^ε B_lo``, ``A_hi (1 − e^{ε − ℓ})`` and
        ``B_hi (e^ℓ − e^ε)`` (ℓ the sup of log A/B; the last two are ``A − e^ε B`` rewritten),
        and 0 when ``ℓ <= ε``.
        """
        scale = math.exp(epsilon) * (1 - 4 * ULP)
        total = 0.0
        size = 0.0
        for a_hi, b_lo, b_hi, ratio in self.terms:
            if ratio <= epsilon * (1 - 4 * ULP) - 4 * ULP:
                continue
            term = a_hi - scale * b_lo
            if not math.isinf(ratio):
                term = min(term, a_hi * -math.expm1(epsilon - ratio))
                if ratio < 709:
                    term = min(term, b_hi * (math.exp(ratio) - scale))
            total += max(0.0, term)
            size += a_hi + scale * b_lo
        return total * (1 + 8 * ULP) + 8 * ULP * size


def delta_upper(forward: Direction, backward: Direction, epsilon: float) -> float:
    """Upper bound on the region's two-sided δ(ε)."""
    return max(forward.delta(epsilon), backward.delta(epsilon))


def _one_way_epsilon(high: dict, low: dict, delta: float) -> float:
    """Smallest ε >= 0 with Σ max(0, high − e^ε low) <= delta (closed form)."""
    infinite = 0.0
    ratios = []
    for outcome, a in high.items():
        b = low.get(outcome, 0.0)
        if a <= 0:
            continue
        if b <= 0:
            infinite += a
        elif a > b:
            ratios.append((math.log(a / b), a, b))
    if infinite > delta:
        return INF
    ratios.sort(reverse=True)
    active_a, active_b = infinite, 0.0
    for index, (_, a, b) in enumerate(ratios):
        active_a += a
        active_b += b
        lower = ratios[index + 1][0] if index + 1 < len(ratios) else 0.0
        if active_a - math.exp(lower) * active_b > delta:
            return max(math.log((active_a - delta) / active_b), lower)
    return 0.0


def epsilon_upper(forward: Direction, backward: Direction, delta: float) -> float:
    """Upper bound on the region's ε at δ: an ε whose rounded-up δ bound is <= ``delta``.

    δ bounds are non-increasing in ε, so bisection on [0, ε₀] with the checked end kept on the
    right side returns an ε that passes the rounded-up check (rigorous whatever the float error
    of the search itself). ε₀ is the decoupled closed form, raised until it passes.
    """
    if delta_upper(forward, backward, 0.0) <= delta:
        return 0.0
    high = 1.0
    while delta_upper(forward, backward, high) > delta:
        high *= 2
        if high > 1e3:
            return INF
    low = 0.0
    for _ in range(60):
        mid = (low + high) / 2
        if delta_upper(forward, backward, mid) > delta:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * max(1.0, high):
            break
    return high


def pair_delta(law_p: dict, law_q: dict, epsilon: float) -> float:
    """δ(ε) of one pair of point laws, both directions (float; a search value, not a bound)."""
    scale = math.exp(epsilon)

    def one(a: dict, b: dict) -> float:
        return sum(max(0.0, p - scale * b.get(o, 0.0)) for o, p in a.items())

    return max(one(law_p, law_q), one(law_q, law_p))


def pair_epsilon(law_p: dict, law_q: dict, delta: float) -> float:
    """ε at δ of one pair of point laws, both directions (float; a search value)."""
    return max(_one_way_epsilon(law_p, law_q, delta), _one_way_epsilon(law_q, law_p, delta))
