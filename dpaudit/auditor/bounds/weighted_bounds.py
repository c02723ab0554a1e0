"""Confidence bounds for the mean of bounded nonnegative i.i.d. variables (weighted hits).

Importance sampling draws run ``i`` from a proposal ``q`` instead of the mechanism's own law
``p``; with a defensive mixture ``q = λ p + (1 − λ) p̃`` the weight ``w_i = p(x_i) / q(x_i)``
lies in ``[0, 1/λ]`` and ``Y_i = w_i 1{x_i ∈ S}`` has mean exactly ``P(S | D)``. This module
bounds that mean from ``Y_1 … Y_n ∈ [0, B]``; it knows nothing of mechanisms or proposals.

Two independent routes, each giving one-sided bounds at level ``1 − α``:

* [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound] and
  [`betting_sequence`][dpaudit.auditor.bounds.weighted_bounds.betting_sequence]:
  the betting confidence sequence of Waudby-Smith & Ramdas (JRSS-B 2024), valid at a fixed
  ``n`` and uniformly over time, hence at a data-dependent stopping time. The one the
  auditor reports.
* [`empirical_bernstein_bound`][dpaudit.auditor.bounds.weighted_bounds.empirical_bernstein_bound]:
  Maurer & Pontil (COLT 2009), Theorem 4, in closed form, valid at a fixed ``n`` only. A
  cheap cross-check from a different proof, and a formula for planning how many runs a
  bound needs.

``B`` (``weight_bound``) is the largest value a ``Y_i`` can take. ``1/λ`` is always valid, but
the supremum of ``p/q`` over ``S`` is often far smaller and matters: no valid upper bound
can fall below about ``B ln(1/α) / n`` (a mass ``ln(1/α)/n`` at ``B`` goes unseen in ``n``
runs with probability ``>= α``), so an upper bound on a rare ``P(S | D')`` needs ``B`` of
the order of ``P(S | D') / q(S)``.

[`privacy_lower_bounds`][dpaudit.auditor.bounds.weighted_bounds.privacy_lower_bounds] turns a lower
bound on ``P(S | D)`` and an upper bound on ``P(S | D')`` into ε and δ lower bounds with the
formulas of [`statistics`][dpaudit.auditor.bounds.statistics].
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from mechanisms.validation import (
    require_choice,
    require_nonnegative_float,
    require_positive_float,
    require_positive_int,
    require_probability,
)

from .betting_capital import betting_ends, bracketed_root, log_factors, plug_in_bets
from .scaling import UNIT, check_horizon, scalar_or_array, scaled, unscale_high, unscale_low
from .statistics import delta_lower_bound, epsilon_lower_bound

__all__ = [
    "BETTING",
    "EMPIRICAL_BERNSTEIN",
    "WeightedBound",
    "WeightedPrivacyBounds",
    "betting_bound",
    "betting_lower_bound",
    "betting_sequence",
    "empirical_bernstein_bound",
    "log_capital",
    "privacy_lower_bounds",
]

#: ``method`` of a bound from the betting confidence sequence.
BETTING = "betting"
#: ``method`` of a bound from Maurer & Pontil's empirical Bernstein inequality.
EMPIRICAL_BERNSTEIN = "empirical-bernstein"
_METHODS = (BETTING, EMPIRICAL_BERNSTEIN)


@dataclass(frozen=True)
class WeightedBound:
    """One-sided confidence bounds on the mean of ``Y ∈ [0, weight_bound]``.

    ``P(mean >= low) >= level`` and ``P(mean <= high) >= level``, each on its own; both at
    once with probability ``>= 2 level − 1`` (the union bound; for ``BETTING`` the pair is
    the hedged confidence sequence of Waudby-Smith & Ramdas, Theorem 3, with ``θ = 1/2`` at
    ``2 (1 − level)``).
    For a batch of sequences (``values`` of shape ``(..., n)``), ``low``, ``high`` and
    ``mean`` are arrays of shape ``values.shape[:-1]``.

    Parameters
    ----------
    low, high : the bounds, in the units of the values (``0 <= low <= high <= weight_bound``).
    level : ``1 − α``, the confidence of each one-sided bound.
    samples : ``n``, the values the bounds are computed from.
    weight_bound : ``B``, the bound on every value that the inference assumed.
    method : ``BETTING`` or ``EMPIRICAL_BERNSTEIN``.
    mean : the sample mean of the values.
    horizon : for ``BETTING``, the sample size the bets were tuned for (None: tuned for every
        time at once).
    """

    low: float | np.ndarray
    high: float | np.ndarray
    level: float
    samples: int
    weight_bound: float
    method: str
    mean: float | np.ndarray
    horizon: int | None = None

    def __post_init__(self):
        require_probability("level", self.level)
        require_positive_int("samples", self.samples)
        require_positive_float("weight_bound", self.weight_bound)
        require_choice("method", self.method, _METHODS)
        if self.horizon is not None:
            require_positive_int("horizon", self.horizon)

    @property
    def alpha(self) -> float:
        """``1 − level``: the failure probability of each one-sided bound."""
        return 1.0 - self.level


@dataclass(frozen=True)
class WeightedPrivacyBounds:
    """ε and δ lower bounds witnessed by one event, from two bounds.

    Built by [`privacy_lower_bounds`][dpaudit.auditor.bounds.weighted_bounds.privacy_lower_bounds] from two
    [`WeightedBound`][dpaudit.auditor.bounds.weighted_bounds.WeightedBound].

    Both hold together with probability ``>= level`` (the union bound over the two
    one-sided bounds they are built from).
    """

    epsilon_lower: float
    delta_lower: float
    level: float


def betting_bound(values, *, weight_bound, alpha, horizon=None) -> WeightedBound:
    """One-sided betting bounds on the mean of ``values ∈ [0, weight_bound]``, each at ``1 − α``.

    Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting",
    JRSS-B 86(1), 2024, Sec. 4, Theorem 3 (hedged capital process), on ``x = y / B ∈ [0, 1]``:

    * lower capital ``K⁺_t(m) = Π_{i<=t} (1 + λ⁺_i(m)(x_i − m))``,
      ``λ⁺_i(m) = min(λ̃_i, c/m)``;
    * upper capital ``K⁻_t(m) = Π_{i<=t} (1 − λ⁻_i(m)(x_i − m))``,
      ``λ⁻_i(m) = min(λ̃_i, c/(1 − m))``;

    with the predictable plug-in bets ``λ̃_i`` (see ``plug_in_bets``) and ``c = 1/2``. At
    the true mean each is a nonnegative martingale from 1, so by Ville's inequality it ever
    reaches ``1/α`` with probability ``<= α``; ``low`` is the largest ``m`` at which
    ``K⁺_n(m) >= 1/α`` is proved, ``high`` the smallest with ``K⁻_n(m) >= 1/α`` (computed by
    a bracketing root search whose returned end is rejected in exact arithmetic, rounding
    errors included: the bound errs on the conservative side only). Hedging both with
    ``θ = 1/2`` (Theorem 3) gives exactly the pair ``[low, high]`` at level ``1 − 2α``.

    Valid at this ``n`` whether it was fixed in advance or chosen by looking at the data
    (a stopping time): the bound read at ``n`` is the confidence sequence at ``n``.

    Parameters
    ----------
    values : the ``Y_i = w_i 1{x_i ∈ S}`` in run order, shape ``(n,)``; or ``(..., n)`` for a
        batch of independent sequences (the bounds are then arrays).
    weight_bound : ``B``, a bound on every value fixed before seeing them (see the module
        docstring: ``1/λ``, or the supremum of ``p/q`` over ``S``).
    alpha : failure probability of each one-sided bound, in (0, 1).
    horizon : None, or a sample size fixed before any data to tune the bets for.
    """
    alpha = require_probability("alpha", alpha)
    horizon = check_horizon(horizon)
    x, bound = scaled(values, weight_bound)
    bets = plug_in_bets(x, alpha, horizon)
    low, high = betting_ends(x, bets, alpha)
    return WeightedBound(
        low=scalar_or_array(unscale_low(low, bound)),
        high=scalar_or_array(unscale_high(high, bound)),
        level=1.0 - alpha,
        samples=int(x.shape[-1]),
        weight_bound=bound,
        method=BETTING,
        mean=scalar_or_array(np.asarray(values, dtype=np.float64).mean(axis=-1)),
        horizon=horizon,
    )


def betting_lower_bound(values, *, scale, alpha, horizon=None) -> float:
    """A one-sided betting lower bound on the mean of ``values >= 0``, with no upper bound on them.

    The lower capital of [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound],
    ``K⁺_t(m) = Π_{i<=t} (1 + λ_i(m)(x_i − m))`` with ``λ_i(m) = min(λ̃_i, c/m)``, ``c = 1/2``,
    needs only ``x_i >= 0``: each factor is then ``>= 1 − c > 0``, and at the true mean it has
    expectation 1 whatever ``x_i``'s upper tail, so ``K⁺`` is a nonnegative martingale and
    Ville's inequality applies (Waudby-Smith & Ramdas, JRSS-B 2024, Sec. 4; the bound ``x <= 1``
    is used only by the upper capital). So the lower bound on ``P(S)`` from weighted hits
    ``Y = w 1{S}`` does not depend on the weight bound ``1/λ``; what matters is the ``scale``
    the bets are tuned in: ``x = Y / scale``. With ``scale = 1/λ`` and ``P(S) ≈ 1e-7`` the
    plug-in bets (whose regularising prior has variance 1/4 in ``x``) are far too timid and the
    bound stays 0; a ``scale`` near the typical weight of a hit (read off a pilot) gives a bound
    near ``P(S)``. ``scale`` must be fixed before the values are seen (else the bets are not
    predictable). Values above ``scale`` are allowed.

    Computed like ``betting_bound``'s lower end (a bracketing root search whose returned point
    is proved rejected, rounding included), on ``x / M`` with the bets times ``M`` (the same
    capital), ``M`` the power of two at or above ``max(1, max x)``, so the bracket ``[0, 1]``
    holds the bound and the division is exact.

    Parameters
    ----------
    values : ``Y_1 … Y_n >= 0`` in run order, shape ``(n,)``.
    scale : ``> 0``, fixed in advance: the unit the bets are tuned in.
    alpha : failure probability, in (0, 1).
    horizon : None, or a sample size fixed before any data to tune the bets for.

    Returns
    -------
    ``low`` with ``P(E Y >= low) >= 1 − alpha``.
    """
    alpha = require_probability("alpha", alpha)
    horizon = check_horizon(horizon)
    scale = require_positive_float("scale", scale)
    y = np.asarray(values, dtype=np.float64)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {y.shape}")
    if not np.all(y >= 0.0) or not np.all(np.isfinite(y)):
        raise ValueError("values must be finite and >= 0 (weighted hits w·1{S})")
    x = y / scale
    bets = plug_in_bets(x, alpha, horizon)
    top = max(1.0, float(x.max()))
    unit = 2.0 ** math.ceil(math.log2(top))
    low = bracketed_root(x / unit, bets * unit, math.log(1.0 / alpha), upper=False)
    return float(unscale_low(np.asarray(low) * unit, scale))


def betting_sequence(values, looks, *, weight_bound, alpha, horizon=None) -> list[WeightedBound]:
    """The betting confidence sequence read at the sample sizes ``looks``, running intersection.

    The ``j``-th bound uses ``values[..., :looks[j]]`` and the same predictable bets as
    [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound]. With probability
    ``>= 1 − alpha`` the lower bound (and, on its own, the upper one) is right at every time
    at once (Ville's inequality; Waudby-Smith & Ramdas, Theorem 3), so each returned bound is
    intersected with the earlier ones (``low`` is the running maximum, ``high`` the running
    minimum) at no cost in validity. Any of them may be the one a data-dependent stopping
    rule picks.

    Parameters
    ----------
    values, weight_bound, alpha, horizon : as for
        [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound].
    looks : increasing sample sizes in ``[1, n]``.
    """
    alpha = require_probability("alpha", alpha)
    horizon = check_horizon(horizon)
    x, bound = scaled(values, weight_bound)
    n = x.shape[-1]
    sizes = [require_positive_int("looks", look, maximum=n) for look in looks]
    if not sizes or any(b <= a for a, b in itertools.pairwise(sizes)):
        raise ValueError(f"looks must be a non-empty increasing list of sizes in [1, {n}]")
    bets = plug_in_bets(x, alpha, horizon)
    y = np.asarray(values, dtype=np.float64)
    bounds: list[WeightedBound] = []
    best_low = np.zeros(x.shape[:-1])
    best_high = np.ones(x.shape[:-1])
    for size in sizes:
        low, high = betting_ends(x[..., :size], bets[..., :size], alpha)
        best_low = np.maximum(best_low, low)
        best_high = np.minimum(best_high, high)
        bounds.append(
            WeightedBound(
                low=scalar_or_array(unscale_low(best_low, bound)),
                high=scalar_or_array(unscale_high(best_high, bound)),
                level=1.0 - alpha,
                samples=size,
                weight_bound=bound,
                method=BETTING,
                mean=scalar_or_array(y[..., :size].mean(axis=-1)),
                horizon=horizon,
            )
        )
    return bounds


def log_capital(values, mean, *, weight_bound, alpha, side, horizon=None) -> np.ndarray:
    """``ln K_t(mean)`` for ``t = 1 … n``: the betting evidence against a candidate mean.

    ``side="lower"`` is the lower capital ``K⁺`` (it grows when the mean exceeds ``mean``),
    ``side="upper"`` the upper one ``K⁻``, with the bets of
    [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound]. If the true mean is ``mean``,
    ``P(max_t ln K_t >= ln(1/alpha)) <= alpha`` (Ville's inequality): a sequential test of
    ``P(S) = mean`` that may stop whenever it likes. The bounds of
    [`betting_sequence`][dpaudit.auditor.bounds.weighted_bounds.betting_sequence] cross ``mean`` at
    time ``t`` only if this path has reached ``ln(1/alpha)`` by then.

    Parameters
    ----------
    values, weight_bound, alpha, horizon : as for
        [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound].
    mean : the candidate mean, in the units of the values, in ``[0, weight_bound]``.
    side : ``"lower"`` or ``"upper"``.
    """
    alpha = require_probability("alpha", alpha)
    horizon = check_horizon(horizon)
    side = require_choice("side", side, ("lower", "upper"))
    x, bound = scaled(values, weight_bound)
    m = require_nonnegative_float("mean", mean) / bound
    if m > 1.0:
        raise ValueError(f"mean must lie in [0, weight_bound] = [0, {bound!r}], got {mean!r}")
    bets = plug_in_bets(x, alpha, horizon)
    logs, _ = log_factors(x, bets, m, upper=side == "upper")
    return np.cumsum(logs, axis=-1)


# ----------------------------------------------------------------- empirical Bernstein


def empirical_bernstein_bound(values, *, weight_bound, alpha) -> WeightedBound:
    """One-sided empirical Bernstein bounds at a fixed ``n``, each at ``1 − alpha``.

    Maurer & Pontil, "Empirical Bernstein bounds and sample variance penalization",
    COLT 2009, Theorem 4: for i.i.d. ``x_i ∈ [0, 1]``, ``n >= 2``, with probability
    ``>= 1 − α``

        E x <= x̄ + sqrt(2 V_n ln(2/α) / n) + 7 ln(2/α) / (3 (n − 1)),

    ``V_n`` the unbiased sample variance; applied to ``1 − x`` it gives the lower bound.
    Here ``x = y / B``. Valid only at an ``n`` fixed in advance (not at a data-dependent
    stopping time). Its ``7 B ln(2/α) / (3(n − 1))`` term makes it much looser than
    [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound] when ``B`` is far
    above the values. Computed in closed form; the bounds are widened by a rounding margin.

    Parameters
    ----------
    values, weight_bound, alpha : as for
        [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound] (at least 2 values).
    """
    alpha = require_probability("alpha", alpha)
    x, bound = scaled(values, weight_bound)
    n = x.shape[-1]
    if n < 2:
        raise ValueError(
            "values must hold at least 2 samples for the empirical Bernstein bound "
            "(it uses the sample variance); use betting_bound for a single one"
        )
    log_term = math.log(2.0 / alpha)
    mean = x.mean(axis=-1)
    deviation = np.sqrt(2.0 * x.var(axis=-1, ddof=1) * log_term / n)
    radius = deviation + 7.0 * log_term / (3.0 * (n - 1))
    slack = 4.0 * (n + 2) * UNIT * (mean + radius)
    low = np.clip(mean - radius - slack, 0.0, 1.0)
    high = np.clip(mean + radius + slack, 0.0, 1.0)
    return WeightedBound(
        low=scalar_or_array(unscale_low(low, bound)),
        high=scalar_or_array(unscale_high(high, bound)),
        level=1.0 - alpha,
        samples=int(n),
        weight_bound=bound,
        method=EMPIRICAL_BERNSTEIN,
        mean=scalar_or_array(np.asarray(values, dtype=np.float64).mean(axis=-1)),
    )


# ------------------------------------------------------------------------ privacy


def privacy_lower_bounds(
    p: WeightedBound, q: WeightedBound, *, epsilon, delta
) -> WeightedPrivacyBounds:
    """ε and δ lower bounds from bounds on ``P(S | D)`` (``p``) and ``P(S | D')`` (``q``).

    ``ε >= ln((p.low − δ) / q.high)`` at the claimed ``delta`` and
    ``δ >= p.low − e^ε q.high`` at the claimed ``epsilon``
    ([`epsilon_lower_bound`][dpaudit.auditor.bounds.statistics.epsilon_lower_bound] and
    [`delta_lower_bound`][dpaudit.auditor.bounds.statistics.delta_lower_bound]: the bounds of
    DP-Sniper, Bichsel et al., S&P 2021, Sec. V), both clipped at 0. They hold
    together with probability ``>= p.level + q.level − 1`` when the event ``S`` was chosen
    before the runs behind ``p`` and ``q`` were drawn.

    Parameters
    ----------
    p : bounds on the event's probability on the first histogram.
    q : bounds on its probability on the neighbour.
    epsilon : the claimed ε (>= 0).
    delta : the claimed δ, in [0, 1).
    """
    for name, bound in (("p", p), ("q", q)):
        if not isinstance(bound, WeightedBound):
            raise ValueError(
                f"{name} must be a WeightedBound (from betting_bound or "
                f"empirical_bernstein_bound), got {type(bound).__name__}"
            )
    epsilon = require_nonnegative_float("epsilon", epsilon)
    delta = require_probability("delta", delta, allow_zero=True)
    level = p.level + q.level - 1.0
    if level <= 0.0:
        raise ValueError(
            f"p.level + q.level − 1 must be > 0 for a joint guarantee, got {level!r}: "
            "compute both bounds at a smaller alpha"
        )
    return WeightedPrivacyBounds(
        epsilon_lower=epsilon_lower_bound(p.low, q.high, delta),
        delta_lower=delta_lower_bound(p.low, q.high, epsilon),
        level=level,
    )
