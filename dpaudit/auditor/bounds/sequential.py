"""Anytime-valid binomial bounds: Clopper–Pearson at α-spending levels over a fixed schedule.

An audit that looks at its tallies and then decides whether to draw more samples
(stop on a confirmed violation, stop once it has power, otherwise go on) must use
bounds that stay valid whatever the stopping rule. Here the looks are fixed in
advance — cumulative sample sizes ``n_0 < n_1 < … < n_{J−1}`` of a
[`LookSchedule`][dpaudit.auditor.bounds.sequential.LookSchedule] — and look ``j`` takes its one-sided
Clopper–Pearson bound at level ``α_j = α w_j`` with ``Σ w_j = 1`` (α-spending: Lan & DeMets,
Biometrika 70(3), 1983, eq. (2.2), with a spending function fixed before any data; here
Bonferroni over the looks). By the union bound over the looks

    P(∃ j : bound_j is on the wrong side of p) <= Σ_j α_j = α,

so the sequence of bounds is a confidence sequence over the schedule (Howard,
Ramdas, McAuliffe, Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence
sequences", Ann. Statist. 49(2), 2021, Def. 1 restricted to the looks), and a bound
read at a data-dependent stopping look holds with probability ``>= 1 − α``.
[`crossing_probability`][dpaudit.auditor.bounds.sequential.crossing_probability] computes the exact
probability of ever crossing by dynamic programming over the binomial path (the tests hold it to
``<= α``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .statistics import one_sided_lower, one_sided_upper

__all__ = [
    "LookSchedule",
    "crossing_probability",
    "sequence_lower",
    "sequence_upper",
]


@dataclass(frozen=True)
class LookSchedule:
    """Looks at cumulative sizes ``first · growth^j`` (``j < looks``), α split evenly.

    Parameters
    ----------
    first : samples at the first look (per histogram).
    growth : ratio of consecutive cumulative sizes (> 1).
    looks : number of looks ``J`` (the last one may be cut by the budget, never moved).
    """

    first: int
    growth: float = 2.0
    looks: int = 4

    def __post_init__(self):
        if not (isinstance(self.first, (int, np.integer)) and self.first >= 1):
            raise ValueError(f"first must be an integer >= 1, got {self.first!r}")
        if not (isinstance(self.growth, (int, float)) and self.growth > 1):
            raise ValueError(f"growth must be a number > 1, got {self.growth!r}")
        if not (isinstance(self.looks, (int, np.integer)) and self.looks >= 1):
            raise ValueError(f"looks must be an integer >= 1, got {self.looks!r}")

    @classmethod
    def ending_at(cls, total: int, growth: float = 2.0, looks: int = 4) -> LookSchedule:
        """The schedule whose last look is at (at most) ``total`` samples."""
        first = max(1, int(total / growth ** (looks - 1)))
        return cls(first, growth, looks)

    def sizes(self) -> list[int]:
        """Cumulative sample sizes of the looks (strictly increasing)."""
        sizes: list[int] = []
        for j in range(self.looks):
            n = int(self.first * self.growth**j)
            sizes.append(max(n, sizes[-1] + 1) if sizes else n)
        return sizes

    def alpha_at(self, alpha: float, look: int) -> float:
        """``α_j``: the level of each look's bound (even spending, ``Σ α_j = α``)."""
        if not 0 <= look < self.looks:
            raise ValueError(f"look must be in [0, {self.looks}), got {look!r}")
        return float(alpha) / self.looks


def sequence_lower(hits, n, alpha, schedule: LookSchedule, look: int):
    """Lower bound at ``look`` of the confidence sequence (valid at any stopping look)."""
    return one_sided_lower(hits, n, schedule.alpha_at(alpha, look))


def sequence_upper(hits, n, alpha, schedule: LookSchedule, look: int):
    """Upper bound at ``look`` of the confidence sequence (valid at any stopping look)."""
    return one_sided_upper(hits, n, schedule.alpha_at(alpha, look))


def crossing_probability(p: float, sizes, alphas, upper: bool = False) -> float:
    """Exact ``P(∃ j: the level-α_j bound at n_j is on the wrong side of p)``.

    Dynamic programming over the binomial path: the law of the hits at look ``j``
    restricted to paths that have not crossed yet, convolved with the binomial law of
    the next increment. ``upper=False`` checks lower bounds (crossing: bound > p),
    ``upper=True`` upper bounds (bound < p). Cost O(n_J²); meant for n_J up to a few
    thousand (tests).

    Parameters
    ----------
    p : the true proportion.
    sizes : cumulative sample sizes of the looks (increasing).
    alphas : one-sided level of the bound at each look.
    upper : which bound to check.
    """
    from scipy.stats import binom

    sizes = [int(n) for n in sizes]
    alive = np.array([1.0])  # law of the hits so far on paths that never crossed
    previous = 0
    crossed = 0.0
    for n, a in zip(sizes, alphas):
        step = binom.pmf(np.arange(n - previous + 1), n - previous, p)
        alive = np.convolve(alive, step)
        hits = np.arange(n + 1)
        if upper:
            wrong = one_sided_upper(hits, np.full(n + 1, n), a) < p
        else:
            wrong = one_sided_lower(hits, np.full(n + 1, n), a) > p
        crossed += float(alive[wrong].sum())
        alive = np.where(wrong, 0.0, alive)
        previous = n
    return crossed
