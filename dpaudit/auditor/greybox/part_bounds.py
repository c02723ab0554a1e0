"""The lower bound on one part of a structural zero's event, from its pilot and main runs.

Issue 43, item 3, steps 2 and 3 of [`structural_delta`][dpaudit.auditor.greybox.structural_delta]:
``S`` ("the outcome holds a gap item") is split into the disjoint parts ``S_j`` ("the first gap
item of the outcome is ``j``"), and each part reached by a probe is bounded on its own: a pilot
refines its proposal on streams of its own, then the main runs from the defensive mixture give the
betting lower bound on ``P(S_j | D)``, in a unit read off the pilot. A part reached one way takes
the probe's location shift, refined by
[`cross_entropy_tilt`][dpaudit.auditor.greybox.cross_entropy.cross_entropy_tilt]; a part reached
two or more ways (a sum of Laplace draws) a mixture of exponential tilts, one component per way,
fitted by [`mixture_cross_entropy`][dpaudit.auditor.greybox.mixture_fit.mixture_cross_entropy].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from mechanisms import PAD

from ..bounds.weighted_bounds import betting_lower_bound
from .cross_entropy import cross_entropy_tilt
from .mixture_fit import mixture_cross_entropy
from .recording import Draw
from .tilt_mixture import mixture_runs, tilt_for_mean
from .tilt_probe import coordinate_shift, draw_scale
from .tilted_generator import TiltKey
from .tilted_runs import WeightedRuns, weighted_runs

__all__ = [
    "GapItemBound",
    "PartBound",
    "PartRuns",
    "first_gap_item",
    "mixture_part_bound",
    "one_shift",
    "part_event",
    "shifted_part_bound",
    "way_component",
]


@dataclass(frozen=True, eq=False)
class GapItemBound:
    """The bound on one part ``S_item`` of ``S`` (the first gap item in the outcome is ``item``).

    Parameters
    ----------
    item : the gap item.
    runs : main runs.
    hits : main runs in ``S_item``.
    tilts : ``{draw index: shift}`` of the proposal.
    scale : the unit of the bets (the mean weight of a pilot hit).
    estimate : the mean of ``w 1{S_item}``.
    lower : the betting lower bound at ``α / J``.
    variance : the sample variance of ``w 1{S_item}``.
    components, shares : for a part bounded from a mixture of exponential tilts
        ([`tilt_mixture`][dpaudit.auditor.greybox.tilt_mixture]; ``tilts`` is then empty): per
        component ``{draw index: θ}``, and its share ``β_j``.
    """

    item: int
    runs: int
    hits: int
    tilts: Mapping[TiltKey, np.ndarray]
    scale: float
    estimate: float
    lower: float
    variance: float
    components: tuple[Mapping[int, np.ndarray], ...] = ()
    shares: tuple[float, ...] = ()


@dataclass(frozen=True)
class PartRuns:
    """How every part is run: batch rows, main and pilot runs, ``λ``, and each part's ``α``.

    Parameters
    ----------
    rows : the batch size at which the noise is one row per run.
    runs : main runs of the part.
    pilot_runs : runs per pilot round (three rounds).
    mixture : ``λ`` of the defensive mixture.
    alpha : the part's failure probability, ``α / J``.
    """

    rows: int
    runs: int
    pilot_runs: int
    mixture: float
    alpha: float

    def pilot(self, seed: np.random.SeedSequence) -> dict[str, Any]:
        """The pilot's keywords: three rounds of ``pilot_runs`` from the mixture, on ``seed``."""
        return {
            "mixture": self.mixture,
            "samples": self.pilot_runs,
            "seed": seed,
            "rounds": 3,
            "chunk": self.rows,
        }

    def main(self, seed: np.random.SeedSequence) -> dict[str, Any]:
        """The main runs' keywords: ``runs`` from the mixture, on ``seed``."""
        return {"mixture": self.mixture, "samples": self.runs, "seed": seed, "chunk": self.rows}

    def unit(self, scale: float) -> float:
        """The pilot's unit ``scale``, or ``1 / λ`` where the pilot gave none (not > 0)."""
        return scale if scale > 0.0 else 1.0 / self.mixture


#: ``bound(sample, counts, event, item, proposal, settings, seeds) -> (bound, pilot runs)``.
PartBound = Callable[..., tuple[GapItemBound, int]]


def first_gap_item(items: frozenset[int], check: Any) -> Any:
    """Each run's first item of ``items`` in its outcome, ``PAD`` if it has none.

    Parameters
    ----------
    items : the gap items.
    check : ``check(outcomes)``, called first on every batch (the declared-support check).
    """
    gap = np.array(sorted(items), dtype=np.int64)

    def first_item(outcomes: Any) -> np.ndarray:
        check(outcomes)
        batch = np.asarray(outcomes)
        in_gap = np.isin(batch, gap)
        first = batch[np.arange(batch.shape[0]), np.argmax(in_gap, axis=1)]
        return np.where(in_gap.any(axis=1), first, PAD)

    return first_item


def part_event(first_item: Any, item: int) -> Any:
    """``S_item``: the first gap item of the outcome is ``item``."""

    def event(outcomes: Any) -> np.ndarray:
        return np.asarray(first_item(outcomes)) == item

    return event


def one_shift(draw: Draw, column: int | None, multiple: float) -> dict[TiltKey, np.ndarray]:
    """A probe's way in as a location shift of ``multiple`` scales on the draw's column."""
    return {draw.index: coordinate_shift(draw, column, multiple * draw_scale(draw))}


def way_component(draw: Draw, column: int | None, multiple: float) -> dict[int, np.ndarray]:
    """A probe's way in as a tilt of the draw's column whose tilted mean is the probe's shift."""
    theta = coordinate_shift(draw, column, float(tilt_for_mean(multiple)))
    return {draw.index: theta}


def _part(
    item: int, main: WeightedRuns, *, scale: float, alpha: float, **proposal: Any
) -> GapItemBound:
    """The part's bound from its main runs: the betting lower bound in the unit ``scale``."""
    values = main.values
    return GapItemBound(
        item=item,
        runs=len(values),
        hits=int(main.hits.sum()),
        scale=float(scale),
        estimate=float(values.mean()),
        lower=betting_lower_bound(values, scale=scale, alpha=alpha, horizon=len(values)),
        variance=float(values.var(ddof=1)),
        **proposal,
    )


def shifted_part_bound(
    sample: Callable[..., Any],
    counts: np.ndarray,
    event: Any,
    item: int,
    initial: dict[TiltKey, np.ndarray],
    settings: PartRuns,
    seeds: tuple[np.random.SeedSequence, ...],
) -> tuple[GapItemBound, int]:
    """Pilot and main runs for one part ``S_item`` from the probe's tilt; the bound, pilot runs.

    ``sample`` is the mechanism's ``sample(counts, size, rng)``; the rest as for ``bound``.
    """
    pilot_seed, main_seed = seeds
    spent = 0
    tilts: Mapping[TiltKey, np.ndarray] = initial
    try:
        pilot = cross_entropy_tilt(
            sample, counts, event, initial=initial, **settings.pilot(pilot_seed)
        )
        spent += pilot.pilot_samples
        tilts = pilot.tilts
        last = pilot.rounds[-1]
        scale = last.estimate * last.samples / last.hits if last.hits else 0.0
    except ValueError:
        # Every pilot weight vanished: keep the probe's shift.
        spent += settings.pilot_runs
        scale = 0.0
    main = weighted_runs(sample, counts, event, tilts=tilts, **settings.main(main_seed))
    return _part(item, main, scale=settings.unit(scale), alpha=settings.alpha, tilts=tilts), spent


def mixture_part_bound(
    sample: Callable[..., Any],
    counts: np.ndarray,
    event: Any,
    item: int,
    ways: list[dict[int, np.ndarray]],
    settings: PartRuns,
    seeds: tuple[np.random.SeedSequence, ...],
) -> tuple[GapItemBound, int]:
    """Pilot and main runs for one part from a mixture of exponential tilts, one per way in.

    ``sample`` is the mechanism's ``sample(counts, size, rng)``; the rest as for ``bound``.
    """
    pilot_seed, main_seed = seeds
    fit = mixture_cross_entropy(sample, counts, event, initial=ways, **settings.pilot(pilot_seed))
    scale = fit.estimate * settings.pilot_runs / fit.hits if fit.hits else 0.0
    main = mixture_runs(
        sample,
        counts,
        event,
        components=fit.components,
        shares=fit.shares,
        **settings.main(main_seed),
    )
    part = _part(
        item,
        main,
        scale=settings.unit(scale),
        alpha=settings.alpha,
        tilts=MappingProxyType({}),
        components=fit.components,
        shares=fit.shares,
    )
    return part, fit.pilot_samples
