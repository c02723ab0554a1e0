"""Exact laws of orderings and threshold crossings of independent noisy values.

Every law of a Laplace-noise top-k mechanism reduces to two kinds of events
over independent variables ``X_i = mean_i + noise_i``:

* an *order* event ``X_{o1} > X_{o2} > ... > X_{oj} > X_b`` for every ``b`` in
  a set ``below`` (report noisy max, one-shot top-k, the limited-domain
  family where the threshold ``⊥`` is just one more variable);
* a *threshold pattern* ``X_i > T`` for ``i`` in ``above`` and ``X_i < T``
  for the others, all against ONE shared noisy threshold ``T = t + ρ``
  (sparse vector, A_stab): the shared noise couples the items, so we
  integrate over ``ρ`` (seed 000_4bf15007bce596ab.txt, Lemma 3.1 is the
  single-item case; seed 002_a192ff3c12785105.txt, App. D, eq. (10)-(12)).

Two independent routes compute the same numbers:

``method="closed"`` (default) — closed-form piecewise-exponential calculus.
  The Laplace density, CDF and survival function are piecewise sums of
  ``c·exp(a·x)`` with a kink at the mean. Products of such functions are
  again piecewise sums of ``c·x^n·exp(a·x)``, and so are their integrals
  from ``x`` to ``+∞`` (integration by parts), so every nested integral is
  evaluated exactly between kinks ([`PiecewiseExp`][dpaudit.exact.laplace_calculus.PiecewiseExp]).
  Rates ``a`` and kinks are kept as exact rationals (``fractions.Fraction`` of the
  float inputs) so that a rate which cancels to zero is exactly zero; the
  coefficients are mpmath numbers at ``digits + GUARD_DIGITS`` digits. The
  only error is mpmath rounding, far below ``10^-digits`` for the tiny
  domains (a handful of variables, moderate means) this module is for.

``method="quad"`` — mpmath tanh-sinh quadrature split at every kink (every
  mean), so that each sub-integral has an analytic integrand and converges
  double-exponentially. Nested events use nested quadratures. The error
  bound is mpmath's own estimate (``quad(..., error=True)``) summed over
  the pieces and levels; [`quad_error_bound`][dpaudit.exact.laplace_calculus.quad_error_bound]
  returns it. It is an estimate (the difference between the last two refinement levels), which
  for analytic integrands on each piece is conservative in practice.

Gaussian noise has no closed form here: [`Gaussian`][dpaudit.exact.laplace_calculus.Gaussian]
variables are always integrated by quadrature (the Gaussian CDF products of seed 001,
App. E, Thm 7). A variable with ``scale=0`` is a deterministic constant (a
fixed threshold, seed 002 App. F).

Public functions: [`probability_of_order`][dpaudit.exact.laplace_calculus.probability_of_order],
[`probability_argmax`][dpaudit.exact.laplace_calculus.probability_argmax],
[`probability_threshold_pattern`][dpaudit.exact.laplace_calculus.probability_threshold_pattern],
[`difference_tail`][dpaudit.exact.laplace_calculus.difference_tail] and the building blocks
[`laplace_pdf`][dpaudit.exact.laplace_calculus.laplace_pdf],
[`laplace_cdf`][dpaudit.exact.laplace_calculus.laplace_cdf],
[`laplace_sf`][dpaudit.exact.laplace_calculus.laplace_sf]. All return ``mpmath.mpf``; call them
inside ``dpaudit.exact.working_precision()`` (default 50 digits).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import factorial

import mpmath

__all__ = [
    "GUARD_DIGITS",
    "Gaussian",
    "Laplace",
    "PiecewiseExp",
    "difference_tail",
    "laplace_cdf",
    "laplace_pdf",
    "laplace_sf",
    "probability_argmax",
    "probability_of_order",
    "probability_threshold_pattern",
    "quad_error_bound",
]

#: Extra decimal digits used internally, so that rounding in sums of
#: exponentials of different sizes stays far below the caller's precision.
GUARD_DIGITS = 20


# --------------------------------------------------------------------------
# Variables
# --------------------------------------------------------------------------


def _mp(value) -> mpmath.mpf:
    """An mpmath number from an exact rational (or anything mpmath accepts)."""
    if isinstance(value, Fraction):
        return mpmath.mpf(value.numerator) / value.denominator
    return mpmath.mpf(value)


def _exact(value, name: str) -> Fraction:
    try:
        number = Fraction(value)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a finite real number, got {value!r}") from error
    return number


@dataclass(frozen=True)
class Laplace:
    """``mean + Lap(scale)``; ``scale = 0`` is the constant ``mean``."""

    mean: Fraction
    scale: Fraction

    def __init__(self, mean, scale):
        mean = _exact(mean, "mean")
        scale = _exact(scale, "scale")
        if scale < 0:
            raise ValueError(f"scale must be >= 0, got {scale}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "scale", scale)

    @property
    def deterministic(self) -> bool:
        return self.scale == 0

    def pdf(self, x):
        b = _mp(self.scale)
        return mpmath.exp(-abs(x - _mp(self.mean)) / b) / (2 * b)

    def cdf(self, x):
        m = _mp(self.mean)
        if self.scale == 0:
            return _mp(1) if x > m else _mp(0)
        b = _mp(self.scale)
        if x < m:
            return mpmath.exp((x - m) / b) / 2
        return 1 - mpmath.exp(-(x - m) / b) / 2

    def sf(self, x):
        m = _mp(self.mean)
        if self.scale == 0:
            return _mp(1) if x < m else _mp(0)
        b = _mp(self.scale)
        if x < m:
            return 1 - mpmath.exp((x - m) / b) / 2
        return mpmath.exp(-(x - m) / b) / 2


@dataclass(frozen=True)
class Gaussian:
    """``mean + N(0, sigma^2)`` (quadrature only)."""

    mean: Fraction
    scale: Fraction  # the standard deviation sigma

    def __init__(self, mean, scale):
        mean = _exact(mean, "mean")
        scale = _exact(scale, "scale")
        if scale <= 0:
            raise ValueError(f"Gaussian scale (sigma) must be > 0, got {scale}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "scale", scale)

    deterministic = False

    def pdf(self, x):
        return mpmath.npdf(x, _mp(self.mean), _mp(self.scale))

    def cdf(self, x):
        z = (x - _mp(self.mean)) / _mp(self.scale)
        return mpmath.erfc(-z / mpmath.sqrt(2)) / 2

    def sf(self, x):
        z = (x - _mp(self.mean)) / _mp(self.scale)
        return mpmath.erfc(z / mpmath.sqrt(2)) / 2


def _variables(means, scales, noise: str):
    means = list(means)
    if isinstance(scales, (int, float, Fraction)):
        scales = [scales] * len(means)
    scales = list(scales)
    if len(scales) != len(means):
        raise ValueError(f"means and scales differ in length ({len(means)} vs {len(scales)})")
    if noise == "laplace":
        return [Laplace(m, s) for m, s in zip(means, scales)]
    if noise == "gaussian":
        return [Gaussian(m, s) for m, s in zip(means, scales)]
    raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")


# --------------------------------------------------------------------------
# Closed-form route: piecewise sums of c * x^n * exp(a x)
# --------------------------------------------------------------------------

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
    total = _mp(0)
    for (n, a), c in terms.items():
        total += c * x**n * mpmath.exp(_mp(a) * x)
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
        inv_a = 1 / _mp(a)
        for m in range(n + 1):
            coef = c * (-1) ** (n - m) * factorial(n) / factorial(m) * inv_a ** (n - m + 1)
            key = (m, a)
            out[key] = out.get(key, 0) + coef
    return out


def _limit_at(terms: _Terms, side: int) -> mpmath.mpf:
    """Limit of ``Σ c x^n e^{ax}`` at ``side·∞``; raise if it diverges.

    Terms vanish when ``a·side < 0``; constants (``n = 0, a = 0``) survive.
    """
    total = _mp(0)
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
        return PiecewiseExp((), [{(0, Fraction(0)): _mp(value)}])

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
        return self + (-other if isinstance(other, PiecewiseExp) else -_mp(other))

    def __rsub__(self, other):
        return (-self) + other

    def __call__(self, x) -> mpmath.mpf:
        x = _mp(x)
        i = sum(1 for k in self.knots if _mp(k) < x)
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
            k = _mp(self.knots[i])
            right_value = _eval_terms(from_right[-1], k)  # tail at the knot
            const = right_value + _eval_terms(anti[i], k)
            from_right.append(_add_terms({(0, Fraction(0)): const}, anti[i], -1))
        return PiecewiseExp(self.knots, from_right[::-1])

    def integral(self) -> mpmath.mpf:
        """``∫_{-∞}^{∞} f`` (exact between kinks): the tail function's limit at ``-∞``."""
        return _limit_at(self.tail().pieces[0], -1)


def laplace_pdf(mean, scale) -> PiecewiseExp:
    """Density of ``mean + Lap(scale)``: ``exp(-|x-mean|/scale)/(2 scale)``."""
    m, b = _exact(mean, "mean"), _exact(scale, "scale")
    if b <= 0:
        raise ValueError("laplace_pdf needs scale > 0 (a constant has no density)")
    mb = _mp(m) / _mp(b)
    half = 1 / (2 * _mp(b))
    return PiecewiseExp(
        (m,), [{(0, 1 / b): half * mpmath.exp(-mb)}, {(0, -1 / b): half * mpmath.exp(mb)}]
    )


def laplace_cdf(mean, scale) -> PiecewiseExp:
    """CDF of ``mean + Lap(scale)``; a unit step at ``mean`` if ``scale = 0``."""
    m, b = _exact(mean, "mean"), _exact(scale, "scale")
    zero = Fraction(0)
    if b == 0:
        return PiecewiseExp((m,), [{}, {(0, zero): _mp(1)}])
    mb = _mp(m) / _mp(b)
    return PiecewiseExp(
        (m,),
        [
            {(0, 1 / b): mpmath.exp(-mb) / 2},
            {(0, zero): _mp(1), (0, -1 / b): -mpmath.exp(mb) / 2},
        ],
    )


def laplace_sf(mean, scale) -> PiecewiseExp:
    """Survival function ``P[mean + Lap(scale) > x]``."""
    return 1 - laplace_cdf(mean, scale)


def _closed_pdf(var: Laplace) -> PiecewiseExp:
    return laplace_pdf(var.mean, var.scale)


def _closed_cdf(var: Laplace) -> PiecewiseExp:
    return laplace_cdf(var.mean, var.scale)


def _closed_sf(var: Laplace) -> PiecewiseExp:
    return laplace_sf(var.mean, var.scale)


def _closed_tail_against(var: Laplace, h: PiecewiseExp) -> PiecewiseExp:
    """``y ↦ E[h(X); X > y]`` for ``X = var`` (exact)."""
    if var.deterministic:
        # ∫_y^∞ δ_m(t) h(t) dt = h(m) if y < m, else 0.
        return laplace_sf(var.mean, 0) * h(_mp(var.mean))
    return (_closed_pdf(var) * h).tail()


def _closed_expect(var: Laplace, h: PiecewiseExp) -> mpmath.mpf:
    """``E[h(X)]`` for ``X = var`` (exact)."""
    if var.deterministic:
        return h(_mp(var.mean))
    return (_closed_pdf(var) * h).integral()


# --------------------------------------------------------------------------
# Quadrature route
# --------------------------------------------------------------------------


class _QuadLedger:
    """Accumulates mpmath's error estimates over every quadrature call."""

    def __init__(self):
        self.error = _mp(0)


def _points(variables, low=None):
    kinks = sorted({_mp(v.mean) for v in variables})
    if low is None:
        return [mpmath.ninf] + kinks + [mpmath.inf]
    return [low] + [k for k in kinks if k > low] + [mpmath.inf]


def _quad(f, points, ledger: _QuadLedger):
    value, err = mpmath.quad(f, points, error=True)
    ledger.error += abs(err)
    return value


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------


def _check_indices(n, order, below):
    order = [int(i) for i in order]
    if not order:
        raise ValueError("order must list at least one variable")
    if below is None:
        below = [i for i in range(n) if i not in order]
    below = [int(i) for i in below]
    every = order + below
    if len(set(every)) != len(every):
        raise ValueError("order and below must list distinct variables")
    if any(i < 0 or i >= n for i in every):
        raise ValueError(f"indices must lie in [0, {n})")
    return order, below


def probability_of_order(
    means: Sequence,
    scales,
    order: Sequence[int],
    below: Sequence[int] | None = None,
    *,
    noise: str = "laplace",
    method: str = "closed",
    ledger: _QuadLedger | None = None,
) -> mpmath.mpf:
    """``P[X_{o1} > X_{o2} > ... > X_{oj} > X_b for every b in below]``.

    ``X_i = means[i] + noise_i`` independent, ``noise_i ~ Lap(scales[i])``
    (``noise="laplace"``; scale 0 = constant) or ``N(0, scales[i]^2)``
    (``noise="gaussian"``, quadrature only). ``below`` defaults to every
    variable not in ``order`` ("the listed variables are the top j, in this
    order"); variables in neither list are unconstrained. A noisy threshold
    is one more variable: put it last in ``order`` (items above it, the rest
    below) or into ``below``.

    Computation (seed 002_a192ff3c12785105.txt, Def. 6.1 writes LLD's law the
    same way): ``H_1 = P[X_{o1} > y]``, ``H_m(y) = ∫_y^∞ f_{om}(t) H_{m-1}(t) dt``,
    result ``= E[H_{j-1}(X_{oj}) Π_{b ∈ below} F_b(X_{oj})]`` — j-1 nested
    one-dimensional integrals.

    Parameters
    ----------
    means, scales : per-variable means and noise scales (a scalar scale is shared).
    order : indices in the required decreasing order.
    below : indices required to be below the last of ``order``.
    noise : "laplace" or "gaussian".
    method : "closed" (piecewise-exponential, Laplace only) or "quad".
    ledger : optional [`quad_error_bound`][dpaudit.exact.laplace_calculus.quad_error_bound]
        accumulator for ``method="quad"``.
    """
    variables = _variables(means, scales, noise)
    order, below = _check_indices(len(variables), order, below)
    if noise == "gaussian" and method == "closed":
        method = "quad"  # no closed form for Gaussian CDF products
    with mpmath.workdps(mpmath.mp.dps + GUARD_DIGITS):
        if method == "closed":
            result = _order_closed(variables, order, below)
        elif method == "quad":
            result = _order_quad(variables, order, below, ledger or _QuadLedger())
        else:
            raise ValueError(f"method must be 'closed' or 'quad', got {method!r}")
    return +result


def _order_closed(variables, order, below):
    # H_1 = S_{o1}; H_m = y -> E[H_{m-1}(X_{om}); X_{om} > y] for m = 2..j-1.
    h = PiecewiseExp.constant(1)
    if len(order) > 1:
        h = _closed_sf(variables[order[0]])
        for idx in order[1:-1]:
            h = _closed_tail_against(variables[idx], h)
    # The last variable of ``order`` carries the product over ``below``.
    for b in below:
        h = h * _closed_cdf(variables[b])
    return _closed_expect(variables[order[-1]], h)


def _order_quad(variables, order, below, ledger):
    def below_product(y):
        value = _mp(1)
        for b in below:
            value *= variables[b].cdf(y)
        return value

    def h_fn(level: int, y):
        """H_level(y) = P[X_{o1} > ... > X_{o level} > y] by nested quadrature."""
        var = variables[order[level - 1]]
        if level == 1:
            return var.sf(y)
        if var.deterministic:
            m = _mp(var.mean)
            return h_fn(level - 1, m) if y < m else _mp(0)
        pts = _points(variables, low=y)
        return _quad(lambda t: var.pdf(t) * h_fn(level - 1, t), pts, ledger)

    j = len(order)
    last = variables[order[-1]]

    def integrand(y):
        upper = h_fn(j - 1, y) if j > 1 else _mp(1)
        return upper * below_product(y)

    if last.deterministic:
        return integrand(_mp(last.mean))
    return _quad(lambda y: last.pdf(y) * integrand(y), _points(variables), ledger)


def probability_argmax(means, scales, index: int, **kwargs) -> mpmath.mpf:
    """``P[X_index > X_i for all i ≠ index]`` (report noisy max; Dwork & Roth 2014, §3.3)."""
    return probability_of_order(means, scales, [index], **kwargs)


def probability_threshold_pattern(
    means: Sequence,
    scales,
    above: Sequence[bool],
    threshold_mean,
    threshold_scale,
    *,
    method: str = "closed",
    ledger: _QuadLedger | None = None,
) -> mpmath.mpf:
    """``P[X_i > T for i with above[i], X_i < T otherwise]`` with ONE shared ``T``.

    ``X_i = means[i] + Lap(scales[i])`` and ``T = threshold_mean + Lap(threshold_scale)``
    are independent (``threshold_scale = 0``: a fixed threshold). Conditional
    on ``T = t`` the items are independent, so the probability is
    ``∫ f_T(t) Π_{above} S_i(t) Π_{below} F_i(t) dt`` (seed 000, Lemma 3.1 and
    seed 001, Alg. 2 use this event one item at a time).

    Parameters
    ----------
    means, scales : the items' means and Laplace scales (a scalar scale is shared).
    above : one boolean per item, the required side of the threshold.
    threshold_mean, threshold_scale : the threshold's mean and Laplace scale.
    method : "closed" or "quad".
    """
    variables = _variables(means, scales, "laplace")
    above = [bool(a) for a in above]
    if len(above) != len(variables):
        raise ValueError(f"above must have one entry per item ({len(variables)}), got {len(above)}")
    threshold = Laplace(threshold_mean, threshold_scale)
    with mpmath.workdps(mpmath.mp.dps + GUARD_DIGITS):
        if method == "closed":
            product = PiecewiseExp.constant(1)
            for var, up in zip(variables, above):
                product = product * (_closed_sf(var) if up else _closed_cdf(var))
            result = _closed_expect(threshold, product)
        elif method == "quad":
            ledger = ledger or _QuadLedger()

            def g(t):
                value = _mp(1)
                for var, up in zip(variables, above):
                    value *= var.sf(t) if up else var.cdf(t)
                return value

            if threshold.deterministic:
                result = g(_mp(threshold.mean))
            else:
                pts = _points(variables + [threshold])
                result = _quad(lambda t: threshold.pdf(t) * g(t), pts, ledger)
        else:
            raise ValueError(f"method must be 'closed' or 'quad', got {method!r}")
    return +result


def difference_tail(gap, scale_1, scale_2) -> mpmath.mpf:
    """``P[Lap(scale_1) - Lap(scale_2) > gap]`` in closed form.

    For equal scales ``b`` and ``gap >= 0`` this is ``e^{-gap/b}(2 + gap/b)/4``
    (seed 002_a192ff3c12785105.txt, Lemma D.1; seed 000, Lemma 3.1).
    Computed as [`probability_of_order`][dpaudit.exact.laplace_calculus.probability_of_order] of
    ``X = gap' + Lap`` over ``Lap``.
    """
    return probability_of_order([0, gap], [scale_1, scale_2], [0], [1])


def quad_error_bound(ledger: _QuadLedger) -> mpmath.mpf:
    """Sum of mpmath's error estimates over every quadrature recorded in ``ledger``."""
    return ledger.error


def new_ledger() -> _QuadLedger:
    """A fresh accumulator for the quadrature route's error estimates."""
    return _QuadLedger()


__all__.append("new_ledger")
