"""Weighted hits checked against their bound ``B`` and scaled to ``[0, 1]``, and bounds scaled back.

The betting and empirical Bernstein bounds of
[`weighted_bounds`][dpaudit.auditor.bounds.weighted_bounds] work on ``x = y / B``; a bound on the
mean of ``x`` goes back to the units of ``y`` rounded outwards, so it stays conservative.
"""

from __future__ import annotations

import numpy as np

from mechanisms.validation import require_positive_float, require_positive_int

__all__ = ["UNIT", "check_horizon", "scalar_or_array", "scaled", "unscale_high", "unscale_low"]

#: Unit roundoff of float64, for the rounding margins that keep every bound conservative.
UNIT = 2.0**-53


def scaled(values, weight_bound) -> tuple[np.ndarray, float]:
    """``values / weight_bound`` as float64 in ``[0, 1]``, after checking every value.

    Parameters
    ----------
    values : the weighted hits, shape ``(..., n)`` with ``n >= 1``.
    weight_bound : ``B > 0``, the largest value a weighted hit can take.
    """
    bound = require_positive_float("weight_bound", weight_bound)
    try:
        y = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"values must be an array of numbers in [0, weight_bound], got {type(values).__name__}"
        ) from None
    if y.ndim == 0 or y.shape[-1] == 0:
        raise ValueError(
            f"values must hold at least one sample along its last axis, got shape {y.shape}"
        )
    outside = ~((y >= 0.0) & (y <= bound))  # NaN is outside too
    if outside.any():
        where = np.unravel_index(int(np.argmax(outside)), y.shape)
        index = where[0] if len(where) == 1 else tuple(int(i) for i in where)
        raise ValueError(
            f"values must lie in [0, weight_bound] = [0, {bound!r}]; values[{index}] = "
            f"{float(y[where])!r} ({int(outside.sum())} of {y.size} outside). Pass as weight_bound "
            "the largest value a weighted hit can take (1/λ for a defensive mixture "
            "λ·p + (1 − λ)·p̃, or the supremum of p/q over the event when it is smaller), or fix "
            "the weights: a negative or NaN weight is a bug in the likelihood ratio"
        )
    # y <= bound exactly, so the correctly rounded quotient is <= 1.
    return y / bound, bound


def check_horizon(horizon) -> int | None:
    """``horizon`` checked: None, or a positive sample size to tune the bets for."""
    return None if horizon is None else require_positive_int("horizon", horizon)


def scalar_or_array(x: np.ndarray) -> float | np.ndarray:
    """A 0-d array as a float (the bound of one sequence); a batch's bounds as they are."""
    return float(x) if x.ndim == 0 else x


def unscale_low(low: np.ndarray, bound: float) -> np.ndarray:
    """``low · B`` rounded down (one ulp below the rounded product, never above the exact one)."""
    return np.maximum(np.nextafter(low * bound, -np.inf), 0.0)


def unscale_high(high: np.ndarray, bound: float) -> np.ndarray:
    """``high · B`` rounded up (one ulp above the rounded product), at most ``B``."""
    return np.minimum(np.nextafter(high * bound, np.inf), bound)
