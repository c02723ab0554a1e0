"""Closed-form calculus of piecewise sums of ``c·x^n·exp(a·x)``, exact between kinks.

The Laplace density, CDF and survival function are such sums with a kink at the mean; so are
their products and their integrals from ``x`` to ``+∞`` (integration by parts), so every nested
integral of an order or threshold event is evaluated exactly between kinks
([`PiecewiseExp`][dpaudit.exact.piecewise_exp.PiecewiseExp]). The closed-form route of
[`dpaudit.exact.laplace_calculus`][dpaudit.exact.laplace_calculus] is built on these.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import factorial

import mpmath

from .noise_variables import Laplace, as_fraction, as_mpf

__all__ = [
    "PiecewiseExp",
    "closed_cdf",
    "closed_expect",
    "closed_pdf",
    "closed_sf",
    "closed_tail_against",
    "laplace_cdf",
    "laplace_pdf",
    "laplace_sf",
]

_Terms = dict  # {(n: int, a: Fraction): coefficient mpf}


def _add_terms(left: _Terms, right: _Terms, sign=1) -> _Terms:
    out = dict(left)
    for key, c in right.items():
        out[key] = out.get(key, 0) + sign * c
    return out


def _mul_terms(left: _Terms, right: _Terms) -> _Terms:
    out: _Terms = {}
    for (n1, a1), c1 in left.items():
        for (n2, a2), c2 in right.items():
            key = (n1 + n2, a1 + a2)
            out[key] = out.get(key, 0) + c1 * c2
    return out


def _eval_terms(terms: _Terms, x) -> mpmath.mpf:
    total = as_mpf(0)
    for (n, a), c in terms.items():
        total += c * x**n * mpmath.exp(as_mpf(a) * x)
    return total


def _antiderivative(terms: _Terms) -> _Terms:
    """An antiderivative of ``Σ c x^n e^{ax}`` (integration by parts, closed form).

    ``∫ x^n e^{ax} dx = e^{ax} Σ_{m=0}^{n} (-1)^{n-m} n!/(m! a^{n-m+1}) x^m`` for
    ``a ≠ 0`` and ``x^{n+1}/(n+1)`` for ``a = 0``.
    """
    out: _Terms = {}
    for (n, a), c in terms.items():
        if a == 0:
            key = (n + 1, a)
            out[key] = out.get(key, 0) + c / (n + 1)
            continue
        inv_a = 1 / as_mpf(a)
        for m in range(n + 1):
            coef = c * (-1) ** (n - m) * factorial(n) / factorial(m) * inv_a ** (n - m + 1)
            key = (m, a)
            out[key] = out.get(key, 0) + coef
    return out


def _limit_at(terms: _Terms, side: int) -> mpmath.mpf:
    """Limit of ``Σ c x^n e^{ax}`` at ``side·∞``; raise if it diverges.

    Terms vanish when ``a·side < 0``; constants (``n = 0, a = 0``) survive.
    """
    total = as_mpf(0)
    for (n, a), c in terms.items():
        if c == 0 or a * side < 0:
            continue
        if n == 0 and a == 0:
            total += c
            continue
        raise ArithmeticError("integral diverges: a term does not vanish at infinity")
    return total


@dataclass
class PiecewiseExp:
    """A function that is ``Σ c·x^n·exp(a·x)`` on each interval between kinks.

    ``knots`` are sorted exact rationals ``k_1 < ... < k_m``; ``pieces[i]``
    holds the terms on ``(k_i, k_{i+1})`` with ``k_0 = -∞``, ``k_{m+1} = +∞``,
    as ``{(n, a): c}``. Values at the knots themselves are never needed
    (every event here has probability-zero boundaries).
    """

    knots: tuple
    pieces: list

    @staticmethod
    def constant(value) -> PiecewiseExp:
        return PiecewiseExp((), [{(0, Fraction(0)): as_mpf(value)}])

    def _refine(self, knots) -> list:
        """Pieces of ``self`` on the finer partition ``knots`` (a superset)."""
        out = []
        j = 0
        for i in range(len(knots) + 1):
            # piece i of the fine partition is (knots[i-1], knots[i]); find the coarse piece.
            left = knots[i - 1] if i > 0 else None
            while j < len(self.knots) and left is not None and self.knots[j] <= left:
                j += 1
            out.append(self.pieces[j])
        return out

    def _combine(self, other: PiecewiseExp, op) -> PiecewiseExp:
        knots = tuple(sorted(set(self.knots) | set(other.knots)))
        mine, theirs = self._refine(knots), other._refine(knots)
        return PiecewiseExp(knots, [op(a, b) for a, b in zip(mine, theirs)])

    def __mul__(self, other):
        if not isinstance(other, PiecewiseExp):
            other = PiecewiseExp.constant(other)
        return self._combine(other, _mul_terms)

    __rmul__ = __mul__

    def __add__(self, other):
        if not isinstance(other, PiecewiseExp):
            other = PiecewiseExp.constant(other)
        return self._combine(other, _add_terms)

    __radd__ = __add__

    def __neg__(self):
        return PiecewiseExp(self.knots, [{k: -c for k, c in p.items()} for p in self.pieces])

    def __sub__(self, other):
        return self + (-other if isinstance(other, PiecewiseExp) else -as_mpf(other))

    def __rsub__(self, other):
        return (-self) + other

    def __call__(self, x) -> mpmath.mpf:
        x = as_mpf(x)
        i = sum(1 for k in self.knots if as_mpf(k) < x)
        return _eval_terms(self.pieces[i], x)

    def tail(self) -> PiecewiseExp:
        """``x ↦ ∫_x^∞ f(t) dt`` as a new piecewise function (exact)."""
        anti = [_antiderivative(p) for p in self.pieces]
        m = len(self.knots)
        # Work from +∞ leftwards: on piece i, tail(x) = C_i - A_i(x) with
        # C_i = A_i(r) + tail(r), r = the piece's right knot, accumulated from the right.
        acc = _limit_at(anti[m], +1)
        from_right = [_add_terms({(0, Fraction(0)): acc}, anti[m], -1)]
        for i in range(m - 1, -1, -1):
            k = as_mpf(self.knots[i])
            right_value = _eval_terms(from_right[-1], k)  # tail at the knot
            const = right_value + _eval_terms(anti[i], k)
            from_right.append(_add_terms({(0, Fraction(0)): const}, anti[i], -1))
        return PiecewiseExp(self.knots, from_right[::-1])

    def integral(self) -> mpmath.mpf:
        """``∫_{-∞}^{∞} f`` (exact between kinks): the tail function's limit at ``-∞``."""
        return _limit_at(self.tail().pieces[0], -1)


def laplace_pdf(mean, scale) -> PiecewiseExp:
    """Density of ``mean + Lap(scale)``: ``exp(-|x-mean|/scale)/(2 scale)``."""
    m, b = as_fraction(mean, "mean"), as_fraction(scale, "scale")
    if b <= 0:
        raise ValueError("laplace_pdf needs scale > 0 (a constant has no density)")
    mb = as_mpf(m) / as_mpf(b)
    half = 1 / (2 * as_mpf(b))
    return PiecewiseExp(
        (m,), [{(0, 1 / b): half * mpmath.exp(-mb)}, {(0, -1 / b): half * mpmath.exp(mb)}]
    )


def laplace_cdf(mean, scale) -> PiecewiseExp:
    """CDF of ``mean + Lap(scale)``; a unit step at ``mean`` if ``scale = 0``."""
    m, b = as_fraction(mean, "mean"), as_fraction(scale, "scale")
    zero = Fraction(0)
    if b == 0:
        return PiecewiseExp((m,), [{}, {(0, zero): as_mpf(1)}])
    mb = as_mpf(m) / as_mpf(b)
    return PiecewiseExp(
        (m,),
        [
            {(0, 1 / b): mpmath.exp(-mb) / 2},
            {(0, zero): as_mpf(1), (0, -1 / b): -mpmath.exp(mb) / 2},
        ],
    )


def laplace_sf(mean, scale) -> PiecewiseExp:
    """Survival function ``P[mean + Lap(scale) > x]``."""
    return 1 - laplace_cdf(mean, scale)


def closed_pdf(var: Laplace) -> PiecewiseExp:
    return laplace_pdf(var.mean, var.scale)


def closed_cdf(var: Laplace) -> PiecewiseExp:
    return laplace_cdf(var.mean, var.scale)


def closed_sf(var: Laplace) -> PiecewiseExp:
    return laplace_sf(var.mean, var.scale)


def closed_tail_against(var: Laplace, h: PiecewiseExp) -> PiecewiseExp:
    """``y ↦ E[h(X); X > y]`` for ``X = var`` (exact)."""
    if var.deterministic:
        # ∫_y^∞ δ_m(t) h(t) dt = h(m) if y < m, else 0.
        return laplace_sf(var.mean, 0) * h(as_mpf(var.mean))
    return (closed_pdf(var) * h).tail()


def closed_expect(var: Laplace, h: PiecewiseExp) -> mpmath.mpf:
    """``E[h(X)]`` for ``X = var`` (exact)."""
    if var.deterministic:
        return h(as_mpf(var.mean))
    return (closed_pdf(var) * h).integral()
