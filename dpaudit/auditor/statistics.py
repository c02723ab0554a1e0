"""One-sided Clopper–Pearson bounds and the ε / δ lower bounds built from them.

An event ``O`` with ``P(O)`` estimated on histogram ``c`` and ``Q(O)`` on its
neighbour ``c'`` witnesses a violation of (ε, δ)-DP when
``P(O) > e^ε Q(O) + δ``. From a lower confidence bound ``p_low`` on ``P(O)``
and an upper bound ``q_high`` on ``Q(O)``, both valid simultaneously,

* ε lower bound at the claimed δ: ``ln((p_low − δ) / q_high)``;
* δ lower bound at the claimed ε: ``p_low − e^ε q_high``.

These are the bounds of DP-Sniper (Bichsel et al., S&P 2021, Sec. V) and of
Jagielski et al. (2020); the intervals come from statsmodels, never hand-rolled.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "delta_lower_bound",
    "epsilon_lower_bound",
    "event_bounds",
    "one_sided_lower",
    "one_sided_upper",
]


def _check_alpha(alpha):
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
    return alpha


def _one_sided(hits, n, alpha, upper):
    """One tail of the Clopper–Pearson interval; ``n = 0`` gives the trivial bound (0 or 1)."""
    # statsmodels imports pandas and scipy.stats (~1 s): only once a bound is computed.
    from statsmodels.stats.proportion import proportion_confint

    alpha = _check_alpha(alpha)
    hits = np.asarray(hits, dtype=float)
    n = np.asarray(n, dtype=float)
    safe_n = np.where(n > 0, n, 1.0)
    interval = proportion_confint(hits, safe_n, alpha=min(2 * alpha, 0.999999), method="beta")
    trivial = 1.0 if upper else 0.0
    bound = np.where(n > 0, np.nan_to_num(interval[1 if upper else 0], nan=trivial), trivial)
    bound = np.clip(bound, 0.0, 1.0)
    return float(bound) if bound.ndim == 0 else bound


def one_sided_lower(hits, n, alpha):
    """Lower Clopper–Pearson bound: ``P(p >= bound) >= 1 − alpha`` (one-sided).

    ``proportion_confint(method="beta")`` is two-sided at level ``alpha``; a
    two-sided interval at ``2 alpha`` has exactly ``alpha`` in each tail.
    Works element-wise on arrays. ``n = 0`` gives the trivial bound 0.
    """
    return _one_sided(hits, n, alpha, upper=False)


def one_sided_upper(hits, n, alpha):
    """Upper Clopper–Pearson bound: ``P(p <= bound) >= 1 − alpha`` (one-sided)."""
    return _one_sided(hits, n, alpha, upper=True)


def epsilon_lower_bound(p_low, q_high, delta):
    """``ln((p_low − δ) / q_high)``, or 0 when the event gives no evidence (clipped at 0)."""
    p_low = np.asarray(p_low, dtype=float)
    q_high = np.asarray(q_high, dtype=float)
    num = p_low - float(delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(
            num > 0,
            np.where(
                q_high > 0,
                np.log(np.where(num > 0, num, 1.0) / np.where(q_high > 0, q_high, 1.0)),
                np.inf,
            ),
            0.0,
        )
    value = np.maximum(value, 0.0)
    return float(value) if value.ndim == 0 else value


def delta_lower_bound(p_low, q_high, epsilon):
    """``p_low − e^ε q_high`` clipped at 0."""
    value = np.maximum(
        np.asarray(p_low, float) - math.exp(float(epsilon)) * np.asarray(q_high, float), 0.0
    )
    return float(value) if value.ndim == 0 else value


def event_bounds(hits_p, n_p, hits_q, n_q, alpha_each, epsilon, delta):
    """``(p_low, q_high, ε lower bound at δ, δ lower bound at ε)`` for one event.

    ``alpha_each`` is the failure probability of EACH one-sided interval; the
    pair of intervals (and both derived bounds) hold together with
    probability >= ``1 − 2 alpha_each`` by the union bound.
    """
    p_low = one_sided_lower(hits_p, n_p, alpha_each)
    q_high = one_sided_upper(hits_q, n_q, alpha_each)
    return (
        p_low,
        q_high,
        epsilon_lower_bound(p_low, q_high, delta),
        delta_lower_bound(p_low, q_high, epsilon),
    )


def detectable_epsilon(hits_q, n_p, n_q, alpha_each, epsilon, delta) -> float:
    """The smallest true ε on an event that this audit would have reported as a violation.

    Definition (the audit's power on one confirmed event). The event's probability on
    the second histogram is taken to be what the confirmation saw, ``Q = hits_q / n_q``
    (its upper confidence bound ``q_high`` when no hit was seen). The audit flags a
    violation when ``p_low − δ > e^ε q_high``; ``P_need`` is the probability on the first
    histogram whose median hit count ``n_p P_need`` reaches that (the lower Clopper–Pearson
    bound is increasing in the hits, so this is a root, found by ``scipy.optimize.brentq``).
    The detectable ε is ``ln((P_need − δ) / Q)``: a mechanism whose true ε on this event
    were at least that would be flagged about half the time or more. ``inf`` when even
    ``P = 1`` would not be flagged (the event is too likely under ``Q``).

    Parameters
    ----------
    hits_q, n_q : the event's confirmation hits and samples on the second histogram.
    n_p : confirmation samples on the first histogram.
    alpha_each : failure probability of each one-sided interval (as in :func:`event_bounds`).
    epsilon, delta : the claim.
    """
    from scipy.optimize import brentq

    if n_p <= 0 or n_q <= 0:
        return math.inf
    q_high = one_sided_upper(hits_q, n_q, alpha_each)
    target = float(delta) + math.exp(float(epsilon)) * q_high
    if target >= 1.0:
        return math.inf

    def gap(p):
        return one_sided_lower(p * n_p, n_p, alpha_each) - target

    if gap(1.0) <= 0:
        return math.inf
    p_need = brentq(gap, target, 1.0, xtol=1e-14, rtol=1e-12)
    q_reference = hits_q / n_q if hits_q > 0 else q_high
    return math.log((p_need - float(delta)) / q_reference)
