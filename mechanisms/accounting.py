"""Privacy accounting: the composition theorems the papers' claims rest on.

Every mechanism's ``claim`` is computed here from its paper's formula.
"""

from __future__ import annotations

import math

from .validation import (
    require_nonnegative_float,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = ["basic_composition", "limit_domain_epsilon"]


def basic_composition(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """k-fold basic composition of (ε, δ)-DP mechanisms: ``(k ε, k δ)``.

    Dwork & Roth (2014), Thm 3.16; used by seed 003 Thm 1 as its first term.
    """
    epsilon = require_nonnegative_float("epsilon", epsilon)
    delta = require_probability("delta", delta, allow_zero=True, allow_one=True)
    k = require_positive_int("k", k)
    return k * epsilon, min(1.0, k * delta)


def limit_domain_epsilon(epsilon: float, k: int, delta_prime: float = 0.0) -> float:
    """ε' of LimitDom (seed 003, Thm 1, eq. 2), the minimum of three composition bounds.

    ``ε' = min{ kε,
               kε (e^ε − 1)/(e^ε + 1) + ε √(2k ln(1/δ')),
               kε²/2 + ε √(½ k ln(1/δ')) }``

    The same expression with k* for k is Thm 2, eq. 3 (multiLimitDom). With
    ``delta_prime = 0`` the last two terms are infinite and ``ε' = kε``.

    Parameters
    ----------
    epsilon : per-selection ε (> 0).
    k : number of selections composed (>= 1).
    delta_prime : the extra δ' >= 0 spent on composition.
    """
    epsilon = require_positive_float("epsilon", epsilon)
    k = require_positive_int("k", k)
    delta_prime = require_probability("delta_prime", delta_prime, allow_zero=True)
    basic = k * epsilon
    if delta_prime == 0.0:
        return basic
    log_term = math.log(1.0 / delta_prime)
    bounded_range = k * epsilon * math.tanh(epsilon / 2) + epsilon * math.sqrt(2 * k * log_term)
    concentrated = k * epsilon**2 / 2 + epsilon * math.sqrt(0.5 * k * log_term)
    return min(basic, bounded_range, concentrated)
