"""Privacy accounting: the composition theorems the papers' claims rest on.

Every mechanism's ``claim`` is computed here from its paper's formula.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# The optimal composition and the tail bounds are re-exported: accounting is where the
# mechanisms' claims are computed.
from .optimal_composition import (
    optimal_composition_delta,
    optimal_composition_delta_mp,
    optimal_composition_epsilon,
    optimal_composition_points,
)
from .tail_bounds import (
    CALIBRATIONS,
    analytic_gaussian_sigma,
    delta_q_for_target,
    gaussian_delta,
    laplace_difference_tail,
    laplace_difference_tail_mp,
    laplace_limit_domain_delta,
    laplace_tail_bound,
    log_delta_q_for_target,
    log_laplace_difference_tail,
    log_laplace_tail_bound,
    restricted_domain_delta_q,
    restricted_domain_tail_bound,
    tail_threshold,
    top_stable_delta_q,
)
from .validation import (
    require_nonnegative_float,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = [
    "CALIBRATIONS",
    "advanced_composition",
    "analytic_gaussian_sigma",
    "basic_composition",
    "bounded_range_composition",
    "bounded_range_kl",
    "ddr_composition_epsilon",
    "delta_q_for_target",
    "gaussian_delta",
    "good_and_bad_outcomes_delta",
    "ind",
    "individual_epsilon",
    "laplace_difference_tail",
    "laplace_difference_tail_mp",
    "laplace_limit_domain_delta",
    "laplace_tail_bound",
    "limit_domain_epsilon",
    "log_delta_q_for_target",
    "log_laplace_difference_tail",
    "log_laplace_tail_bound",
    "optimal_composition_delta",
    "optimal_composition_delta_mp",
    "optimal_composition_epsilon",
    "optimal_composition_points",
    "restricted_domain_delta_q",
    "restricted_domain_tail_bound",
    "split_total_budget",
    "tail_threshold",
    "top_stable_delta_q",
]


def basic_composition(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """k-fold basic composition of (ε, δ)-DP mechanisms: ``(k ε, k δ)``.

    Dwork & Roth (2014), Thm 3.16; used by seed 003 Thm 1 as its first term.
    """
    epsilon = require_nonnegative_float("epsilon", epsilon)
    delta = require_probability("delta", delta, allow_zero=True, allow_one=True)
    k = require_positive_int("k", k)
    return k * epsilon, min(1.0, k * delta)


def _advanced_min(total: float, square_sum: float, drift: float, delta_prime: float) -> float:
    # seed 003 Thm 3: min{Σε, Σ ε tanh(ε/2) + √(2 Σε² ln 1/δ')}
    if delta_prime == 0.0:
        return total
    return min(total, drift + math.sqrt(2.0 * square_sum * math.log(1.0 / delta_prime)))


def _bounded_range_min(total: float, square_sum: float, drift: float, delta: float) -> float:
    # seed 003 Lemma 4.4, eq. (4): Thm 3's two terms and min with Σε²/2 + √(½ Σε² ln 1/δ)
    if delta == 0.0:
        return total
    concentrated = square_sum / 2.0 + math.sqrt(0.5 * square_sum * math.log(1.0 / delta))
    return min(_advanced_min(total, square_sum, drift, delta), concentrated)


def _epsilon_list(epsilons: Sequence[float] | np.ndarray) -> list[float]:
    if isinstance(epsilons, (str, bytes)) or not isinstance(epsilons, (Sequence, np.ndarray)):
        raise ValueError(f"epsilons must be a non-empty sequence of numbers > 0, got {epsilons!r}")
    values = [require_positive_float("epsilons[i]", e) for e in epsilons]
    if not values:
        raise ValueError("epsilons must be a non-empty sequence of numbers > 0, got []")
    return values


def advanced_composition(
    epsilons: Sequence[float] | np.ndarray,
    delta_prime: float,
    deltas: Sequence[float] | np.ndarray | None = None,
) -> tuple[float, float]:
    """Adaptive composition of (ε_i, δ_i)-DP mechanisms: seed 003 Thm 3.

    seed 003 (003_9293f5da18078e1b.txt) Thm 3 (Dwork–Rothblum–Vadhan, with the
    (e^ε − 1)/(e^ε + 1) factor of Kairouz et al. / Murtagh–Vadhan):
    ``ε' = min{ Σε_i, Σ ε_i (e^{ε_i} − 1)/(e^{ε_i} + 1) + √(2 Σε_i² ln(1/δ')) }``,
    total δ ``Σδ_i + δ'``. With ``δ' = 0`` the second term is infinite: ``ε' = Σε_i``.

    Parameters
    ----------
    epsilons : the per-mechanism ε_i (> 0), a non-empty sequence.
    delta_prime : δ' in [0, 1).
    deltas : the per-mechanism δ_i in [0, 1] (same length), or None for pure DP.

    Returns
    -------
    tuple of float
        ``(ε', δ_total)`` with δ_total capped at 1.
    """
    eps = _epsilon_list(epsilons)
    delta_prime = require_probability("delta_prime", delta_prime, allow_zero=True)
    if deltas is None:
        delta_sum = 0.0
    else:
        if len(deltas) != len(eps):
            raise ValueError(
                f"deltas must have the same length as epsilons ({len(eps)}), got {len(deltas)}"
            )
        delta_sum = math.fsum(
            require_probability("deltas[i]", d, allow_zero=True, allow_one=True) for d in deltas
        )
    # (e^ε − 1)/(e^ε + 1) = tanh(ε/2), which stays accurate for tiny ε
    epsilon_total = _advanced_min(
        math.fsum(eps),
        math.fsum(e * e for e in eps),
        math.fsum(e * math.tanh(e / 2) for e in eps),
        delta_prime,
    )
    return epsilon_total, min(1.0, delta_sum + delta_prime)


def bounded_range_composition(
    epsilons: Sequence[float] | np.ndarray, delta: float
) -> tuple[float, float]:
    """Adaptive composition of ε_i-range-bounded mechanisms: seed 003 Lemma 4.4, eq. (4).

    seed 003 (003_9293f5da18078e1b.txt) Lemma 4.4:
    ``ε' = min{ Σε_i,
               Σ ε_i (e^{ε_i} − 1)/(e^{ε_i} + 1) + √(2 Σε_i² ln(1/δ)),
               Σ ε_i²/2 + √(½ Σε_i² ln(1/δ)) }``.
    The exponential mechanism with a monotonic quality is ε-range-bounded (Lemma 4.3),
    so LimitDom (Thm 1) and multiLimitDom (Thm 2) use this with all ε_i = ε.

    Parameters
    ----------
    epsilons : the per-mechanism range bounds ε_i (> 0), a non-empty sequence.
    delta : δ in [0, 1); with δ = 0 only Σε_i is finite.

    Returns
    -------
    tuple of float
        ``(ε', δ)``.
    """
    eps = _epsilon_list(epsilons)
    delta = require_probability("delta", delta, allow_zero=True)
    epsilon_total = _bounded_range_min(
        math.fsum(eps),
        math.fsum(e * e for e in eps),
        math.fsum(e * math.tanh(e / 2) for e in eps),
        delta,
    )
    return epsilon_total, delta


def limit_domain_epsilon(epsilon: float, k: int, delta_prime: float = 0.0) -> float:
    """ε' of LimitDom (seed 003, Thm 1, eq. 2), the minimum of three composition bounds.

    ``ε' = min{ kε,
               kε (e^ε − 1)/(e^ε + 1) + ε √(2k ln(1/δ')),
               kε²/2 + ε √(½ k ln(1/δ')) }``

    This is [`bounded_range_composition`][mechanisms.accounting.bounded_range_composition] (seed 003
    Lemma 4.4) with k equal terms. The same expression with k* for k is Thm 2, eq. 3
    (multiLimitDom). With ``delta_prime = 0`` the last two terms are infinite and ``ε' = kε``.

    Parameters
    ----------
    epsilon : per-selection ε (> 0).
    k : number of selections composed (>= 1).
    delta_prime : the extra δ' >= 0 spent on composition.
    """
    epsilon = require_positive_float("epsilon", epsilon)
    k = require_positive_int("k", k)
    delta_prime = require_probability("delta_prime", delta_prime, allow_zero=True)
    if delta_prime == 0.0 or epsilon > 1e100:
        # Both composition terms are >= kε here (for huge ε, kε²/2 and kε·tanh(ε/2) + ...
        # exceed kε), and kε² could overflow a float.
        return k * epsilon
    # Lemma 4.4 with k equal terms: Σε = kε, Σε² = kε², drift kε tanh(ε/2)
    return _bounded_range_min(
        k * epsilon, k * epsilon**2, k * epsilon * math.tanh(epsilon / 2), delta_prime
    )


def bounded_range_kl(epsilon: float) -> float:
    """``ε/(1 − e^{−ε}) − 1 − ln(ε/(1 − e^{−ε}))``: the per-step drift of eq. (12)/(15).

    seed 001 (001_49698e97f2ea8cba.txt) eq. (12) and (15), from Dong, Durfee & Rogers
    (2020): the largest expected privacy loss of an ε-range-bounded mechanism. It is
    about ε²/8 for small ε, where the direct formula cancels: below ε = 1/4 its Taylor
    series ε²/8 − ε⁴/576 + ε⁶/25920 − ε⁸/1075200 + ε¹⁰/43545600 is used (next term
    691ε¹²/1207084032000, relative size < 5e-15 there).

    Parameters
    ----------
    epsilon : ε > 0.
    """
    epsilon = require_positive_float("epsilon", epsilon)
    if epsilon < 0.25:
        e2 = epsilon * epsilon
        return e2 * (
            1 / 8 + e2 * (-1 / 576 + e2 * (1 / 25920 + e2 * (-1 / 1075200 + e2 / 43545600)))
        )
    # u = x − 1 = (ε − (1 − e^{−ε}))/(1 − e^{−ε}) >= 0.13 here, so u − ln(1 + u) is accurate
    one_minus = -math.expm1(-epsilon)
    u = (epsilon - one_minus) / one_minus
    return u - math.log1p(u)


def ddr_composition_epsilon(epsilon: float, k: int, delta: float) -> float:
    """ε of k-fold composition of ε-range-bounded selections: seed 001 eq. (12) = eq. (15).

    seed 001 (001_49698e97f2ea8cba.txt) eq. (12) (LimitDomain) and eq. (15) (top-k
    Gumbel GK, App. B), from Dong, Durfee & Rogers (2020):
    ``min( kε, k·(ε/(1 − e^{−ε}) − 1 − ln(ε/(1 − e^{−ε}))) + ε √(k/2 · ln(1/δ)) )``.
    Never larger than the concentrated term of seed 003 Lemma 4.4.

    Parameters
    ----------
    epsilon : per-selection ε > 0.
    k : number of selections (>= 1).
    delta : δ_M in [0, 1); with δ = 0 the result is kε.
    """
    epsilon = require_positive_float("epsilon", epsilon)
    k = require_positive_int("k", k)
    delta = require_probability("delta", delta, allow_zero=True)
    basic = k * epsilon
    if delta == 0.0:
        return basic
    return min(
        basic, k * bounded_range_kl(epsilon) + epsilon * math.sqrt(k / 2.0 * math.log(1.0 / delta))
    )


def individual_epsilon(epsilon_total: float, k: int, delta: float) -> float:
    """Per-selection ε whose k-fold eq. (12) composition is ``epsilon_total``: **Ind**.

    seed 001 (001_49698e97f2ea8cba.txt) App. C, Alg. 5 (used in §8.2's budget split).
    The paper steps ε upward from ε_total/k in increments of 1e-4 and returns the last
    point with ``ddr_composition_epsilon(ε, k, δ) <= ε_total``; the composed ε is
    continuous and strictly increasing in ε, so here the exact largest such ε is found by
    scipy.optimize.brentq. The result is >= the paper's (never a worse split) and
    satisfies the inequality (checked, nudged down if rounding lands a hair above).

    Parameters
    ----------
    epsilon_total : ε_comp > 0, the composed budget.
    k : number of selections (>= 1).
    delta : δ_comp in [0, 1).
    """
    epsilon_total = require_positive_float("epsilon_total", epsilon_total)
    k = require_positive_int("k", k)
    delta = require_probability("delta", delta, allow_zero=True)

    def excess(e):
        return ddr_composition_epsilon(e, k, delta) - epsilon_total

    low = epsilon_total / k  # composed ε <= kε, so this meets the budget (up to rounding)
    if excess(low) >= 0:  # only if the kε term is the binding one at ε_total/k
        x = low
    else:
        high = 2.0 * low
        while excess(high) <= 0:
            high *= 2.0
        from scipy.optimize import brentq  # ~0.3 s to import: only when a root is solved

        x = brentq(excess, low, high, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    # k · (ε_total / k) can round one ulp above ε_total: step down until the budget holds.
    while excess(x) > 0:
        x = np.nextafter(x, -np.inf)
    return float(x)


def good_and_bad_outcomes_delta(epsilon: float, delta_bar: float) -> float:
    """``(1 + e^ε) δ̄``: the δ of a mechanism whose bad outcomes have probability <= δ̄ and
    whose good outcomes are (ε, δ̄)-DP.

    P(S) <= P(S ∩ good) + P(bad) <= e^ε (Q(S) + δ̄) + δ̄. Seed 002
    (002_a192ff3c12785105.txt) §6.1, Lemmas 6.3 and 6.4 combined for Lemma 6.1 (the
    Laplace limited domain); seed 001 (001_49698e97f2ea8cba.txt) App. E.1 budgets it so.
    Capped at 1.

    Parameters
    ----------
    epsilon : ε >= 0 of the good outcomes.
    delta_bar : δ̄ in [0, 1].
    """
    epsilon = require_nonnegative_float("epsilon", epsilon)
    delta_bar = require_probability("delta_bar", delta_bar, allow_zero=True, allow_one=True)
    return min(1.0, (1.0 + math.exp(min(epsilon, 700.0))) * delta_bar)


#: Alias with the paper's name (seed 001 App. C, Alg. 5).
ind = individual_epsilon


def split_total_budget(epsilon_total: float, delta_total: float, k: int) -> dict:
    """RG's parameters for a total (ε, δ), exactly as seed 001 §8.2 splits it.

    seed 001 (001_49698e97f2ea8cba.txt) §8.2 with Ind = App. C Alg. 5
    (``mechanisms.individual_epsilon``):
    ``δ_M = δ_R = δ/2``, ``ε_R = 4·Ind(ε, k, δ_M)``, per-selection
    ``ε = Ind(ε − ε_R, k, δ_M)``. Returns keyword arguments for
    [`RestrictedGumbel`][mechanisms.restricted_domain.RestrictedGumbel]
    (``epsilon, delta, epsilon_r, delta_r``); its claim is then at most (ε, δ).

    Parameters
    ----------
    epsilon_total : ε > 0 of the whole mechanism.
    delta_total : δ in (0, 1) of the whole mechanism.
    k : number of selections, >= 1.
    """
    epsilon_total = require_positive_float("epsilon_total", epsilon_total)
    delta_total = require_probability("delta_total", delta_total)
    k = require_positive_int("k", k)
    delta_m = delta_total / 2.0
    epsilon_r = 4.0 * individual_epsilon(epsilon_total, k, delta_m)
    if epsilon_r >= epsilon_total:
        raise ValueError(
            f"epsilon_total={epsilon_total!r} with k={k} leaves no budget for GK: §8.2's "
            f"ε_R = 4·Ind(ε, k, δ/2) = {epsilon_r:.6g} >= ε (use k > 4 or set ε_R yourself)"
        )
    epsilon = individual_epsilon(epsilon_total - epsilon_r, k, delta_m)
    return {"epsilon": epsilon, "delta": delta_m, "epsilon_r": epsilon_r, "delta_r": delta_m}
