"""A second derivation of a leaf's bound, in mpmath interval arithmetic (``mpmath.iv``).

The same mathematics as [`bounds`][dpaudit.exact.certify.bounds] (vertex minima by log-concavity,
tangent and factor-wise maxima, the joint bound on the likelihood ratio, the least of the three
hockey-stick forms), written again on intervals with outward rounding at ``PRECISION`` bits
instead of floats with stated margins. The ⊥ offset (a double in the model) is widened by a
relative 1e-14 so that the real ``1 + ln(size/δ)/ε`` it was rounded from lies inside. It checks a
stated bound rather than searching for one: for δ at ε the bound must be at least the interval
upper end of δ(ε) over the box; for ε at δ the interval upper end of δ at the stated ε must be at
most δ.
"""

from __future__ import annotations

import itertools
import math

from mpmath import iv, mpf

from .shapes import Law, LimitDomainModel, Score, Shape

__all__ = ["PRECISION", "leaf_holds"]

#: Bits of the interval endpoints.
PRECISION = 113

Box = tuple[tuple[float, float], ...]
_INF = mpf("inf")


def _constant(value: float):
    if float(value).is_integer():
        return iv.mpf(value)
    spread = abs(value) * 1e-14
    return iv.mpf([value - spread, value + spread])


def _at(diff: Score, point: tuple[float, ...], epsilon):
    """ε (const + Σ coef g) at a point, an interval; ±inf when an infinite coordinate enters."""
    infinite = [coef for coef, g in zip(diff.coefs, point) if coef and math.isinf(g)]
    if infinite:
        sign = infinite[0]
        return iv.mpf([_INF, _INF]) if sign > 0 else iv.mpf([-_INF, -_INF])
    total = _constant(diff.const)
    for coef, g in zip(diff.coefs, point):
        if coef:
            total += coef * iv.mpf(g)
    return epsilon * total


def _low(diff: Score, box: Box, epsilon):
    """Lower end of ε (const + Σ coef g) over the box (an mpf, possibly −inf)."""
    point = tuple(lo if coef > 0 else hi for coef, (lo, hi) in zip(diff.coefs, box))
    return _at(diff, point, epsilon).a


def _high(diff: Score, box: Box, epsilon):
    point = tuple(hi if coef > 0 else lo for coef, (lo, hi) in zip(diff.coefs, box))
    return _at(diff, point, epsilon).b


def _exp_of(value):
    """exp of an mpf endpoint as a degenerate-or-wider interval (inf allowed)."""
    if value == _INF:
        return iv.mpf([_INF, _INF])
    if value == -_INF:
        return iv.mpf(0)
    return iv.exp(iv.mpf(value))


def _differences(law: Law) -> list[list[Score]]:
    return [[sj.minus(so) for so in law.scores] for sj in law.scores]


def _labels(law: Law, seq: tuple[int, ...]) -> tuple:
    return tuple(law.labels[i] for i in seq)


def _point_law(law: Law, point: tuple[float, ...], epsilon) -> dict:
    diffs = _differences(law)
    m = len(law.scores)
    out = {}
    for seq in law.outcomes():
        left = set(range(m))
        p = iv.mpf(1)
        for o in seq:
            p = p / (
                1
                + sum((iv.exp(_at(diffs[j][o], point, epsilon)) for j in left if j != o), iv.mpf(0))
            )
            left.discard(o)
        out[_labels(law, seq)] = p
    return out


def _bounds(law: Law, box: Box, epsilon) -> dict:
    """``{outcome: (lower mpf, upper mpf)}`` over the box."""
    diffs = _differences(law)
    m = len(law.scores)
    corners = list(itertools.product(*[sorted({lo, hi}) for lo, hi in box]))
    at = [_point_law(law, v, epsilon) for v in corners]
    x0 = tuple(lo if math.isinf(hi) else (lo + hi) / 2 for lo, hi in box)
    out = {}
    for seq in law.outcomes():
        labels = _labels(law, seq)
        lower = min(p[labels].a for p in at)
        # Factor-wise: each factor at the box's most favourable end.
        left = set(range(m))
        factor = iv.mpf(1)
        logp = iv.mpf(0)
        grad = [iv.mpf(0)] * len(box)
        for o in seq:
            others = [j for j in left if j != o]
            factor = factor / (
                1 + sum((_exp_of(_low(diffs[j][o], box, epsilon)) for j in others), iv.mpf(0))
            )
            logp -= iv.log(
                1 + sum((iv.exp(_at(diffs[j][o], x0, epsilon)) for j in others), iv.mpf(0))
            )
            for j in others:
                rest = [n for n in left if n != j]
                share = 1 / (
                    1 + sum((iv.exp(_at(diffs[n][j], x0, epsilon)) for n in rest), iv.mpf(0))
                )
                for i in range(len(box)):
                    coef = diffs[j][o].coefs[i]
                    if coef:
                        grad[i] -= epsilon * share * coef
            left.discard(o)
        tangent = logp.b
        for g, c, (lo, hi) in zip(grad, x0, box):
            best = mpf(0) if lo == c else -_INF
            for end in (lo, hi):
                if end == c:
                    continue
                if math.isinf(end):
                    best = _INF if g.b > 0 else max(best, mpf(0))
                else:
                    best = max(best, (g * (iv.mpf(end) - iv.mpf(c))).b)
            tangent = tangent + best
        upper = min(mpf(1), factor.b, _exp_of(tangent).b)
        out[labels] = (lower, upper)
    return out


def _log_ratio(law_a: Law, law_b: Law, box: Box, epsilon) -> dict:
    """Upper end of log(A(o)/B(o)) over the box, for outcomes possible under both laws."""
    index_b = {label: n for n, label in enumerate(law_b.labels)}
    out = {}
    for seq in law_a.outcomes():
        labels = _labels(law_a, seq)
        if any(label not in index_b for label in labels):
            continue
        left = list(range(len(law_a.labels)))
        total = mpf(0)
        for o in seq:
            used = {law_a.labels[j] for j in range(len(law_a.labels)) if j not in left}
            ob = index_b[law_a.labels[o]]
            total += _high(law_a.scores[o].minus(law_b.scores[ob]), box, epsilon)
            shares, values = [], []
            for j in left:
                others = [law_a.scores[n].minus(law_a.scores[j]) for n in left if n != j]
                lo = 1 / (1 + sum((_exp_of(_high(d, box, epsilon)) for d in others), iv.mpf(0)))
                hi = 1 / (1 + sum((_exp_of(_low(d, box, epsilon)) for d in others), iv.mpf(0)))
                shares.append((lo.a, min(mpf(1), hi.b)))
                nb = index_b.get(law_a.labels[j])
                value = (
                    mpf(0)
                    if nb is None
                    else _exp_of(-_low(law_a.scores[j].minus(law_b.scores[nb]), box, epsilon)).b
                )
                values.append(value)
            # max Σ π v with π in its ranges and Σ π = 1: lows, then the rest to the largest v.
            ratio = iv.mpf(0)
            rest = iv.mpf(1)
            for v, (lo, _) in zip(values, shares):
                ratio += iv.mpf(lo) * v
                rest -= lo
            for v, (lo, hi) in sorted(zip(values, shares), key=lambda item: -item[0]):
                if rest.b <= 0:
                    break
                # Rounding a share up only moves mass to a larger v: still an upper bound.
                take = min((iv.mpf(hi) - lo).b, rest.b)
                ratio += iv.mpf(take) * v
                rest -= take
            if rest.b > 0:
                ratio += rest.b * max(values)
            common = {law_a.labels[j] for j in left}
            for nb, label in enumerate(law_b.labels):
                if label in used or label in common:
                    continue
                den = sum(
                    (
                        _exp_of(_low(law_a.scores[j].minus(law_b.scores[nb]), box, epsilon))
                        for j in left
                    ),
                    iv.mpf(0),
                )
                ratio += iv.mpf(_INF) if den.a == 0 else 1 / den
            total = total + (iv.log(ratio).b if ratio.b > 0 else -_INF)
            left.remove(o)
        out[labels] = total
    return out


def _one_way(a: dict, b: dict, ratio: dict, epsilon) -> mpf:
    """Upper end of sup_box δ_{A‖B}(ε)."""
    scale = iv.exp(iv.mpf(epsilon))
    total = iv.mpf(0)
    for outcome, (_, a_hi) in a.items():
        b_lo, b_hi = b.get(outcome, (mpf(0), mpf(0)))
        ell = ratio.get(outcome, _INF)
        if ell <= mpf(epsilon):  # A <= e^ε B on the whole box
            continue
        term = (iv.mpf(a_hi) - scale * b_lo).b
        if ell != _INF:
            term = min(term, (iv.mpf(a_hi) * (1 - iv.exp(iv.mpf(epsilon) - ell))).b)
            term = min(term, (iv.mpf(b_hi) * (iv.exp(iv.mpf(ell)) - scale)).b)
        if term > 0:
            total += term
    return total.b


def leaf_holds(
    model: LimitDomainModel, shape: Shape, box: Box, quantity: str, at: float, stated: float
) -> bool:
    """Whether the stated bound of a leaf holds, re-derived in interval arithmetic."""
    if math.isinf(stated):
        return True
    previous = iv.prec
    iv.prec = PRECISION
    try:
        eps = iv.mpf(model.epsilon)
        law_d, law_d2 = shape.laws(model)
        bp, bq = _bounds(law_d, box, eps), _bounds(law_d2, box, eps)
        forward = _log_ratio(law_d, law_d2, box, eps)
        backward = _log_ratio(law_d2, law_d, box, eps)
        target = at if quantity == "delta" else stated
        delta = max(_one_way(bp, bq, forward, target), _one_way(bq, bp, backward, target))
        return bool(delta <= stated) if quantity == "delta" else bool(delta <= at)
    finally:
        iv.prec = previous
