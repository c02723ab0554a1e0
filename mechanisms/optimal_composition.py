"""Optimal composition of k (ε, δ)-DP mechanisms: seed 003 Lemma 4.5.

seed 003 (003_9293f5da18078e1b.txt) Lemma 4.5 (Kairouz, Oh & Viswanath 2015, Thm 3.3;
Murtagh & Vadhan 2016 for arbitrary ε_total): exact in mpmath, fast in float log space, and
its inverse. Re-exported by [`mechanisms.accounting`][mechanisms.accounting].
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from .validation import (
    require_nonnegative_float,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = [
    "optimal_composition_delta",
    "optimal_composition_delta_mp",
    "optimal_composition_epsilon",
    "optimal_composition_points",
]


def _check_optimal_args(epsilon, k, delta):
    return (
        require_positive_float("epsilon", epsilon),
        require_positive_int("k", k),
        require_probability("delta", delta, allow_zero=True, allow_one=True),
    )


def optimal_composition_delta_mp(
    epsilon: float, k: int, epsilon_total: float, delta: float = 0, dps: int = 50
) -> mpmath.mpf:
    """Exact δ at ``epsilon_total`` of k-fold adaptive composition of (ε, δ)-DP, in mpmath.

    seed 003 (003_9293f5da18078e1b.txt) Lemma 4.5 (Kairouz, Oh & Viswanath 2015, Thm 3.3;
    Murtagh & Vadhan 2016 for arbitrary ε_total):
    ``δ_pure(ε_g) = Σ_{ℓ : (k−2ℓ)ε > ε_g} C(k,ℓ) (e^{(k−ℓ)ε} − e^{ε_g} e^{ℓε}) / (1 + e^ε)^k``
    and the composition is ``(ε_g, 1 − (1 − δ)^k (1 − δ_pure(ε_g)))``-DP and no better.
    At ``ε_g = (k − 2i)ε`` the sum is Lemma 4.5's δ_i. Exact integer binomials
    (``math.comb``), ``dps`` digits.

    Parameters
    ----------
    epsilon : per-mechanism ε > 0 (a float or an mpmath number).
    k : number of mechanisms (>= 1).
    epsilon_total : ε_g >= 0.
    delta : per-mechanism δ in [0, 1].
    dps : decimal digits of working precision.
    """
    with mpmath.workdps(dps):
        e = mpmath.mpf(epsilon)
        k = require_positive_int("k", k)
        g = mpmath.mpf(epsilon_total)
        if e <= 0 or g < 0:
            raise ValueError(
                f"epsilon must be > 0 and epsilon_total >= 0, got {epsilon!r}, {epsilon_total!r}"
            )
        eg = mpmath.exp(g)
        total = mpmath.mpf(0)
        ell = 0
        while ell <= k and (k - 2 * ell) * e > g:
            total += math.comb(k, ell) * (mpmath.exp((k - ell) * e) - eg * mpmath.exp(ell * e))
            ell += 1
        pure = total / (1 + mpmath.exp(e)) ** k
        d = mpmath.mpf(delta)
        return +(1 - (1 - d) ** k * (1 - pure))


def optimal_composition_points(
    epsilon: float, k: int, delta: float = 0.0
) -> list[tuple[float, float]]:
    """The pairs ``((k − 2i)ε, δ_i)``, i = 0..⌊k/2⌋, of seed 003 Lemma 4.5.

    seed 003 (003_9293f5da18078e1b.txt) Lemma 4.5 (optimal composition, Kairouz et al.):
    ``δ_i = Σ_{ℓ=0}^{i−1} C(k,ℓ)(e^{(k−ℓ)ε} − e^{(k−2i+ℓ)ε}) / (1 + e^ε)^k``, with
    per-mechanism δ folded in as ``1 − (1 − δ)^k (1 − δ_i)``. Computed exactly in mpmath.

    Parameters
    ----------
    epsilon : per-mechanism ε > 0.
    k : number of mechanisms (>= 1).
    delta : per-mechanism δ in [0, 1].

    Returns
    -------
    list of tuple of float
        ``(epsilon_total, delta_total)`` pairs, ε_total decreasing.
    """
    epsilon, k, delta = _check_optimal_args(epsilon, k, delta)
    points = []
    for i in range(k // 2 + 1):
        # ε_g = (k − 2i)ε evaluated as an exact multiple inside the mp routine
        with mpmath.workdps(50):
            g = (k - 2 * i) * mpmath.mpf(epsilon)
            value = optimal_composition_delta_mp(epsilon, k, g, delta)
        points.append(((k - 2 * i) * epsilon, float(value)))
    return points


def _log_pure_delta(epsilon: float, k: int, epsilon_total: float) -> float:
    # log of the Lemma 4.5 / Murtagh–Vadhan sum in float log space: every term is
    # C(k,ℓ) e^{(k−ℓ)ε} (1 − e^{ε_g − (k−2ℓ)ε}) / (1 + e^ε)^k, combined by logsumexp.
    last = math.ceil((k * epsilon - epsilon_total) / (2 * epsilon)) - 1
    last = min(last, k)
    while last >= 0 and (k - 2 * last) * epsilon <= epsilon_total:
        last -= 1
    while last + 1 <= k and (k - 2 * (last + 1)) * epsilon > epsilon_total:
        last += 1
    if last < 0:
        return -math.inf
    ell = np.arange(last + 1, dtype=float)
    from scipy.special import gammaln, logsumexp  # ~0.8 s to import: only when used

    log_binom = gammaln(k + 1.0) - gammaln(ell + 1.0) - gammaln(k - ell + 1.0)
    gap = epsilon_total - (k - 2.0 * ell) * epsilon  # < 0 on every kept term
    log_terms = log_binom + (k - ell) * epsilon + np.log(-np.expm1(gap))
    log_norm = k * np.logaddexp(0.0, epsilon)
    return float(logsumexp(log_terms) - log_norm)


def optimal_composition_delta(
    epsilon: float, k: int, epsilon_total: float, delta: float = 0.0
) -> float:
    """δ at ``epsilon_total`` of the optimal k-fold composition of (ε, δ)-DP mechanisms.

    seed 003 (003_9293f5da18078e1b.txt) Lemma 4.5 extended to every ε_total
    (Murtagh & Vadhan 2016); see
    [`optimal_composition_delta_mp`][mechanisms.optimal_composition.optimal_composition_delta_mp] for the
    formula. Float log-space evaluation (log-gamma binomials, logsumexp), fast for large k; the
    mpmath version is the reference.

    Parameters
    ----------
    epsilon : per-mechanism ε > 0.
    k : number of mechanisms (>= 1).
    epsilon_total : ε_g >= 0.
    delta : per-mechanism δ in [0, 1].
    """
    epsilon, k, delta = _check_optimal_args(epsilon, k, delta)
    epsilon_total = require_nonnegative_float("epsilon_total", epsilon_total)
    pure = math.exp(_log_pure_delta(epsilon, k, epsilon_total))
    if pure >= 1.0 or delta == 1.0:  # total variation 1 (only by rounding for δ_pure)
        return 1.0
    # 1 − (1 − δ)^k (1 − δ_pure), written to keep tiny values accurate
    return min(1.0, -math.expm1(k * math.log1p(-delta) + math.log1p(-pure)))


def optimal_composition_epsilon(
    epsilon: float, k: int, delta_total: float, delta: float = 0.0
) -> float:
    """Smallest ε_total with optimal k-fold composition of (ε, δ)-DP at ``delta_total``.

    seed 003 (003_9293f5da18078e1b.txt) Lemma 4.5 (Kairouz et al. 2015; Murtagh & Vadhan
    2016): the root in ε_g of ``optimal_composition_delta(ε, k, ε_g, δ) = δ_total``, found
    by scipy.optimize.brentq on the log of the pure-DP part (continuous and decreasing in
    ε_g, zero from kε on). Returns 0.0 when ε_g = 0 already meets δ_total.

    Parameters
    ----------
    epsilon : per-mechanism ε > 0.
    k : number of mechanisms (>= 1).
    delta_total : target total δ in (0, 1).
    delta : per-mechanism δ in [0, 1], must satisfy 1 − (1 − δ)^k < delta_total.
    """
    epsilon, k, delta = _check_optimal_args(epsilon, k, delta)
    delta_total = require_probability("delta_total", delta_total)
    # δ_total = 1 − (1−δ)^k (1 − δ_pure)  ⇔  δ_pure = 1 − (1 − δ_total)/(1 − δ)^k
    log_keep = k * math.log1p(-delta) if delta < 1.0 else -math.inf
    pure_target = -math.expm1(math.log1p(-delta_total) - log_keep)
    if not pure_target > 0.0:
        raise ValueError(
            f"delta_total must exceed 1 - (1 - delta)^k = {-math.expm1(log_keep):.6g} "
            f"(the δ the k mechanisms spend themselves), got {delta_total!r}"
        )
    log_target = math.log(pure_target)

    def h(g):
        value = _log_pure_delta(epsilon, k, g)
        return max(-1e300, value) - log_target

    if h(0.0) <= 0:
        return 0.0
    top = k * epsilon
    from scipy.optimize import brentq  # ~0.3 s to import: only when a root is solved

    x = brentq(h, 0.0, top, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    while h(x) > 0:
        x = np.nextafter(x, np.inf)
    return float(x)
