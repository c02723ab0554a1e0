"""Did an event's privacy loss grow? One-sided tests on two independent tallies (issue 46).

The test [`dpaudit.compare`][dpaudit.compare] runs on each (pair, event) two audits share:
[`growth_p_value`][dpaudit.loss_growth.growth_p_value] (its docstring states the test and its
assumptions; ``docs/guide/compare.md`` shows how it is calibrated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["MIN_CELL", "TEST", "Tally", "growth_p_value"]

#: Hits and misses per sample below which the normal approximation is called rough.
MIN_CELL = 10

#: The test, in one line (under a comparison's table and in its JSON).
TEST = (
    "one-sided Wald tests that |ln(P/Q)| (and, when delta > 0, delta at the claimed epsilon) "
    "grew, on counts + 1/2; Bonferroni over the matched (pair, event)s"
)


@dataclass(frozen=True)
class Tally:
    """Hits of one event on its pair: ``hits_p`` of ``samples_p`` on the first histogram,
    ``hits_q`` of ``samples_q`` on the second."""

    hits_p: int
    samples_p: int
    hits_q: int
    samples_q: int

    @classmethod
    def of(cls, witness, swap: bool = False) -> Tally:
        """A [`Witness`][dpaudit.auditor.Witness]'s counts (the histograms swapped when
        ``swap``)."""
        tally = cls(witness.hits_p, witness.samples_p, witness.hits_q, witness.samples_q)
        return tally.swapped() if swap else tally

    def swapped(self) -> Tally:
        return Tally(self.hits_q, self.samples_q, self.hits_p, self.samples_p)

    @property
    def few_hits(self) -> bool:
        """Some sample has fewer than ``MIN_CELL`` hits or misses: the Wald test is rough."""
        return (
            min(
                self.hits_p,
                self.samples_p - self.hits_p,
                self.hits_q,
                self.samples_q - self.hits_q,
            )
            < MIN_CELL
        )

    def epsilon_hat(self) -> float:
        """``|ln(P̂ / Q̂)|`` (``inf`` when one side has no hits, NaN when neither has)."""
        p = self.hits_p / self.samples_p if self.samples_p else 0.0
        q = self.hits_q / self.samples_q if self.samples_q else 0.0
        if p == 0 and q == 0:
            return math.nan
        if p == 0 or q == 0:
            return math.inf
        return abs(math.log(p / q))

    def delta_hat(self, epsilon: float) -> float:
        """``max(0, P̂ − e^ε Q̂, Q̂ − e^ε P̂)``: the event's δ at ``epsilon``."""
        p = self.hits_p / self.samples_p if self.samples_p else 0.0
        q = self.hits_q / self.samples_q if self.samples_q else 0.0
        return max(0.0, p - math.exp(epsilon) * q, q - math.exp(epsilon) * p)


class _Estimate(NamedTuple):
    value: float
    variance: float

    def __neg__(self) -> _Estimate:
        return _Estimate(-self.value, self.variance)


def _smoothed(hits: int, n: int) -> float:
    """``(x + 1/2) / (n + 1)``: half a hit and half a miss added (Haldane; Anscombe 1956)."""
    return (hits + 0.5) / (n + 1)


def _log_ratio(t: Tally) -> _Estimate:
    """``ln(P̃ / Q̃)`` and its delta-method variance ``Σ 1/(x + ½) − 1/(n + 1)`` (Katz 1978)."""
    value = math.log(_smoothed(t.hits_p, t.samples_p)) - math.log(_smoothed(t.hits_q, t.samples_q))
    variance = (
        1 / (t.hits_p + 0.5) - 1 / (t.samples_p + 1) + 1 / (t.hits_q + 0.5) - 1 / (t.samples_q + 1)
    )
    return _Estimate(value, variance)


def _hockey_sticks(t: Tally, epsilon: float) -> tuple[_Estimate, _Estimate]:
    """``P̃ − e^ε Q̃`` and ``Q̃ − e^ε P̃`` with their binomial variances."""
    p, q = _smoothed(t.hits_p, t.samples_p), _smoothed(t.hits_q, t.samples_q)
    var_p, var_q = p * (1 - p) / (t.samples_p + 1), q * (1 - q) / (t.samples_q + 1)
    scale = math.exp(epsilon)
    return (
        _Estimate(p - scale * q, var_p + scale**2 * var_q),
        _Estimate(q - scale * p, var_q + scale**2 * var_p),
    )


def _above(difference: _Estimate) -> float:
    """One-sided Wald p-value of ``difference > 0``: ``1 − Φ(value / sd)``."""
    if difference.variance <= 0:
        return 0.0 if difference.value > 0 else 1.0
    z = difference.value / math.sqrt(difference.variance)
    return 0.5 * math.erfc(z / math.sqrt(2))


def _grew(new: Sequence[_Estimate], old: Sequence[_Estimate]) -> float:
    """p-value that ``max(new) > max(old)`` (each estimate of the new side independent of each
    of the old side).

    ``max(new) > max(old)`` holds when some branch ``new[i]`` exceeds every ``old[j]``. A branch
    is an intersection-union test (Berger 1982): it rejects when each ``new[i] > old[j]`` does,
    so its p-value is the largest of theirs; the branches are joined by Bonferroni.
    """
    branches = [
        max(_above(_Estimate(n.value - o.value, n.variance + o.variance)) for o in old) for n in new
    ]
    return min(1.0, len(new) * min(branches))


def growth_p_value(old: Tally, new: Tally, epsilon: float, delta: float) -> float:
    """One-sided p-value that the event's privacy loss is larger under ``new`` than ``old``.

    The loss on an event with probabilities ``P`` (first histogram) and ``Q`` (second) is
    ``|ln(P / Q)| = max(ln(P/Q), −ln(P/Q))`` and, when the claimed ``delta`` is above 0, also
    its δ at the claimed ``epsilon``, ``max(0, P − e^ε Q, Q − e^ε P)``. For each loss
    ``max(new terms) > max(old terms)`` is tested by intersection-union tests
    (Berger 1982), each leg a one-sided Wald test (a z-test on a difference of
    estimates from independent samples). The two losses are joined by Bonferroni: the p-value
    is ``min(1, m × min(p_ε, p_δ))`` with ``m`` the number of losses tested (1 or 2).

    Estimates: half a hit and half a miss are added to each sample (Haldane 1956; Anscombe
    1956), so a count of 0 has a finite log; ``ln P̃`` has the delta-method variance
    ``1/(x + ½) − 1/(n + 1)`` of a log relative risk (Katz et al. 1978), ``P̃`` the binomial
    ``P̃(1 − P̃)/(n + 1)``.

    Assumptions: the four counts are independent binomial draws with the sample sizes fixed in
    advance (the old and new audits draw their own samples; the two histograms of a pair are
    sampled apart); the normal approximation holds, which wants at least ``MIN_CELL`` (10)
    hits and misses in each sample ([`Tally.few_hits`][dpaudit.loss_growth.Tally.few_hits] marks
    rows with fewer; a zero count makes ``ln`` uncertain, so the ε test then has little power
    and the δ test carries the comparison). An audit with sequential looks (the default)
    stopped at a data-dependent look: its counts are then approximately, not exactly, of a fixed
    size, and the re-test (fixed-size fresh samples on the new side) is the cleaner route.

    References
    ----------
    R. L. Berger (1982), Multiparameter hypothesis testing and acceptance sampling,
    *Technometrics* 24(4), 295-300 (the intersection-union test).
    J. B. S. Haldane (1956), The estimation and significance of the logarithm of a ratio of
    frequencies, *Annals of Human Genetics* 20(4), 309-311; F. J. Anscombe (1956), On estimating
    binomial response relations, *Biometrika* 43(3/4), 461-464 (adding one half).
    D. Katz, J. Baptista, S. P. Azen, M. C. Pike (1978), Obtaining confidence intervals for the
    risk ratio in cohort studies, *Biometrics* 34(3), 469-474 (the variance of ``ln P̂``).
    """
    old_log, new_log = _log_ratio(old), _log_ratio(new)
    p_values = [_grew([new_log, -new_log], [old_log, -old_log])]
    if delta > 0:
        zero = _Estimate(0.0, 0.0)
        p_values.append(_grew(_hockey_sticks(new, epsilon), [*_hockey_sticks(old, epsilon), zero]))
    return min(1.0, len(p_values) * min(p_values))
