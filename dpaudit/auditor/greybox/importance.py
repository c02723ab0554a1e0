"""Rare events by importance sampling: tilted draws, bounded weights, valid bounds.

DESIGN.md, "Black box and grey box"; issue 43, item 3. A rare event ``S`` of a mechanism's outcome
is made common by drawing some of its noise from a shifted law, and each run is weighted by its
likelihood ratio. The proposal is a defensive mixture (Hesterberg, "Weighted average importance
sampling and defensive mixture distributions", Technometrics 37(2), 1995): each run takes the
mechanism's own law ``p`` with probability ``λ`` and the shifted law ``p̃`` otherwise, so its
weight ``w = p / (λ p + (1 − λ) p̃)`` is at most ``1/λ`` and
[`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound] turns the weighted hits
``Y = w 1{S}`` into confidence bounds on ``P(S)``.

* [`TiltedGenerator`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator] (its own
  module): the generator handed to the mechanism for one batch; it shifts the chosen draws and
  keeps each run's log ratio.
* [`weighted_runs`][dpaudit.auditor.greybox.tilted_runs.weighted_runs] (its own module): the
  weighted runs, chunk by chunk.
* [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability]
  (here): bounds on ``P(S | counts)`` from weighted runs.
* [`cross_entropy_tilt`][dpaudit.auditor.greybox.cross_entropy.cross_entropy_tilt] (its own
  module): a shift chosen on a pilot by the cross-entropy method, on streams the main run never
  uses.

Why the bounds hold: with ``w`` the runs' weights, ``Y = w 1{S}`` has mean exactly ``P(S)``
(``E_m[(p/m) 1{S}] = P_p(S)``; the runs are i.i.d. across chunks too) and lies in ``[0, B]``;
the bounds are the betting bounds of Waudby-Smith & Ramdas (JRSS-B 2024, Theorem 3) with their
bets tuned for the number of runs. ``B`` is ``1/λ`` unless a smaller bound is given, which must
hold for every run in ``S`` whatever its component (for noisy-argmax events,
[`noisy_max_weight_bound`][dpaudit.auditor.greybox.argmax_weights.noisy_max_weight_bound]). ``B``
sets the floor: no upper bound goes below about ``B ln(1/α) / n``, and a lower bound stays 0
until ``n P(S) / B`` is several times ``ln(1/α)``. See
[`weighted_bounds`][dpaudit.auditor.bounds.weighted_bounds] and
[`argmax_weights`][dpaudit.auditor.greybox.argmax_weights] for bounds far below ``1/λ`` on
noisy-argmax events.

The tilts must be chosen before the runs (given, or from a pilot on other streams, as
``cross_entropy_tilt`` does), and the mechanism must draw only from the ``rng`` it is given
([`check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng]).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms.validation import require_positive_int, require_probability

from ..bounds.weighted_bounds import WeightedBound, betting_bound
from .inputs import Seed, sample_method
from .tilted_generator import TiltKey, Tilts, frozen_tilts, tilt_table
from .tilted_runs import Event, WeightedRuns, weighted_runs

__all__ = ["ImportanceSampledProbability", "importance_sampled_probability"]


def _effective(weights: np.ndarray) -> float:
    """Kish's effective sample size ``(Σ w)² / Σ w²`` (0 when every weight is 0)."""
    square = float(np.square(weights).sum())
    return float(weights.sum()) ** 2 / square if square > 0.0 else 0.0


@dataclass(frozen=True, eq=False)
class ImportanceSampledProbability:
    """Confidence bounds on ``P(S | counts)`` from importance-sampled runs.

    Built by
    [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability].
    ``P(S) >= low`` and ``P(S) <= high`` each hold with probability ``>= 1 − alpha``.

    Parameters
    ----------
    low, high : the betting bounds on ``P(S)``.
    estimate : the mean of ``Y = w 1{S}``, an unbiased estimate of ``P(S)``.
    samples : the runs.
    hits : the runs in ``S``.
    effective_samples : Kish's ``(Σ w)² / Σ w²`` over all runs.
    mixture : ``λ``.
    weight_bound : ``B``, the bound on every ``Y`` the inference assumed.
    alpha : the failure probability of each one-sided bound.
    tilts : ``{key: shift}`` of the proposal.
    bound : the [`WeightedBound`][dpaudit.auditor.bounds.weighted_bounds.WeightedBound] behind
        ``low`` and ``high``.
    """

    low: float
    high: float
    estimate: float
    samples: int
    hits: int
    effective_samples: float
    mixture: float
    weight_bound: float
    alpha: float
    tilts: Mapping[TiltKey, np.ndarray]
    bound: WeightedBound

    @classmethod
    def from_runs(
        cls,
        runs: WeightedRuns,
        bound: WeightedBound,
        *,
        mixture: float,
        weight_bound: float,
        alpha: float,
        tilts: Mapping[TiltKey, np.ndarray],
    ) -> ImportanceSampledProbability:
        """The result of ``bound``, the betting bounds on the ``values`` of ``runs``.

        Parameters
        ----------
        runs : the weighted runs.
        bound : their betting bounds.
        mixture, weight_bound, alpha, tilts : ``λ``, ``B``, ``α`` and the proposal's tilts.
        """
        values = runs.values
        return cls(
            low=float(bound.low),
            high=float(bound.high),
            estimate=float(values.mean()),
            samples=len(values),
            hits=int(runs.hits.sum()),
            effective_samples=_effective(runs.weights),
            mixture=mixture,
            weight_bound=weight_bound,
            alpha=alpha,
            tilts=frozen_tilts(tilts),
            bound=bound,
        )

    @property
    def relative_width(self) -> float:
        """``(high − low) / estimate`` (``inf`` when the estimate is 0)."""
        return (self.high - self.low) / self.estimate if self.estimate > 0.0 else math.inf

    @property
    def upper_floor(self) -> float:
        """``B ln(1/α) / n``: about the smallest upper bound ``n`` runs can give at this ``B``."""
        return self.weight_bound * math.log(1.0 / self.alpha) / self.samples


def _weight_bound(weight_bound: float | None, mixture: float) -> float:
    """``B``: ``1/λ``, or the given bound after checking it lies in ``(0, 1/λ]``."""
    largest = 1.0 / mixture
    if weight_bound is None:
        return largest
    bound = float(weight_bound)
    if not 0.0 < bound <= largest:
        raise ValueError(
            f"weight_bound must be in (0, 1/mixture] = (0, {largest!r}], got {weight_bound!r}"
        )
    return bound


def _check_weight_bound(values: np.ndarray, bound: float, weight_bound: float | None) -> None:
    """Refuse a given ``weight_bound`` that a run in the event exceeds."""
    if weight_bound is not None and np.any(values > bound):
        run = int(np.argmax(values > bound))
        raise ValueError(
            f"weight_bound={weight_bound!r} is not a bound on the weight over the event: run "
            f"{run} is in the event with weight {values[run]!r}. Derive it for these tilts and this "
            "event (argmax_weights.noisy_max_weight_bound for a noisy argmax), or pass None "
            "(1/mixture)"
        )


def importance_sampled_probability(
    mechanism: Any,
    counts: Any,
    event: Event,
    *,
    tilts: Tilts,
    mixture: float = 0.1,
    samples: int,
    seed: Seed,
    alpha: float,
    chunk: int = 65_536,
    weight_bound: float | None = None,
) -> ImportanceSampledProbability:
    """Bounds on ``P(event | counts)`` from ``samples`` runs drawn from a defensive mixture.

    Issue 43, item 3; the betting bounds of Waudby-Smith & Ramdas (JRSS-B 2024, Theorem 3) on
    ``Y = w 1{S}`` in ``[0, B]`` (why they hold, and the floor ``B`` sets: the module docstring).
    The runs are [`weighted_runs`][dpaudit.auditor.greybox.tilted_runs.weighted_runs]. A run in
    ``S`` whose weight exceeds a given ``weight_bound`` refutes it, and is refused.

    Parameters
    ----------
    mechanism : an object with ``sample(counts, size, rng)``.
    counts : the histogram.
    event : ``event(outcomes) -> bool array``, one entry per run (row of the batch).
    tilts : ``{key: shift}`` (see [`TiltedGenerator`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator]).
    mixture : ``λ`` in (0, 1].
    samples : the number of runs (>= 1).
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``.
    alpha : failure probability of each one-sided bound, in (0, 1).
    chunk : runs per batch (>= 1); no larger than the mechanism's own chunk of rows.
    weight_bound : None (``1/λ``), or a bound on ``w`` over the event, <= ``1/λ``.
    """
    table = tilt_table(tilts)
    mixture = require_probability("mixture", mixture, allow_one=True)
    samples = require_positive_int("samples", samples)
    chunk = require_positive_int("chunk", chunk)
    alpha = require_probability("alpha", alpha)
    bound = _weight_bound(weight_bound, mixture)
    runs = weighted_runs(
        sample_method(mechanism),
        counts,
        event,
        tilts=table,
        mixture=mixture,
        samples=samples,
        seed=seed,
        chunk=chunk,
    )
    y = runs.values
    _check_weight_bound(y, bound, weight_bound)
    result = betting_bound(y, weight_bound=bound, alpha=alpha, horizon=samples)
    return ImportanceSampledProbability.from_runs(
        runs, result, mixture=mixture, weight_bound=bound, alpha=alpha, tilts=table
    )
