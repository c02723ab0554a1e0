"""Rigorous bounds on a Plackett–Luce prefix law over a box of gaps (δ(ε) from them: hockey_stick).

Within a shape ([`shapes`][dpaudit.exact.certify.shapes]) every score is affine in the free gaps ``g``,
so an outcome ``o = (o_1, ..., o_r)`` has (seed 003, 003_9293f5da18078e1b.txt, §4.1 and Alg. 1)

    log P(o) = Σ_t [ ε s_{o_t} − log Σ_{j ∈ U_t} e^{ε s_j} ]      (U_t: candidates left at step t)

— a sum of affine functions minus log-sum-exps of affine functions, so ``log P(o)`` is *concave*
in the (real) gaps. (``P(o)`` itself is not monotone in the weight of an item drawn second or
later, nor of ⊥ when it ends a longer outcome: ``w/((A + w)(B + w))`` rises then falls.) Hence
over a box:

* the minimum of ``P(o)`` is at a vertex (a concave function's minimum over a polytope is at an
  extreme point; a vertex at g = ∞ is the limit, where each ``e^{ε(s_j − s_o)}`` goes to 0 or ∞:
  the coefficients of one difference have one sign, so the limit exists in [0, 1]);
* the maximum is at most the tangent bound ``exp(log P(x₀) + max_box ∇log P(x₀)·(g − x₀))`` and
  at most the product of the factor-wise bounds ``1/(1 + Σ_j e^{ε·min_box(s_j − s_{o_t})})``.

Arithmetic is IEEE double. Every probability is a product and quotient of sums of positive
terms (no cancellation), at most 64 operations each correctly rounded or an ``exp`` within one
ulp, so its relative error is below 64 · 2.3e-16 < 1.5e-14; bounds are widened by ``MARGIN`` =
1e-12 (relative), log-values by 1e-12 and gradients by ``SLOPE_MARGIN`` = 1e-10 (absolute), and
sums of hockey-stick terms by 4 ulps of their magnitude. The certificate check can redo every leaf
in mpmath interval arithmetic instead ([`certificate`][dpaudit.exact.certify.certificate]).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

from .shapes import Law, Score

__all__ = [
    "INF",
    "MARGIN",
    "ULP",
    "Box",
    "LawBounds",
    "law_bounds",
    "log_ratio_upper",
    "point_law",
]

MARGIN = 1e-12
SLOPE_MARGIN = 1e-10
#: One unit in the last place of 1.0 (a double).
ULP = 2.0**-52
INF = math.inf

Box = tuple[tuple[float, float], ...]  # (lo, hi) per free gap; hi may be inf


def _exp(x: float) -> float:
    return INF if x > 709.0 else math.exp(x)


def _value(diff: Score, point: tuple[float, ...], epsilon: float) -> float:
    """ε (const + Σ coef · g) at a point; g may be inf (coefficients of a difference share a sign)."""
    total = diff.const
    for coef, g in zip(diff.coefs, point):
        if coef:
            total += coef * g
    return epsilon * total


def _range_low(diff: Score, box: Box, epsilon: float) -> float:
    """min over the box of ε (const + Σ coef · g)."""
    total = diff.const
    for coef, (lo, hi) in zip(diff.coefs, box):
        if coef > 0:
            total += coef * lo
        elif coef < 0:
            total += coef * hi
    return epsilon * total


def _log1p_sum_exp(values: list[float]) -> float:
    """``log(1 + Σ e^v)`` without overflow."""
    top = max([0.0, *values])
    return top + math.log(math.exp(-top) + sum(math.exp(v - top) for v in values))


def _range_high(diff: Score, box: Box, epsilon: float) -> float:
    """max over the box of ε (const + Σ coef · g)."""
    return -_range_low(Score(-diff.const, tuple(-c for c in diff.coefs)), box, epsilon)


@functools.lru_cache(maxsize=1 << 16)
def _diffs(law: Law) -> tuple[tuple[Score, ...], ...]:
    """``s_j − s_o`` for every ordered pair of candidates (memoised per law)."""
    return tuple(tuple(sj.minus(so) for so in law.scores) for sj in law.scores)


@functools.lru_cache(maxsize=1 << 16)
def _cross(law_a: Law, law_b: Law) -> tuple[tuple[Score, ...], ...]:
    """``s^a_j − s^b_n`` for every candidate j of A and n of B (memoised per pair of laws)."""
    return tuple(tuple(sj.minus(sn) for sn in law_b.scores) for sj in law_a.scores)


def _ranges(diffs, box: Box, epsilon: float) -> tuple[list[list[float]], list[list[float]]]:
    """(min, max) over the box of every ε · difference in a matrix of differences."""
    low = [[_range_low(d, box, epsilon) for d in row] for row in diffs]
    high = [[_range_high(d, box, epsilon) for d in row] for row in diffs]
    return low, high


def point_law(law: Law, point: tuple[float, ...], epsilon: float) -> dict[tuple, float]:
    """``{outcome labels: P}`` at one point of the gaps (floats; limits at inf coordinates)."""
    diffs = _diffs(law)
    m = len(law.scores)
    d = [[_value(diffs[j][o], point, epsilon) for o in range(m)] for j in range(m)]
    out = {}
    for seq in law.outcomes():
        left = set(range(m))
        p = 1.0
        for o in seq:
            p /= 1.0 + sum(_exp(d[j][o]) for j in left if j != o)
            left.discard(o)
        out[tuple(law.labels[i] for i in seq)] = p
    return out


def _log_and_gradient(law: Law, point: tuple[float, ...], epsilon: float) -> dict:
    """``{outcome: (log P, ∇ log P)}`` at a finite point (∂/∂g_i = ε Σ_j π_j (c_o − c_j))."""
    diffs = _diffs(law)
    m = len(law.scores)
    n = len(point)
    d = [[_value(diffs[j][o], point, epsilon) for o in range(m)] for j in range(m)]
    out = {}
    for seq in law.outcomes():
        left = set(range(m))
        logp = 0.0
        grad = [0.0] * n
        for o in seq:
            logp -= _log1p_sum_exp([d[j][o] for j in left if j != o])
            for j in left:
                if j == o:
                    continue
                pi = math.exp(-_log1p_sum_exp([d[m2][j] for m2 in left if m2 != j]))
                for i in range(n):
                    grad[i] -= epsilon * pi * diffs[j][o].coefs[i]
            left.discard(o)
        out[tuple(law.labels[i] for i in seq)] = (logp, grad)
    return out


def _tangent_upper(logp: float, grad: list[float], x0: tuple[float, ...], box: Box) -> float:
    bound = logp + MARGIN
    for g, c, (lo, hi) in zip(grad, x0, box):
        best = -INF
        for end in (lo, hi):
            step = end - c
            if step == 0:
                best = max(best, 0.0)
            elif math.isinf(step):
                best = max(best, INF if (g + SLOPE_MARGIN > 0) else -INF)
            else:
                best = max(best, g * step + SLOPE_MARGIN * abs(step))
        bound += best
    if math.isnan(bound):
        return INF
    return INF if bound > 709.0 else math.exp(bound) * (1 + MARGIN)


def _factor_upper(law: Law, box: Box, epsilon: float) -> dict[tuple, float]:
    diffs = _diffs(law)
    m = len(law.scores)
    low = [[_range_low(diffs[j][o], box, epsilon) for o in range(m)] for j in range(m)]
    out = {}
    for seq in law.outcomes():
        left = set(range(m))
        p = 1.0
        for o in seq:
            p /= 1.0 + sum(_exp(low[j][o]) for j in left if j != o)
            left.discard(o)
        out[tuple(law.labels[i] for i in seq)] = p * (1 + MARGIN)
    return out


def vertices(box: Box) -> list[tuple[float, ...]]:
    """The box's vertices (an inf end is the limit vertex)."""
    return list(itertools.product(*[sorted({lo, hi}) for lo, hi in box]))


def centre(box: Box) -> tuple[float, ...]:
    """The tangent point: the middle of a finite side, the low end of an infinite one."""
    return tuple(lo if math.isinf(hi) else (lo + hi) / 2 for lo, hi in box)


@dataclass(frozen=True)
class LawBounds:
    """``{outcome: (lower, upper)}`` of one law over a box, and its laws at the finite vertices."""

    bounds: dict[tuple, tuple[float, float]]
    vertex_laws: dict[tuple[float, ...], dict[tuple, float]]


def law_bounds(law: Law, box: Box, epsilon: float) -> LawBounds:
    """Lower (vertex minimum) and upper (tangent ∧ factor-wise ∧ 1) bounds of every outcome."""
    at = {v: point_law(law, v, epsilon) for v in vertices(box)}
    factor = _factor_upper(law, box, epsilon)
    x0 = centre(box)
    tangent = _log_and_gradient(law, x0, epsilon)
    bounds = {}
    for outcome, upper in factor.items():
        lower = min(p[outcome] for p in at.values()) * (1 - MARGIN)
        logp, grad = tangent[outcome]
        upper = min(1.0, upper, _tangent_upper(logp, grad, x0, box))
        bounds[outcome] = (lower, upper)
    finite = {v: p for v, p in at.items() if not any(math.isinf(g) for g in v)}
    return LawBounds(bounds, finite)


# ------------------------------------------------------- the likelihood ratio


def _share_ranges(
    left: tuple[int, ...], low: list[list[float]], high: list[list[float]]
) -> list[tuple[float, float]]:
    """Range over the box of each softmax share ``e^{ε s_j} / Σ_{l ∈ left} e^{ε s_l}``."""
    out = []
    for j in left:
        lo = 1.0 / (1.0 + sum(_exp(high[n][j]) for n in left if n != j))
        hi = 1.0 / (1.0 + sum(_exp(low[n][j]) for n in left if n != j))
        out.append((lo * (1 - MARGIN), min(1.0, hi * (1 + MARGIN))))
    return out


def _mix_upper(values: list[float], shares: list[tuple[float, float]]) -> float:
    """max Σ π_j v_j over π_j in their ranges with Σ π_j = 1 (greedy; leftover at max v)."""
    total = sum(lo * v for v, (lo, _) in zip(values, shares))
    left = 1.0 - sum(lo for lo, _ in shares)
    for v, (lo, hi) in sorted(zip(values, shares), key=lambda item: -item[0]):
        if left <= 0:
            break
        take = min(hi - lo, left)
        total += take * v
        left -= take
    if left > 0:
        total += left * max(values)
    return total * (1 + MARGIN)


def log_ratio_upper(law_a: Law, law_b: Law, box: Box, epsilon: float) -> dict[tuple, float]:
    """``sup_box log(A(o)/B(o))`` for every outcome possible under both laws.

    ``log A(o) − log B(o) = Σ_t [−ε Δ_{o_t} + log R_t]`` with ``Δ_j = s^b_j − s^a_j`` and
    ``R_t = Σ_{U^b_t} e^{ε s^b} / Σ_{U^a_t} e^{ε s^a} = Σ_{j common} π^a_j e^{ε Δ_j}
    + Σ_{n only in b} e^{ε s^b_n} / Σ_{U^a_t} e^{ε s^a}`` (π^a: the softmax shares of A at step
    t). Each ``R_t`` is bounded by the largest mixture of ``e^{ε max Δ_j}`` the share ranges
    allow plus each b-only term at its largest; the sum of the steps' sups bounds the sup of
    the sum. The two laws vary together with the gaps, so this stays tight on boxes where each
    law alone varies a lot.
    """
    index_b = {label: n for n, label in enumerate(law_b.labels)}
    low_aa, high_aa = _ranges(_diffs(law_a), box, epsilon)
    low_ab, high_ab = _ranges(_cross(law_a, law_b), box, epsilon)
    ratios: dict[tuple[int, ...], float] = {}

    def log_ratio(left_a: tuple[int, ...]) -> float:
        """sup log R_t when A has ``left_a`` left (B has the same labels left, and its own)."""
        if left_a in ratios:
            return ratios[left_a]
        used = {law_a.labels[j] for j in range(len(law_a.labels)) if j not in left_a}
        left_b = [n for n, label in enumerate(law_b.labels) if label not in used]
        shares = _share_ranges(left_a, low_aa, high_aa)
        values = []
        for j in left_a:
            nb = index_b.get(law_a.labels[j])
            # Δ_j = s^b − s^a: its max is −min(s^a − s^b).
            values.append(0.0 if nb is None else _exp(-low_ab[j][nb]))
        ratio = _mix_upper(values, shares)
        common = {law_a.labels[j] for j in left_a}
        for nb in left_b:
            if law_b.labels[nb] in common:
                continue
            den = sum(_exp(low_ab[j][nb]) for j in left_a)
            ratio += (INF if den == 0 else 1.0 / den) * (1 + MARGIN)
        ratios[left_a] = math.log(ratio) if ratio > 0 else -INF
        return ratios[left_a]

    out = {}
    everything = tuple(range(len(law_a.labels)))
    for seq in law_a.outcomes():
        labels = tuple(law_a.labels[i] for i in seq)
        if any(label not in index_b for label in labels):
            continue
        left_a = everything
        bound = 0.0
        for o in seq:
            # −ε Δ_{o_t} = ε (s^a − s^b) at its max.
            bound += high_ab[o][index_b[law_a.labels[o]]]
            bound += log_ratio(left_a)
            left_a = tuple(j for j in left_a if j != o)
        out[labels] = bound + MARGIN
    return out
