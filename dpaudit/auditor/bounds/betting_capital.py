"""The betting capital process and the root search for the ends of its confidence set.

Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 86(1),
2024, Sec. 3–5, on values ``x ∈ [0, 1]``. The public bounds built on it are in
[`weighted_bounds`][dpaudit.auditor.bounds.weighted_bounds].
"""

from __future__ import annotations

import math

import numpy as np

from .scaling import UNIT

__all__ = ["betting_ends", "bracketed_root", "log_factors", "plug_in_bets"]

# Waudby-Smith & Ramdas's choices (Sec. 4): bets truncated at c/m (lower) or c/(1 − m)
# (upper) with c = 1/2, and the plug-in estimates start from one pseudo-observation of mean
# 1/2 and variance 1/4.
_TRUNCATION = 0.5
_PRIOR_MEAN = 0.5
_PRIOR_VARIANCE = 0.25
# The root finder stops when the bracket is this narrow relative to its larger end.
_RELATIVE_TOLERANCE = 1e-7
_MAX_STEPS = 300


def plug_in_bets(x: np.ndarray, alpha: float, horizon: int | None) -> np.ndarray:
    """Predictable plug-in bets ``λ̃_t``, before truncation (Waudby-Smith & Ramdas, Sec. 4).

    ``λ̃_t = sqrt(2 ln(1/α) / (σ̂²_{t−1} t ln(1 + t)))`` with the regularised running
    estimates ``μ̂_t = (1/2 + Σ_{i<=t} x_i) / (t + 1)`` and
    ``σ̂²_t = (1/4 + Σ_{i<=t} (x_i − μ̂_i)²) / (t + 1)``, ``σ̂²_0 = 1/4`` (their predictable
    plug-in of Sec. 3, with ``ln(1/α)`` for a one-sided bound in place of ``ln(2/α)``). With a
    ``horizon`` ``N`` fixed in advance, ``t ln(1 + t)`` becomes ``N`` (their fixed-``n``
    bets, Sec. 5): tighter near ``N``, still predictable, so still a confidence sequence.
    ``λ̃_t`` depends on ``x_1 … x_{t−1}`` only; that is what makes the capital a martingale.

    Parameters
    ----------
    x : the scaled values, shape ``(..., n)``.
    alpha : the failure probability the bets are tuned for.
    horizon : None, or the sample size ``N`` fixed in advance.
    """
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mean_t = (_PRIOR_MEAN + np.cumsum(x, axis=-1)) / (t + 1.0)
    variance_t = (_PRIOR_VARIANCE + np.cumsum((x - mean_t) ** 2, axis=-1)) / (t + 1.0)
    first = np.full(x.shape[:-1] + (1,), _PRIOR_VARIANCE)
    variance_before = np.concatenate([first, variance_t[..., :-1]], axis=-1)
    scale = t * np.log1p(t) if horizon is None else float(horizon)
    return np.sqrt(2.0 * math.log(1.0 / alpha) / (variance_before * scale))


def log_factors(x, bets, m, upper: bool):
    """``ln(1 ± λ_t(m)(x_t − m))`` and the truncated bets ``λ_t(m)``; ``m`` broadcasts."""
    with np.errstate(divide="ignore"):
        cap = _TRUNCATION / ((1.0 - m) if upper else m)
    lam = np.minimum(bets, cap)
    step = lam * ((m - x) if upper else (x - m))
    return np.log1p(step), lam


def _excess(x, bets, m, upper: bool, threshold: float) -> np.ndarray:
    """``ln K_n(m) − ln(1/α) − margin``; ``>= 0`` proves ``K_n(m) >= 1/α`` (``m`` rejected).

    The margin bounds the rounding error of the computed log capital: the data
    ``x = fl(y/B)`` and ``m − x`` carry relative errors ``<= u``, so each step
    ``λ(x − m)`` is off by ``<= 3uλ(x + m)`` and, the factor being ``>= 1 − c``, each
    logarithm by ``<= 3uλ(x + m)/(1 − c) + u|ln|``; a sum of ``n`` terms adds
    ``<= (n − 1)u Σ|ln|`` (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
    eq. (4.4)). Twice their total is used.
    """
    logs, lam = log_factors(x, bets, m[..., None], upper)
    n = x.shape[-1]
    margin = (
        2.0
        * UNIT
        * (
            (n + 1) * np.abs(logs).sum(axis=-1)
            + 3.0 / (1.0 - _TRUNCATION) * (lam * (x + m[..., None])).sum(axis=-1)
            + threshold
        )
    )
    return logs.sum(axis=-1) - threshold - margin


def bracketed_root(x, bets, threshold: float, upper: bool) -> np.ndarray:
    """The conservative end of the betting confidence set, for every sequence of a batch.

    The lower capital ``K⁺_n(m)`` is non-increasing in ``m`` and the upper ``K⁻_n(m)``
    non-decreasing (each factor is, and all are positive), so the set
    ``{m : K_n(m) < 1/α}`` is an interval with one free end. The search keeps a bracket
    ``[lo, hi]`` whose rejected end was *proved* rejected (``_excess`` ``>= 0``): the
    returned point is rejected, and so is every ``m`` beyond it, whatever the tolerance. Steps
    are Illinois (modified regula falsi; Dowell & Jarratt, BIT 11, 1971), with a bisection
    (geometric once ``lo > 0``) when the bracket stops halving.

    Parameters
    ----------
    x : the scaled values, shape ``(..., n)``.
    bets : the plug-in bets of ``x`` (``plug_in_bets``), same shape.
    threshold : ``ln(1/α)``.
    upper : the upper end (capital ``K⁻``) rather than the lower (``K⁺``).
    """
    batch = x.shape[:-1]
    outer = np.full(batch, 1.0 if upper else 0.0)  # the most rejectable candidate mean
    inner = np.full(batch, 0.0 if upper else 1.0)  # never rejected: every factor is <= 1
    result = outer.copy()
    g_outer = _excess(x, bets, outer, upper, threshold)
    open_ = g_outer >= 0.0  # else nothing is rejected and the bound is the trivial one
    if not open_.any():
        return result
    rows = np.flatnonzero(open_.ravel())
    xs = x.reshape(-1, x.shape[-1])[rows]
    bs = bets.reshape(-1, x.shape[-1])[rows]
    lo, g_lo, hi, g_hi = _initial_bracket(
        xs, bs, outer.ravel()[rows], g_outer.ravel()[rows], inner.ravel()[rows], threshold, upper
    )
    _narrow(xs, bs, (lo, g_lo, hi, g_hi), threshold, upper)
    flat = result.ravel()
    flat[rows] = hi if upper else lo
    return flat.reshape(batch)


def _initial_bracket(xs, bs, reject_at, g_reject, accept_at, threshold: float, upper: bool):
    """``(lo, g_lo, hi, g_hi)``: a bracket ``lo < hi`` with one end rejected, one accepted.

    Starts inside from the sample mean when it is accepted (it nearly always is).
    """
    mean = xs.mean(axis=-1)
    g_mean = _excess(xs, bs, mean, upper, threshold)
    accepted = g_mean < 0.0
    accept_at = np.where(accepted, mean, accept_at)
    g_accept = np.where(accepted, g_mean, -threshold)  # computed below where not the mean
    reject_at = np.where(accepted, reject_at, mean)
    g_reject = np.where(accepted, g_reject, g_mean)
    if not accepted.all():
        far = ~accepted
        g_accept[far] = _excess(xs[far], bs[far], accept_at[far], upper, threshold)
    if upper:
        return accept_at, g_accept, reject_at, g_reject
    return reject_at, g_reject, accept_at, g_accept


def _narrow(xs, bs, bracket, threshold: float, upper: bool) -> None:
    """Narrow every bracket ``(lo, g_lo, hi, g_hi)`` in place by Illinois steps."""
    lo, g_lo, hi, g_hi = bracket
    last_moved = np.zeros(lo.shape, dtype=np.int8)  # -1 lo, +1 hi, 0 none yet
    width_before = np.full(lo.shape, np.inf)
    bisect = np.zeros(lo.shape, dtype=bool)
    for step in range(_MAX_STEPS):
        active = (hi - lo) > _RELATIVE_TOLERANCE * hi
        if not active.any():
            break
        idx = np.flatnonzero(active)
        a, b, ga, gb = lo[idx], hi[idx], g_lo[idx], g_hi[idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            secant = (a * gb - b * ga) / (gb - ga)
        halfway = np.where(a > 0.0, np.sqrt(a * b), 0.5 * b)
        use_half = bisect[idx] | ~((secant > a) & (secant < b))
        m = np.where(use_half, halfway, secant)
        m = np.where((m > a) & (m < b), m, 0.5 * (a + b))
        g_m = _excess(xs[idx], bs[idx], m, upper, threshold)
        # Rejected candidates move the rejected end; the sign of g says which end that is.
        moves_lo = (g_m >= 0.0) != upper
        move = np.where(moves_lo, -1, 1).astype(np.int8)
        repeat = move == last_moved[idx]
        lo[idx] = np.where(moves_lo, m, a)
        g_lo[idx] = np.where(moves_lo, g_m, np.where(repeat, 0.5 * ga, ga))
        hi[idx] = np.where(moves_lo, b, m)
        g_hi[idx] = np.where(moves_lo, np.where(repeat, 0.5 * gb, gb), g_m)
        last_moved[idx] = move
        if step % 2 == 1:  # every second step: did the bracket at least halve?
            width = hi[idx] - lo[idx]
            bisect[idx] = width > 0.5 * width_before[idx]
            width_before[idx] = width


def betting_ends(x: np.ndarray, bets: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)``: both conservative ends of the betting confidence set at level ``1 − α``."""
    threshold = math.log(1.0 / alpha)
    low = bracketed_root(x, bets, threshold, upper=False)
    high = bracketed_root(x, bets, threshold, upper=True)
    return low, high
