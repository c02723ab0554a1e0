"""Privacy claims that are curves: δ(ε) for every ε >= 0, not one (ε, δ) point.

A profile is a frozen value with ``delta_at(epsilon)`` (the δ the claim allows at ε) and
``epsilon_at(delta)`` (the smallest ε whose δ is at most ``delta``, by root finding):

* [`ProfilePoints`][mechanisms.profiles.ProfilePoints] — a list of (ε, δ) points, each an (ε, δ)-DP
  claim; between and around them the δ every such mechanism satisfies (convexity and the (ε, δ)
  region);
* [`ZeroConcentratedDP`][mechanisms.profiles.ZeroConcentratedDP] — ρ-zCDP (Bun & Steinke 2016),
  converted with the conversion of Canonne, Kamath & Steinke 2020;
* [`GaussianDP`][mechanisms.profiles.GaussianDP] — μ-GDP (Dong, Roth & Su 2022).

Profiles are δ(ε) over ε >= 0 of the hockey-stick divergence ``sup_S P(S) - e^ε Q(S)``
over ordered neighbouring pairs (both orders, the relations being symmetric).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .validation import require_nonnegative_float, require_positive_float, require_probability

__all__ = [
    "GaussianDP",
    "PrivacyProfile",
    "ProfilePoints",
    "ZeroConcentratedDP",
    "epsilon_at",
    "most_violating_epsilon",
    "profile_from_dict",
    "profile_to_dict",
]

#: ε beyond which no profile here is searched (e^ε overflows a float near 709).
EPSILON_SEARCH_LIMIT = 700.0


@runtime_checkable
class PrivacyProfile(Protocol):
    """A privacy claim as a curve δ(ε), ε >= 0."""

    def delta_at(self, epsilon: float) -> float: ...

    def epsilon_at(self, delta: float) -> float: ...

    @property
    def breakpoints(self) -> tuple[float, ...]:
        """The ε where δ(ε) is not smooth (where an exact maximisation must look)."""
        ...


def _check_epsilon(epsilon: float) -> float:
    return require_nonnegative_float("epsilon", epsilon)


def epsilon_at(profile: PrivacyProfile, delta: float) -> float:
    """Smallest ε >= 0 with ``profile.delta_at(ε) <= delta``, by bisection (``inf``: none).

    δ(ε) is non-increasing for every profile here, so the set of such ε is an interval
    ``[ε*, ∞)``; ε* is found by bisection to a relative 1e-12 (δ(ε) of a list of points
    can be flat, so no root finder that needs a sign change), returning the upper end so
    that ``delta_at(result) <= delta`` holds exactly.

    Parameters
    ----------
    profile : a [`PrivacyProfile`][mechanisms.profiles.PrivacyProfile].
    delta : target δ in [0, 1].
    """
    delta = require_probability("delta", delta, allow_zero=True, allow_one=True)
    if profile.delta_at(0.0) <= delta:
        return 0.0
    high = 1.0
    while profile.delta_at(high) > delta:
        high *= 2.0
        if high > EPSILON_SEARCH_LIMIT:
            return math.inf
    low = high / 2.0 if high > 1.0 else 0.0
    for _ in range(200):
        if high - low <= 1e-12 * max(1.0, high):
            break
        middle = 0.5 * (low + high)
        if profile.delta_at(middle) <= delta:
            high = middle
        else:
            low = middle
    return high


def canonical_delta(epsilon: float, delta: float, at: float) -> float:
    """δ at ε' = ``at`` that every (ε, δ)-DP mechanism satisfies under a symmetric relation.

    For an event S, (ε, δ)-DP gives ``P(S) <= e^ε Q(S) + δ`` and, on the complement with
    the pair swapped, ``P(S) <= 1 - e^{-ε}(1 - δ - Q(S))``; maximising ``P(S) - e^{ε'}Q(S)``
    under both gives ``δ + (1 - δ)(e^ε - e^{ε'})/(1 + e^ε)`` for ε' < ε and δ for ε' >= ε:
    the hockey-stick of the canonical (ε, δ) pair (Kairouz, Oh & Viswanath 2015, ICML,
    "The composition theorem for differential privacy", Sec. 2, privacy region of (ε, δ)-DP).
    """
    if at >= epsilon:
        return delta
    # (e^ε - e^ε')/(1 + e^ε) written to stay finite for large ε.
    share = -math.expm1(at - epsilon) / (1.0 + math.exp(-epsilon))
    return min(1.0, delta + (1.0 - delta) * share)


@dataclass(frozen=True)
class ProfilePoints:
    """A claim given as (ε, δ) points: the mechanism is (ε_i, δ_i)-DP for every i.

    Between points the claim allows the linear interpolation of δ in ``e^ε`` (a
    hockey-stick divergence ``sup_S P(S) - x Q(S)`` is convex in ``x = e^ε``, so it lies
    below its chords), capped by [`canonical_delta`][mechanisms.profiles.canonical_delta] of every
    point; beyond the last point δ stays at the last δ (δ(ε) is non-increasing). Everything is
    piecewise linear in ``e^ε`` with kinks only at the points, so a linear objective in ``e^ε`` is
    maximised exactly by looking at ε = 0 and the points (``breakpoints``).

    Parameters
    ----------
    points : (ε, δ) pairs, ε >= 0 strictly increasing, δ in [0, 1] non-increasing.
    """

    points: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        try:
            raw = [tuple(p) for p in self.points]
        except TypeError:
            raise ValueError(
                f"points must be a sequence of (epsilon, delta) pairs, got {self.points!r}"
            ) from None
        if not raw or any(len(p) != 2 for p in raw):
            raise ValueError(
                f"points must be a non-empty sequence of (epsilon, delta) pairs, got {self.points!r}"
            )
        points = tuple(
            (
                require_nonnegative_float(f"points[{i}] epsilon", e),
                require_probability(f"points[{i}] delta", d, allow_zero=True, allow_one=True),
            )
            for i, (e, d) in enumerate(raw)
        )
        for (e0, d0), (e1, d1) in itertools.pairwise(points):
            if e1 <= e0:
                raise ValueError(
                    f"points must have strictly increasing epsilon, got {e0} then {e1}"
                )
            if d1 > d0:
                raise ValueError(
                    f"points must have non-increasing delta (δ(ε) falls with ε), got {d0} then {d1}"
                )
        object.__setattr__(self, "points", points)

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return tuple(e for e, _ in self.points)

    def delta_at(self, epsilon: float) -> float:
        """δ the points allow at ``epsilon`` (see the class docstring)."""
        epsilon = _check_epsilon(epsilon)
        bound = min(canonical_delta(e, d, epsilon) for e, d in self.points)
        for (e0, d0), (e1, d1) in itertools.pairwise(self.points):
            if e0 <= epsilon <= e1:
                # weight of the upper point, linear in e^ε: (e^ε - e^e0) / (e^e1 - e^e0)
                weight = math.expm1(epsilon - e0) / math.expm1(e1 - e0)
                bound = min(bound, d0 + (d1 - d0) * weight)
        return bound

    def epsilon_at(self, delta: float) -> float:
        """Smallest ε the points allow at ``delta`` ([`epsilon_at`][mechanisms.profiles.ProfilePoints.epsilon_at])."""
        return epsilon_at(self, delta)


@dataclass(frozen=True)
class ZeroConcentratedDP:
    """ρ-zCDP (Bun & Steinke 2016, Def. 1.1), as the (ε, δ(ε)) curve it implies.

    ``delta_at`` is the conversion of Canonne, Kamath & Steinke 2020 ("The Discrete
    Gaussian for Differential Privacy", Prop. 7 / Cor. 13):
    ``δ(ε) = inf_{α>1} exp((α-1)(αρ-ε)) / (α-1) · (1-1/α)^α``, minimised over α by
    root finding on the derivative ([`delta_at`][mechanisms.profiles.ZeroConcentratedDP.delta_at]);
    it is never above the simpler ``exp(-(ε-ρ)²/(4ρ))`` of Bun & Steinke 2016, Prop. 1.3
    ([`delta_at_simple`][mechanisms.profiles.ZeroConcentratedDP.delta_at_simple]), whose minimiser
    α = (ε+ρ)/(2ρ) is always among the candidates.

    Parameters
    ----------
    rho : ρ > 0.
    """

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", require_positive_float("rho", self.rho))

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return ()

    def _log_delta(self, alpha: float, epsilon: float) -> float:
        # log of exp((α-1)(αρ-ε)) / (α-1) · (1-1/α)^α, with α log(1-1/α) = α log1p(-1/α)
        return (
            (alpha - 1.0) * (alpha * self.rho - epsilon)
            - math.log(alpha - 1.0)
            + alpha * math.log1p(-1.0 / alpha)
        )

    def delta_at_simple(self, epsilon: float) -> float:
        """``exp(-(ε-ρ)²/(4ρ))`` for ε >= ρ, else 1 (Bun & Steinke 2016, Prop. 1.3)."""
        epsilon = _check_epsilon(epsilon)
        if epsilon <= self.rho:
            return 1.0
        return math.exp(-((epsilon - self.rho) ** 2) / (4.0 * self.rho))

    def delta_at(self, epsilon: float) -> float:
        """δ(ε) of the Canonne–Kamath–Steinke conversion (see the class docstring).

        The log of the bound, ``f(α) = (α-1)(αρ-ε) - log(α-1) + α log(1-1/α)``, has
        ``f'(α) = (2α-1)ρ - ε + log(1-1/α)``, increasing in α: f is convex, and its minimum
        is the root of f' (``scipy.optimize.brentq``), bracketed by doubling α - 1.
        """
        epsilon = _check_epsilon(epsilon)

        def slope(alpha: float) -> float:
            return (2.0 * alpha - 1.0) * self.rho - epsilon + math.log1p(-1.0 / alpha)

        low, high = 1.0 + 1e-12, 2.0
        while slope(high) < 0:
            low, high = high, 1.0 + 2.0 * (high - 1.0)
        candidates = [self._log_delta(high, epsilon)]
        if slope(low) < 0:
            from scipy import optimize  # slow to import: only when a root is solved

            best = optimize.brentq(slope, low, high, xtol=1e-14, rtol=4 * np.finfo(float).eps)
            candidates.append(self._log_delta(best, epsilon))
        simple = (epsilon + self.rho) / (2.0 * self.rho)
        if simple > 1.0:
            candidates.append(self._log_delta(simple, epsilon))
        return min(1.0, math.exp(min(candidates)))

    def epsilon_at(self, delta: float) -> float:
        """Smallest ε with ``delta_at(ε) <= delta`` ([`epsilon_at`][mechanisms.profiles.ZeroConcentratedDP.epsilon_at])."""
        return epsilon_at(self, delta)


@dataclass(frozen=True)
class GaussianDP:
    """μ-GDP (Dong, Roth & Su 2022, JRSS-B, Def. 2.6), as its (ε, δ(ε)) curve.

    ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)`` (Cor. 2.13), exact: a Gaussian
    mechanism of sensitivity Δ and noise σ is μ = Δ/σ GDP with exactly this profile.
    Computed in log space (``scipy.special.log_ndtr``) so large ε does not cancel.

    Parameters
    ----------
    mu : μ > 0.
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", require_positive_float("mu", self.mu))

    @property
    def breakpoints(self) -> tuple[float, ...]:
        return ()

    def delta_at(self, epsilon: float) -> float:
        """δ(ε) of Dong, Roth & Su 2022, Cor. 2.13."""
        epsilon = _check_epsilon(epsilon)
        from scipy import special  # ~0.8 s to import: only when used

        log_first = special.log_ndtr(-epsilon / self.mu + self.mu / 2.0)
        log_second = epsilon + special.log_ndtr(-epsilon / self.mu - self.mu / 2.0)
        if log_second >= log_first:
            return 0.0
        return float(math.exp(log_first) * -math.expm1(log_second - log_first))

    def epsilon_at(self, delta: float) -> float:
        """Smallest ε with ``delta_at(ε) <= delta`` ([`epsilon_at`][mechanisms.profiles.GaussianDP.epsilon_at])."""
        return epsilon_at(self, delta)


def profile_to_dict(profile: PrivacyProfile) -> dict:
    """A profile as JSON (for an audit's evidence)."""
    if isinstance(profile, ZeroConcentratedDP):
        return {"kind": "zcdp", "rho": profile.rho}
    if isinstance(profile, GaussianDP):
        return {"kind": "gdp", "mu": profile.mu}
    if isinstance(profile, ProfilePoints):
        return {"kind": "points", "points": [list(p) for p in profile.points]}
    raise TypeError(f"not a privacy profile: {profile!r}")


def profile_from_dict(data: dict) -> PrivacyProfile:
    """The profile [`profile_to_dict`][mechanisms.profiles.profile_to_dict] wrote."""
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind == "zcdp":
        return ZeroConcentratedDP(float(data["rho"]))
    if kind == "gdp":
        return GaussianDP(float(data["mu"]))
    if kind == "points":
        return ProfilePoints(tuple((float(e), float(d)) for e, d in data["points"]))
    raise ValueError(f"not a privacy profile: {data!r}")


def _scanned_maximum(excess: Callable[[float], float], high: float) -> list[float]:
    """Candidates for the maximum of a smooth ``excess`` on ``[0, high]``: the best point of a
    129-point grid, the bounded minimiser of ``-excess`` around it, and ``high``."""
    grid = np.linspace(0.0, high, 129)
    values = [excess(e) for e in grid]
    best = int(np.argmax(values))
    low_end, high_end = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    from scipy import optimize  # slow to import: only when a minimum is solved

    found = optimize.minimize_scalar(
        lambda e: -excess(e),
        bounds=(low_end, high_end),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return [float(grid[best]), float(found.x), high]


def most_violating_epsilon(claim: object, p_low: float, q_high: float) -> tuple[float, float]:
    """The ε >= 0 maximising ``p_low - e^ε q_high - δ(ε)`` under ``claim``, and that maximum.

    An event with ``P(S) >= p_low`` and ``Q(S) <= q_high`` violates the claim at ε when the
    excess ``p_low - e^ε q_high - δ(ε)`` is positive (hockey-stick form of (ε, δ)-DP); the
    ε where it is largest is where the event is most violating.

    The search runs over ``[0, ε_hi]``: when ``q_high > 0``, ``ε_hi`` is where
    ``p_low - e^ε q_high`` alone falls to the excess at ε = 0 (nothing beyond can beat
    ε = 0); when ``q_high = 0`` the excess
    ``p_low - δ(ε)`` only grows with ε, and ``ε_hi`` is where δ(ε) falls to
    ``1e-9 · p_low`` (the returned excess is within that of its supremum, and exact at the
    returned ε). For a [`ProfilePoints`][mechanisms.profiles.ProfilePoints] (a plain
    ``PrivacyClaim`` included) the excess is piecewise linear in ``e^ε`` with kinks at the points,
    so ε = 0 and the points are exact candidates; smooth profiles are scanned on a 129-point grid
    and the best cell refined with ``scipy.optimize.minimize_scalar`` (bounded).

    Parameters
    ----------
    claim : a [`PrivacyClaim`][mechanisms.PrivacyClaim] (its ``profile``) or a profile.
    p_low : lower confidence bound on P(S), in [0, 1].
    q_high : upper confidence bound on Q(S), in [0, 1].

    Returns
    -------
    (epsilon, excess) : floats; ``excess > 0`` means the bounds violate the claim at ε.
    """
    profile = getattr(claim, "profile", claim)
    if not isinstance(profile, PrivacyProfile):
        raise ValueError(f"claim must be a PrivacyClaim or a privacy profile, got {claim!r}")
    p = require_probability("p_low", p_low, allow_zero=True, allow_one=True)
    q = require_probability("q_high", q_high, allow_zero=True, allow_one=True)

    def excess(epsilon: float) -> float:
        return p - math.exp(epsilon) * q - profile.delta_at(epsilon)

    candidates = [0.0, *profile.breakpoints]
    if q > 0:
        # beyond this ε, p - e^ε q alone is below the excess at ε = 0
        high = math.log((p - excess(0.0)) / q)
    elif p > 0:
        high = profile.epsilon_at(1e-9 * p)
    else:
        high = 0.0
    high = min(high, EPSILON_SEARCH_LIMIT)
    if not isinstance(profile, ProfilePoints) and high > 0:
        candidates += _scanned_maximum(excess, high)
    scored = [(excess(e), e) for e in candidates if e <= EPSILON_SEARCH_LIMIT]
    best_excess, best_epsilon = max(scored, key=lambda pair: (pair[0], -pair[1]))
    return float(best_epsilon), float(best_excess)
