"""Laplace threshold-crossing tails, the papers' bounds on them, δ_q solvers, Gaussian calibration.

The stability family (TopStable, the restricted-domain framework F, LaplaceLimitDomain)
releases an item only if a Laplace-noised gap beats a Laplace-noised threshold. Their δ
terms are the probability that an *unstable* item passes:

    P[Lap(1/ε_a) > T + Lap(1/ε_b)]          (seed 000 Lemma 3.1; seed 001 eq. 6)

with ``T = ln(1/δ_q)/ε_a``. This module gives that probability exactly (closed form, and
in log space for tiny values), the papers' upper bounds on it, the solvers that pick δ_q
(paper calibration: invert the bound; exact calibration: invert the exact tail), and
re-exports the analytic Gaussian calibration of Balle & Wang (2018) used by seed 001 App. E
Thm 7 (``mechanisms.analytic_gaussian``).

Everything here is a scalar function of floats; root finding uses scipy.optimize.brentq.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import SupportsFloat

import mpmath
import numpy as np

# The analytic Gaussian calibration is re-exported: its callers know it as a tail bound's twin.
from .analytic_gaussian import analytic_gaussian_sigma, gaussian_delta
from .validation import (
    require_choice,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = [
    "CALIBRATIONS",
    "analytic_gaussian_sigma",
    "delta_q_for_target",
    "gaussian_delta",
    "laplace_difference_tail",
    "laplace_difference_tail_mp",
    "laplace_limit_domain_delta",
    "laplace_tail_bound",
    "log_delta_q_for_target",
    "log_laplace_difference_tail",
    "log_laplace_tail_bound",
    "restricted_domain_delta_q",
    "restricted_domain_tail_bound",
    "tail_threshold",
    "top_stable_delta_q",
]

#: Ways to pick δ_q: invert the paper's bound, or invert the exact tail (never larger).
CALIBRATIONS = ("paper", "exact")

_LOG_HALF = math.log(0.5)
_LOG_SMALLEST_NORMAL = math.log(sys.float_info.min)


def _real(name: str, value: SupportsFloat) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


# --------------------------------------------------------------------------------------
# Exact tail of a difference of two independent Laplace variables
# --------------------------------------------------------------------------------------


def _log_sum_tail_nonneg(a: float, b: float, t: float) -> float:
    """log P[X + Y > t] for t >= 0, X ~ Lap(1/a), Y ~ Lap(1/b) independent.

    The characteristic function a²/(a²+w²)·b²/(b²+w²) splits into partial fractions, so
    the law of X + Y is the signed mixture b²/(b²−a²)·Lap(1/a) − a²/(b²−a²)·Lap(1/b) and
    P[X + Y > t] = (b² e^{−at} − a² e^{−bt}) / (2 (b² − a²)). With a < b, r = a/b,
    q = −2 ln r, h = (b − a) t this is e^{−at}/2 · (1 − e^{−(q+h)}) / (1 − e^{−q}); expm1
    keeps both factors accurate when a and b are close (no cancellation), and the value
    tends to e^{−at}(2 + at)/4 as b → a, the equal-scale case handled exactly.
    """
    if a > b:
        a, b = b, a
    if a == b:
        return -a * t + math.log(2.0 + a * t) - math.log(4.0)
    q = -2.0 * math.log1p(-(b - a) / b)
    h = (b - a) * t
    return -a * t + _LOG_HALF + math.log(-math.expm1(-(q + h))) - math.log(-math.expm1(-q))


def log_laplace_difference_tail(epsilon_a: float, epsilon_b: float, threshold: float) -> float:
    """Natural log of ``P[Lap(1/ε_a) > T + Lap(1/ε_b)]`` in closed form, accurate far in the tail.

    seed 000 (000_4bf15007bce596ab.txt) Lemma 3.1 bounds this probability; here it is
    computed exactly. Because Lap(1/ε_b) is symmetric, the event is ``X + Y > T`` with
    independent X ~ Lap(1/ε_a), Y ~ Lap(1/ε_b). ε_a == ε_b is the limit case
    ``e^{−εT}(2 + εT)/4``. Stays finite for probabilities far below 1e-308.

    Parameters
    ----------
    epsilon_a : rate of the noise on the gap (scale 1/ε_a), > 0.
    epsilon_b : rate of the noise on the threshold (scale 1/ε_b), > 0.
    threshold : T, any real number.
    """
    a = require_positive_float("epsilon_a", epsilon_a)
    b = require_positive_float("epsilon_b", epsilon_b)
    t = _real("threshold", threshold)
    if t >= 0:
        return _log_sum_tail_nonneg(a, b, t)
    # symmetry of X + Y: P[X + Y > t] = 1 − P[X + Y > −t]
    return math.log1p(-math.exp(_log_sum_tail_nonneg(a, b, -t)))


def laplace_difference_tail(epsilon_a: float, epsilon_b: float, threshold: float) -> float:
    """``P[Lap(1/ε_a) > T + Lap(1/ε_b)]`` exactly (closed form; see [`log_laplace_difference_tail`][mechanisms.tail_bounds.log_laplace_difference_tail]).

    seed 000 (000_4bf15007bce596ab.txt) Lemma 3.1 / seed 001 (001_49698e97f2ea8cba.txt)
    eq. (6) bound this quantity; this is its exact value.

    Parameters
    ----------
    epsilon_a, epsilon_b : the two Laplace rates (> 0).
    threshold : T, any real number.
    """
    return math.exp(log_laplace_difference_tail(epsilon_a, epsilon_b, threshold))


def laplace_difference_tail_mp(
    epsilon_a: float, epsilon_b: float, threshold: float, dps: int = 50
) -> mpmath.mpf:
    """High-precision ``P[Lap(1/ε_a) > T + Lap(1/ε_b)]`` with mpmath (for tests and exact laws).

    Same closed form as [`laplace_difference_tail`][mechanisms.tail_bounds.laplace_difference_tail]
    (seed 000 Lemma 3.1's quantity), evaluated with ``dps`` significant digits; arguments may be
    mpmath numbers or strings.

    Parameters
    ----------
    epsilon_a, epsilon_b : the two Laplace rates (> 0).
    threshold : T, any real number.
    dps : decimal digits of working precision.
    """
    with mpmath.workdps(dps):
        a, b, t = mpmath.mpf(epsilon_a), mpmath.mpf(epsilon_b), mpmath.mpf(threshold)
        if a <= 0 or b <= 0:
            raise ValueError(
                f"epsilon_a and epsilon_b must be > 0, got {epsilon_a!r}, {epsilon_b!r}"
            )

        def upper(s):
            if a == b:
                return mpmath.exp(-a * s) * (2 + a * s) / 4
            return (b**2 * mpmath.exp(-a * s) - a**2 * mpmath.exp(-b * s)) / (2 * (b**2 - a**2))

        value = upper(t) if t >= 0 else 1 - upper(-t)
        return +value


# --------------------------------------------------------------------------------------
# The papers' bounds
# --------------------------------------------------------------------------------------


def _log_bound_at(log_delta: float, c: float) -> float:
    s = c - 1.0
    if s < 0 and s * log_delta > 1.0:
        # c < 1 and δ^{1−c} < e^{-1}: the δ^c term dominates and nothing cancels.
        #   bound = δ^c ((2 − c) + (1 − 2c) δ^{1−c}) / (4 (1 − c))
        inner = (2.0 - c) + (1.0 - 2.0 * c) * math.exp(-s * log_delta)
        return c * log_delta + math.log(inner) - math.log(4.0 * (1.0 - c))
    # bound = δ/4 · (3 − (1 − s)·expm1(s ln δ)/s), s = c − 1; the ratio tends to ln δ as
    # s → 0, which gives eq. (6) ¼δ(3 + ln 1/δ) exactly at c = 1.
    ratio = log_delta if s == 0.0 else math.expm1(s * log_delta) / s
    return log_delta + math.log(3.0 - (1.0 - s) * ratio) - math.log(4.0)


def log_laplace_tail_bound(delta: float, c: float = 1.0) -> float:
    """Natural log of seed 000 Lemma 3.1's bound; ``c = 1`` gives seed 001 eq. (6).

    See [`laplace_tail_bound`][mechanisms.tail_bounds.laplace_tail_bound] (000_4bf15007bce596ab.txt
    Lemma 3.1). Evaluated without cancellation near ``c = 1`` and without overflow for tiny δ.

    Parameters
    ----------
    delta : δ in (0, 1]; the threshold is T = ln(1/δ)/ε_a.
    c : ε_b/ε_a > 0.
    """
    delta = require_probability("delta", delta, allow_one=True)
    c = require_positive_float("c", c)
    return _log_bound_at(math.log(delta), c)


def laplace_tail_bound(delta: float, c: float = 1.0) -> float:
    """Upper bound on ``P[Lap(1/ε_a) > ln(1/δ)/ε_a + Lap(1/ε_b)]``, ``c = ε_b/ε_a``.

    seed 000 (000_4bf15007bce596ab.txt) Lemma 3.1:
    ``(2δ^c + δ − c(δ^c + 2δ)) / (4(1 − c))`` for c ≠ 1. Its limit at c = 1 is
    ``¼·δ·(3 + ln 1/δ)``, the bound of seed 001 (001_49698e97f2ea8cba.txt) eq. (6) (and of
    Durfee–Rogers Lemma D.1), used when both Laplace variables have the same scale.
    In TopStable (seed 000 Alg. 3 line 2, Thm 3.2): ε_a = ε₂/2, ε_b = ε₁, δ = δ_q,
    c = 2ε₁/ε₂. In the framework F (seed 001 Alg. 1 line 2, Lemma 2): ε_a = ε_b = ε_R/2.

    Parameters
    ----------
    delta : δ in (0, 1]; the threshold is T = ln(1/δ)/ε_a.
    c : ε_b/ε_a > 0.
    """
    return math.exp(log_laplace_tail_bound(delta, c))


def restricted_domain_tail_bound(delta: float) -> float:
    """``¼·δ·(3 + ln 1/δ)``: seed 001 (001_49698e97f2ea8cba.txt) eq. (6), Alg. 1 line 2.

    Parameters
    ----------
    delta : δ_q in (0, 1].
    """
    return laplace_tail_bound(delta, 1.0)


def laplace_limit_domain_delta(delta: float, max_items: int) -> float:
    """δ̄ = (δ/4)(3 + ln(Δ/δ)) of LaplaceLimitDomain (Durfee–Rogers, Laplace limited domain).

    As restated by seed 001 (001_49698e97f2ea8cba.txt) App. F: LaplaceLimitDomain is
    ((Δ + 1)ε, δ̄)-DP with this δ̄ (seed 002 §6.1, Lemma D.1; the math is lost in the
    002 extraction). It equals Δ · ``restricted_domain_tail_bound(δ/Δ)``: eq. (6)'s
    bound per item, union-bounded over the Δ items a user can move.

    Parameters
    ----------
    delta : δ in (0, 1).
    max_items : Δ >= 1.
    """
    delta = require_probability("delta", delta)
    max_items = require_positive_int("max_items", max_items)
    return delta / 4.0 * (3.0 + math.log(max_items / delta))


def tail_threshold(epsilon_a: float, delta_q: float) -> float:
    """``T = ln(1/δ_q)/ε_a``: TopStable line 3 (seed 000 Alg. 3, ε_a = ε₂/2) and F line 3
    (seed 001 Alg. 1, ε_a = ε_R/2).

    Parameters
    ----------
    epsilon_a : rate of the Laplace noise on the gap, > 0.
    delta_q : in (0, 1].
    """
    epsilon_a = require_positive_float("epsilon_a", epsilon_a)
    delta_q = require_probability("delta_q", delta_q, allow_one=True)
    return -math.log(delta_q) / epsilon_a


# --------------------------------------------------------------------------------------
# δ_q solvers
# --------------------------------------------------------------------------------------


def _log_exact_tail_at_delta_q(log_delta_q: float, c: float) -> float:
    # P[Lap(1/ε_a) > ln(1/δ_q)/ε_a + Lap(1/ε_b)] depends on (ε_a, ε_b) only through c:
    # take ε_a = 1, ε_b = c, T = −ln δ_q.
    return _log_sum_tail_nonneg(1.0, c, -log_delta_q)


def log_delta_q_for_target(target: float, c: float = 1.0, calibration: str = "paper") -> float:
    """``ln δ_q`` of [`delta_q_for_target`][mechanisms.tail_bounds.delta_q_for_target]; stays finite when δ_q underflows a float.

    Parameters
    ----------
    target : the allowed probability, in (0, 1).
    c : ε_b/ε_a > 0.
    calibration : "paper" or "exact".
    """
    target = require_probability("target", target)
    c = require_positive_float("c", c)
    calibration = require_choice("calibration", calibration, CALIBRATIONS)
    log_f = _crossing_log_probability(c, calibration)
    log_target = math.log(target)
    if log_f(0.0) <= log_target:
        return 0.0
    # expand the bracket downwards until the probability is below the target
    low = -1.0
    while log_f(low) > log_target:
        low *= 2.0
    from scipy.optimize import brentq  # ~0.3 s to import: only when a root is solved

    x = brentq(
        lambda y: log_f(y) - log_target,
        low,
        0.0,
        xtol=1e-15,
        rtol=4 * np.finfo(float).eps,
        maxiter=500,
    )
    while log_f(x) > log_target:
        x = float(np.nextafter(x, -np.inf))
    return float(x)


def _crossing_log_probability(c: float, calibration: str) -> Callable[[float], float]:
    # ln of the crossing probability as a function of ln δ_q
    if calibration == "paper":
        return lambda log_delta_q: _log_bound_at(log_delta_q, c)
    return lambda log_delta_q: _log_exact_tail_at_delta_q(log_delta_q, c)


def delta_q_for_target(target: float, c: float = 1.0, calibration: str = "paper") -> float:
    """Largest δ_q in (0, 1] whose threshold-crossing probability is <= ``target``.

    The probability is ``P[Lap(1/ε_a) > ln(1/δ_q)/ε_a + Lap(1/ε_b)]``, ``c = ε_b/ε_a``,
    measured by

    * ``calibration="paper"``: seed 000 (000_4bf15007bce596ab.txt) Lemma 3.1's bound
      (seed 001 eq. (6) when c = 1) — what the papers' algorithms do (TopStable line 2,
      F line 2);
    * ``calibration="exact"``: the exact tail
      ([`laplace_difference_tail`][mechanisms.tail_bounds.laplace_difference_tail]), which is
      smaller, so the δ_q is larger (lower threshold, same guarantee).

    Both are increasing in δ_q on (0, 1] (at δ_q = 1, T = 0, the bound is 3/4 and the
    exact tail 1/2), so the argmax is the root of ``log f(δ_q) = log target``, found by
    scipy.optimize.brentq in ``ln δ_q``; 1.0 is returned when even δ_q = 1 meets the target.
    The returned float satisfies ``f(δ_q) <= target`` (checked after rounding, nudged
    down if it lands a hair above). Raises ValueError if δ_q is below the normal float
    range (< 2.2e-308); use
    [`log_delta_q_for_target`][mechanisms.tail_bounds.log_delta_q_for_target] there.

    Parameters
    ----------
    target : the allowed probability, in (0, 1).
    c : ε_b/ε_a > 0.
    calibration : "paper" or "exact".
    """
    log_delta_q = log_delta_q_for_target(target, c, calibration)
    if log_delta_q < _LOG_SMALLEST_NORMAL:
        raise ValueError(
            f"delta_q = exp({log_delta_q:.6g}) is below the float range for "
            f"target={target!r}, c={c!r}; use log_delta_q_for_target"
        )
    log_f = _crossing_log_probability(float(c), calibration)
    log_target = math.log(target)
    delta_q = math.exp(log_delta_q)
    while log_f(math.log(delta_q)) > log_target:
        delta_q = float(np.nextafter(delta_q, 0.0))
    return delta_q


def top_stable_delta_q(
    epsilon: float, delta: float, kbar: int, p1: float = 0.37, calibration: str = "paper"
) -> float:
    """δ_q of TopStable, seed 000 (000_4bf15007bce596ab.txt) Alg. 3 line 2.

    ε₁ = p₁ε, ε₂ = (1 − p₁)ε, c = 2ε₁/ε₂; δ_q is the largest value with
    ``δ_max(δ_q) <= δ/k̄`` where δ_max is Lemma 3.1's bound with ε_a = ε₂/2, ε_b = ε₁
    (``calibration="paper"``), or the exact crossing probability (``"exact"``).
    The paper requires c ≠ 1 (p₁ ≠ 1/3); here c = 1 uses the limit of the bound.
    The threshold is then ``tail_threshold(ε₂/2, δ_q)`` (line 3).

    Parameters
    ----------
    epsilon : ε of TS (split into ε₁, ε₂), > 0.
    delta : δ of TS, in (0, 1).
    kbar : k̄ >= 1.
    p1 : share of ε given to the threshold noise, in (0, 1).
    calibration : "paper" or "exact".
    """
    epsilon = require_positive_float("epsilon", epsilon)
    delta = require_probability("delta", delta)
    kbar = require_positive_int("kbar", kbar)
    p1 = require_probability("p1", p1)
    c = 2.0 * p1 / (1.0 - p1)
    return delta_q_for_target(delta / kbar, c, calibration)


def restricted_domain_delta_q(delta_r: float, calibration: str = "paper") -> float:
    """δ_q of the restricted-domain framework F, seed 001 (001_49698e97f2ea8cba.txt) Alg. 1 line 2.

    ``"paper"``: the largest δ_q with ``¼·δ_q·(3 + ln 1/δ_q) <= δ_R`` (eq. 6).
    ``"exact"``: the largest δ_q whose exact crossing probability with equal scales,
    ``¼·δ_q·(2 + ln 1/δ_q)``, is <= δ_R. Neither depends on ε_R. The threshold is
    ``tail_threshold(ε_R/2, δ_q)`` (line 3).

    Parameters
    ----------
    delta_r : δ_R in (0, 1).
    calibration : "paper" or "exact".
    """
    delta_r = require_probability("delta_r", delta_r)
    return delta_q_for_target(delta_r, 1.0, calibration)
