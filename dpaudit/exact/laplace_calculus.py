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
inside ``dpaudit.exact.working_precision()`` (default 50 digits). The variables are
[`dpaudit.exact.noise_variables`][dpaudit.exact.noise_variables]'s, the closed-form calculus is
[`dpaudit.exact.piecewise_exp`][dpaudit.exact.piecewise_exp]; the quadrature route and the
events are here.
"""

from __future__ import annotations

from collections.abc import Sequence

import mpmath

from .noise_variables import Gaussian, Laplace, as_mpf, noisy_variables
from .piecewise_exp import (
    PiecewiseExp,
    closed_cdf,
    closed_expect,
    closed_sf,
    closed_tail_against,
    laplace_cdf,
    laplace_pdf,
    laplace_sf,
)

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
# Quadrature route
# --------------------------------------------------------------------------


class _QuadLedger:
    """Accumulates mpmath's error estimates over every quadrature call."""

    def __init__(self):
        self.error = as_mpf(0)


def _points(variables, low=None):
    kinks = sorted({as_mpf(v.mean) for v in variables})
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
    variables = noisy_variables(means, scales, noise)
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
        h = closed_sf(variables[order[0]])
        for idx in order[1:-1]:
            h = closed_tail_against(variables[idx], h)
    # The last variable of ``order`` carries the product over ``below``.
    for b in below:
        h = h * closed_cdf(variables[b])
    return closed_expect(variables[order[-1]], h)


def _order_quad(variables, order, below, ledger):
    def below_product(y):
        value = as_mpf(1)
        for b in below:
            value *= variables[b].cdf(y)
        return value

    def h_fn(level: int, y):
        """H_level(y) = P[X_{o1} > ... > X_{o level} > y] by nested quadrature."""
        var = variables[order[level - 1]]
        if level == 1:
            return var.sf(y)
        if var.deterministic:
            m = as_mpf(var.mean)
            return h_fn(level - 1, m) if y < m else as_mpf(0)
        pts = _points(variables, low=y)
        return _quad(lambda t: var.pdf(t) * h_fn(level - 1, t), pts, ledger)

    j = len(order)
    last = variables[order[-1]]

    def integrand(y):
        upper = h_fn(j - 1, y) if j > 1 else as_mpf(1)
        return upper * below_product(y)

    if last.deterministic:
        return integrand(as_mpf(last.mean))
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
    variables = noisy_variables(means, scales, "laplace")
    above = [bool(a) for a in above]
    if len(above) != len(variables):
        raise ValueError(f"above must have one entry per item ({len(variables)}), got {len(above)}")
    threshold = Laplace(threshold_mean, threshold_scale)
    with mpmath.workdps(mpmath.mp.dps + GUARD_DIGITS):
        if method == "closed":
            product = PiecewiseExp.constant(1)
            for var, up in zip(variables, above):
                product = product * (closed_sf(var) if up else closed_cdf(var))
            result = closed_expect(threshold, product)
        elif method == "quad":
            ledger = ledger or _QuadLedger()

            def g(t):
                value = as_mpf(1)
                for var, up in zip(variables, above):
                    value *= var.sf(t) if up else var.cdf(t)
                return value

            if threshold.deterministic:
                result = g(as_mpf(threshold.mean))
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
