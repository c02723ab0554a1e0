"""The analytic Gaussian mechanism: its exact δ and the smallest σ for an (ε, δ) target.

Balle & Wang (2018) Thm 8 / Alg. 1, used by seed 001 (001_49698e97f2ea8cba.txt) App. E Thm 7.
Re-exported by [`mechanisms.tail_bounds`][mechanisms.tail_bounds] and
[`mechanisms.accounting`][mechanisms.accounting].
"""

from __future__ import annotations

import math

import numpy as np

from .validation import require_positive_float, require_probability

__all__ = ["analytic_gaussian_sigma", "gaussian_delta"]


def _log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    # Balle & Wang (2018) Thm 8: δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ). Both terms
    # are computed as logs (scipy.special.log_ndtr) so the difference stays accurate when
    # both are tiny; the second is always the smaller.
    u = sensitivity / (2.0 * sigma)
    v = epsilon * sigma / sensitivity
    from scipy.special import log_ndtr  # ~0.8 s to import: only when used

    log_first = float(log_ndtr(u - v))
    log_second = epsilon + float(log_ndtr(-u - v))
    gap = log_second - log_first
    if gap >= 0.0:  # only by rounding, for σ so large that δ underflows
        return -math.inf
    return log_first + math.log(-math.expm1(gap))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact δ at ε of the Gaussian mechanism N(0, σ²) with L2 sensitivity Δ.

    Balle & Wang (2018), Thm 8 (cited by seed 001, 001_49698e97f2ea8cba.txt, App. E
    Thm 7): ``δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``.

    Parameters
    ----------
    sigma : noise standard deviation, > 0.
    epsilon : ε > 0.
    sensitivity : L2 sensitivity Δ, > 0.
    """
    sigma = require_positive_float("sigma", sigma)
    epsilon = require_positive_float("epsilon", epsilon)
    sensitivity = require_positive_float("sensitivity", sensitivity)
    return math.exp(_log_gaussian_delta(sigma, epsilon, sensitivity))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ making N(0, σ²) noise (ε, δ)-DP for L2 sensitivity Δ: the analytic Gaussian mechanism.

    seed 001 (001_49698e97f2ea8cba.txt) App. E Thm 7, σ = G(ε, δ, Δ), from Balle & Wang
    (2018) Thm 8 / Alg. 1: the root in σ of
    [`gaussian_delta`][mechanisms.analytic_gaussian.gaussian_delta] = δ, solved by scipy.optimize.brentq
    in ln σ (δ(σ) is decreasing). Unlike the classical ``Δ√(2 ln(1.25/δ))/ε`` it holds for every ε >
    0 and is never larger. For RestrictedNormal / GaussianTopK pass ``sensitivity = √Δ`` (Δ items
    touched by a user).

    Parameters
    ----------
    epsilon : ε > 0.
    delta : δ in (0, 1).
    sensitivity : L2 sensitivity, > 0.
    """
    epsilon = require_positive_float("epsilon", epsilon)
    delta = require_probability("delta", delta)
    sensitivity = require_positive_float("sensitivity", sensitivity)
    log_target = math.log(delta)

    def h(log_sigma):
        return _log_gaussian_delta(math.exp(log_sigma), epsilon, sensitivity) - log_target

    # Work with s = σ/Δ (δ depends on σ and Δ only through σ/Δ), bracket in ln s.
    base = math.log(sensitivity)
    low, high = base - 1.0, base + 1.0
    while h(low) <= 0:
        low -= 2.0
    while h(high) > 0:
        high += 2.0
    from scipy.optimize import brentq  # ~0.3 s to import: only when a root is solved

    x = brentq(h, low, high, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    # the smallest σ meeting the target: step up if rounding left δ(σ) a hair above δ
    while h(x) > 0:
        x = np.nextafter(x, np.inf)
    return math.exp(x)
