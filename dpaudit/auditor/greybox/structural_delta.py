"""The δ a mechanism spends on a structural zero, bounded from below by importance sampling.

Issue 43, item 3. A mechanism that declares its output support
([`DeclaresOutputSupport`][mechanisms.base.DeclaresOutputSupport]: the limited-domain and
stability families) can output an item of ``support(D) \\ support(D')`` under ``D`` but never
under ``D'``. For ``S`` = "the outcome holds such an item", ``P(S | D') = 0`` exactly, so the
privacy profile at the claimed ε is at least ``P(S | D) − e^ε · 0 = P(S | D)``: a lower bound on
``P(S | D)`` is a lower bound on δ. That probability is about the claimed δ (1e-6 to 1e-10), out
of reach of plain sampling, and made common here by tilting the mechanism's own noise:

0. split ``S`` into disjoint parts ``S_j`` ("the first gap item of the outcome is ``j``"), each
   bounded on its own at ``α / J`` (one shift cannot make a union of rare events common);
1. probe: find the batch size at which the mechanism's noise is tiltable (a location-family
   draw with one row per run), and for each part the smallest shift of one coordinate of those
   draws (by a growing multiple of its scale) that reaches it;
2. pilot: [`cross_entropy_tilt`][dpaudit.auditor.greybox.cross_entropy.cross_entropy_tilt] refines
   each tilt on streams the main run never uses. Where the noise is Laplace on two or more
   coordinates, the probe lists every shift that reaches each part
   ([`probe_ways`][dpaudit.auditor.greybox.tilt_probe.probe_ways]), and a part reached two or
   more ways (a sum of draws: a gap's noise up or the threshold's down) is drawn from a mixture
   of exponential tilts, one component per way, fitted by
   [`mixture_cross_entropy`][dpaudit.auditor.greybox.mixture_fit.mixture_cross_entropy];
3. main: runs from the defensive mixture ``λ p + (1 − λ) p̃``
   ([`weighted_runs`][dpaudit.auditor.greybox.tilted_runs.weighted_runs]), and the betting lower
   bound on ``P(S | D)`` ([`betting_lower_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_lower_bound]),
   tuned in a unit read off the pilot;
4. check the declaration where it matters: ``D'`` under the same tilt, under each probe's shift,
   and plain; an outcome of ``D'`` in ``S`` (or of ``D`` outside ``support(D)``) means the
   declaration is false, [`DeclaredSupportError`][dpaudit.auditor.greybox.declared_support.DeclaredSupportError].

The bound relies on the declaration (``Q = 0``); step 4 tests it but cannot prove it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import stats

from mechanisms import BOTTOM, PAD, DeclaresOutputSupport, validate_counts
from mechanisms.validation import (
    require_nonnegative_float,
    require_positive_int,
    require_probability,
)

from ..bounds.weighted_bounds import betting_lower_bound
from .cross_entropy import cross_entropy_tilt
from .declared_support import DeclaredSupportError, check_support
from .inputs import Seed, sample_method, seed_sequence
from .mixture_fit import mixture_cross_entropy
from .recording import Draw
from .tilt_mixture import mixture_runs, tilt_for_mean
from .tilt_probe import (
    ALL_SHIFTED,
    PROBE_SHIFTS,
    coordinate_shift,
    draw_coordinates,
    draw_scale,
    probe_tilts,
    probe_ways,
    tiltable_chunk,
    tiltable_draws,
)
from .tilted_generator import TiltKey
from .tilted_runs import WeightedRuns, weighted_runs

__all__ = [
    "GapItemBound",
    "StructuralDelta",
    "detectable_delta",
    "structural_delta",
]

#: The probability with which the detectable δ is detected.
DETECTION_PROBABILITY = 0.9


@dataclass(frozen=True, eq=False)
class StructuralDelta:
    """A lower bound on the δ spent on one structural zero, at the claimed ε.

    Built by [`structural_delta`][dpaudit.auditor.greybox.structural_delta.structural_delta].
    ``δ(ε) >= delta_lower`` for the claimed ε holds with probability ``>= level`` if the
    declaration holds (``P(S | D') = 0``).

    Parameters
    ----------
    pair : ``(D, D')`` as tuples of counts; ``S`` has probability 0 on ``D'``.
    items : ``support(D) \\ support(D')``: ``S`` = "the outcome holds one of them".
    parts : one bound per gap item ``j`` a probe reached, on ``S_j`` = "the first gap item of
        the outcome is ``j``": disjoint parts of ``S``, each with its own tilt, at ``α / J``
        each (``J`` parts).
    runs : main runs on ``D``, all parts together.
    pilot_runs : runs spent on the probes and the cross-entropy pilots.
    check_runs : runs of ``D'`` (and ``D``) that checked the declaration.
    hits : main runs in ``S``.
    mixture : ``λ`` of the defensive mixture (weights <= ``1/λ``).
    estimate : ``P̂(S | D)``, the sum of the parts' means of ``w 1{S_j}`` (unbiased).
    lower : the sum of the parts' betting lower bounds: a lower bound on ``P(S | D)``.
    level : ``1 − α`` of ``lower``.
    claimed_epsilon, claimed_delta : the claim.
    detectable_delta : the smallest true ``P(S | D)`` that a run like this one flags
        (``lower > claimed_delta``) with probability 0.9, approximately (formula and caveats:
        [`detectable_delta`][dpaudit.auditor.greybox.structural_delta.detectable_delta]).
    seconds : wall-clock time, all steps.
    unreached : gap items no probe reached: their parts are left out, and ``lower`` bounds the
        union of the others (a part may be empty, or out of reach of one shifted coordinate).
    """

    pair: tuple[tuple[int, ...], tuple[int, ...]]
    items: frozenset[int]
    parts: tuple[GapItemBound, ...]
    runs: int
    pilot_runs: int
    check_runs: int
    hits: int
    mixture: float
    estimate: float
    lower: float
    level: float
    claimed_epsilon: float
    claimed_delta: float
    detectable_delta: float
    seconds: float
    unreached: frozenset[int] = frozenset()

    @property
    def delta_lower(self) -> float:
        """The δ lower bound at the claimed ε: ``lower − e^ε · 0``."""
        return self.lower

    @property
    def violation(self) -> bool:
        """Whether the bound refutes the claim: ``delta_lower > claimed_delta``."""
        return self.lower > self.claimed_delta


def _first_gap_item(items: frozenset[int], check: Any) -> Any:
    """Each run's first item of ``items`` in its outcome, ``PAD`` if it has none."""
    gap = np.array(sorted(items), dtype=np.int64)

    def first_item(outcomes: Any) -> np.ndarray:
        check(outcomes)
        batch = np.asarray(outcomes)
        in_gap = np.isin(batch, gap)
        first = batch[np.arange(batch.shape[0]), np.argmax(in_gap, axis=1)]
        return np.where(in_gap.any(axis=1), first, PAD)

    return first_item


def _part_event(first_item: Any, item: int) -> Any:
    """``S_item``: the first gap item of the outcome is ``item``."""

    def event(outcomes: Any) -> np.ndarray:
        return np.asarray(first_item(outcomes)) == item

    return event


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


# ------------------------------------------------------------------------------- power


def detectable_delta(parts: tuple[GapItemBound, ...], claimed_delta: float, alpha: float) -> float:
    """The smallest ``P(S | D)`` that a run like this one flags with probability 0.9 (approx.).

    Model: a mechanism whose ``P(S | D)`` is ``r`` times this one's, sampled with the same
    proposals, has weighted hits ``r Y`` (the same relative efficiency). The betting bound is
    scale-equivariant (its unit scales too), so its bound is ``r L``, ``L`` the bound it would
    get here, and it flags ``r P`` when ``r L > δ_claim``. ``L = Σ_j L_j`` moves with the
    estimate ``Σ_j Ȳ_j``, of standard deviation ``sqrt(Σ_j σ_j² / n_j)``: its 10 % quantile is
    about ``lower − z_0.9 σ⁺`` (normal approximation), with ``σ_j⁺`` the upper ``1 − α``
    chi-square bound on each standard deviation from its sample variance (exact for normal
    data, an approximation for weighted hits). So

        detectable δ = δ_claim · P̂ / (lower − z_0.9 · sqrt(Σ_j (σ_j⁺)² / n_j)),

    infinite when the denominator is not positive. Approximate: the normal quantile, the
    chi-square bound, ``P ≈ P̂`` in the ratio, and above all the model (a proposal that misses
    part of ``S`` shows no variance there); conservative in using the realised ``lower`` (its
    betting margin included) and ``σ⁺`` rather than ``σ̂``.
    """
    estimate = sum(part.estimate for part in parts)
    lower = sum(part.lower for part in parts)
    if estimate <= 0.0 or any(part.runs < 2 for part in parts):
        return math.inf
    spread = math.sqrt(
        sum(
            part.variance * (part.runs - 1) / stats.chi2.ppf(alpha, part.runs - 1) / part.runs
            for part in parts
        )
    )
    quantile = lower - stats.norm.ppf(DETECTION_PROBABILITY) * spread
    if quantile <= 0.0:
        return math.inf
    return claimed_delta * estimate / quantile


# ------------------------------------------------------------------------------- stage


def _counts(counts: Any, name: str) -> tuple[int, ...]:
    return tuple(int(c) for c in validate_counts(counts, name))


def structural_delta(
    mechanism: Any,
    counts: Any,
    neighbour: Any,
    *,
    claim: tuple[float, float],
    alpha: float,
    seed: Seed,
    runs: int = 200_000,
    pilot_runs: int = 5_000,
    check_runs: int = 20_000,
    mixture: float = 0.1,
    chunk: int = 2048,
) -> StructuralDelta:
    """A lower bound on ``P(S | counts)`` for ``S`` = an item of ``support(D) \\ support(D')``.

    See the module docstring for the steps. The streams: ``SeedSequence(seed).spawn(4)`` gives
    the probe, the pilot (whose own rounds live under the pilot key of
    [`cross_entropy_tilt`][dpaudit.auditor.greybox.cross_entropy.cross_entropy_tilt]), the main
    runs and the checks, so the tilt and the bets' unit are fixed before the main runs.

    ``P(S | D) >= lower`` with probability ``>= 1 − alpha`` (the betting lower bound needs only
    ``w 1{S} >= 0`` and its mean ``P(S | D)``: the weight bound ``1/λ`` does not enter), and
    with the declaration ``P(S | D') = 0`` the δ of the claim's ε is at least ``lower``.

    Parameters
    ----------
    mechanism : declares ``output_support`` and draws only from its ``rng``.
    counts, neighbour : ``D`` and ``D'`` (full histograms).
    claim : ``(ε, δ)`` claimed.
    alpha : failure probability of the lower bound, in (0, 1).
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``.
    runs : main runs (>= 2).
    pilot_runs : runs per cross-entropy round (three rounds).
    check_runs : runs of ``D'`` under the tilt, and again plain (0 skips the check).
    mixture : ``λ`` of the defensive mixture.
    chunk : the largest batch size tried (halved until the noise is one row per run).

    Raises
    ------
    DeclaredSupportError : an outcome contradicts the declared supports.
    ValueError : the mechanism declares no support, the pair changes none, or no tilt
        reaches ``S``.
    """
    started = time.perf_counter()
    if not isinstance(mechanism, DeclaresOutputSupport):
        raise ValueError(
            f"{type(mechanism).__name__} declares no output_support(counts): the structural-zero "
            "stage needs it (mechanisms.DeclaresOutputSupport)"
        )
    sample = sample_method(mechanism)
    d = _counts(counts, "counts")
    d2 = _counts(neighbour, "neighbour")
    epsilon = require_nonnegative_float("claim epsilon", float(claim[0]))
    delta = require_probability("claim delta", float(claim[1]))
    alpha = require_probability("alpha", alpha)
    runs = require_positive_int("runs", runs, minimum=2)
    pilot_runs = require_positive_int("pilot_runs", pilot_runs)
    chunk = require_positive_int("chunk", chunk)
    support = frozenset(mechanism.output_support(np.array(d)))
    support2 = frozenset(mechanism.output_support(np.array(d2)))
    items = support - support2
    if not items:
        raise ValueError(
            f"support(D) \\ support(D') is empty for D={list(d)}, D'={list(d2)}: this pair has "
            "no structural zero (pick a pair whose limited domains differ, in this order)"
        )
    probe_seed, pilot_seed, main_seed, check_seed = seed_sequence(seed).spawn(4)
    counts_d = np.array(d)

    def check_d(outcomes: Any) -> None:
        check_support(outcomes, d, support, "importance-sampled")

    rows, draws = tiltable_chunk(sample, counts_d, chunk, probe_seed.spawn(1)[0])
    gap = sorted(items)
    first_item = _first_gap_item(items, check_d)
    # Laplace noise on two or more coordinates: a part that two or more single shifts reach (the
    # stability family: the threshold's noise down, or any gap's up) needs a sum of draws to be
    # large, and gets a mixture of exponential tilts, one component per way in (tilt_mixture).
    # A part with one way in, and any other noise, gets the probe's shift, refined.
    ways: dict[int, list[tuple[Draw, int | None, float]]] = {}
    if len(draw_coordinates(draws)) >= 2 and all(draw.method == "laplace" for draw in draws):
        ways, spent = probe_ways(mechanism, counts_d, first_item, gap, draws, probe_seed, rows)
        initial = {item: _one_shift(*found[0]) for item, found in ways.items()}
    else:
        initial, spent = probe_tilts(mechanism, counts_d, first_item, gap, draws, probe_seed, rows)
    # A part no probe reaches is left out: the bound is then on the union of the parts reached,
    # which is inside S, so it still bounds P(S | D) from below. The probe runs on its own
    # streams, so which parts are kept is fixed before the main runs (sample splitting). Some
    # parts are empty: TopStable releases its items ascending, so the largest of its top-k̄ is
    # never the first gap item of an outcome when k >= 2.
    reached = [item for item in gap if item in initial]
    if not reached:
        raise ValueError(
            f"no shift of up to {PROBE_SHIFTS[-1]:g} scales of one noise coordinate made the items "
            f"{gap} appear on D={list(d)}: no tilt to start from"
        )
    # Every tiltable draw is in the tilt (unshifted but for the probe's coordinate), so that the
    # pilot moves the other noise of the event too (the threshold's, ⊥'s).
    resting: dict[TiltKey, np.ndarray] = {
        d.index: coordinate_shift(d, 0 if len(d.shape) == 2 else None, 0.0) for d in draws
    }
    share = max(2, runs // len(reached))
    parts = []
    pilot_seeds, main_seeds = pilot_seed.spawn(len(gap)), main_seed.spawn(len(gap))
    for item, pilot_s, main_s in zip(gap, pilot_seeds, main_seeds):
        if item not in initial:
            continue
        if len(ways.get(item, ())) >= 2:
            part, used = _mixture_bound(
                mechanism,
                counts_d,
                _part_event(first_item, item),
                item,
                [_way_component(*way) for way in ways[item]],
                rows=rows,
                runs=share,
                pilot_runs=pilot_runs,
                mixture=mixture,
                alpha=alpha / len(reached),
                seeds=(pilot_s, main_s),
            )
            parts.append(part)
            spent += used
            continue
        part, used = _gap_item_bound(
            mechanism,
            counts_d,
            _part_event(first_item, item),
            item,
            {**resting, **initial[item]},
            rows=rows,
            runs=share,
            pilot_runs=pilot_runs,
            mixture=mixture,
            alpha=alpha / len(reached),
            seeds=(pilot_s, main_s),
        )
        parts.append(part)
        spent += used
    checked = 0
    if check_runs:
        checked = _check_declaration(
            mechanism,
            counts_d,
            np.array(d2),
            d,
            d2,
            support,
            support2,
            parts,
            check_runs,
            rows,
            check_seed,
        )
    estimate = sum(part.estimate for part in parts)
    return StructuralDelta(
        pair=(d, d2),
        items=items,
        parts=tuple(parts),
        runs=share * len(reached),
        pilot_runs=spent,
        check_runs=checked,
        hits=sum(part.hits for part in parts),
        mixture=mixture,
        estimate=float(estimate),
        lower=float(sum(part.lower for part in parts)),
        level=1.0 - alpha,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        detectable_delta=detectable_delta(tuple(parts), delta, alpha),
        seconds=time.perf_counter() - started,
        unreached=frozenset(item for item in gap if item not in initial),
    )


def _gap_item_bound(
    mechanism: Any,
    counts: np.ndarray,
    event: Any,
    item: int,
    initial: dict[TiltKey, np.ndarray],
    *,
    rows: int,
    runs: int,
    pilot_runs: int,
    mixture: float,
    alpha: float,
    seeds: tuple[np.random.SeedSequence, ...],
) -> tuple[GapItemBound, int]:
    """Pilot and main runs for one part ``S_item`` from the probe's tilt; the bound, pilot runs."""
    pilot_seed, main_seed = seeds
    spent = 0
    tilts: Mapping[TiltKey, np.ndarray] = initial
    try:
        pilot = cross_entropy_tilt(
            mechanism,
            counts,
            event,
            initial=initial,
            mixture=mixture,
            samples=pilot_runs,
            seed=pilot_seed,
            rounds=3,
            chunk=rows,
        )
        spent += pilot.pilot_samples
        tilts = pilot.tilts
        last = pilot.rounds[-1]
        scale = last.estimate * last.samples / last.hits if last.hits else 0.0
    except ValueError:
        # Every pilot weight vanished: keep the probe's shift.
        spent += pilot_runs
        scale = 0.0
    if not scale > 0.0:
        scale = 1.0 / mixture
    main = weighted_runs(
        mechanism,
        counts,
        event,
        tilts=tilts,
        mixture=mixture,
        samples=runs,
        seed=main_seed,
        chunk=rows,
    )
    return _part(item, main, scale=scale, alpha=alpha, tilts=tilts), spent


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


def _one_shift(draw: Draw, column: int | None, multiple: float) -> dict[TiltKey, np.ndarray]:
    """A probe's way in as a location shift of ``multiple`` scales on the draw's column."""
    return {draw.index: coordinate_shift(draw, column, multiple * draw_scale(draw))}


def _way_component(draw: Draw, column: int | None, multiple: float) -> dict[int, np.ndarray]:
    """A probe's way in as a tilt of the draw's column whose tilted mean is the probe's shift."""
    theta = coordinate_shift(draw, column, float(tilt_for_mean(multiple)))
    return {draw.index: theta}


def _mixture_bound(
    mechanism: Any,
    counts: np.ndarray,
    event: Any,
    item: int,
    ways: list[dict[int, np.ndarray]],
    *,
    rows: int,
    runs: int,
    pilot_runs: int,
    mixture: float,
    alpha: float,
    seeds: tuple[np.random.SeedSequence, ...],
) -> tuple[GapItemBound, int]:
    """Pilot and main runs for one part from a mixture of exponential tilts, one per way in."""
    pilot_seed, main_seed = seeds
    fit = mixture_cross_entropy(
        mechanism,
        counts,
        event,
        initial=ways,
        mixture=mixture,
        samples=pilot_runs,
        seed=pilot_seed,
        rounds=3,
        chunk=rows,
    )
    scale = fit.estimate * pilot_runs / fit.hits if fit.hits else 0.0
    if not scale > 0.0:
        scale = 1.0 / mixture
    main = mixture_runs(
        mechanism,
        counts,
        event,
        components=fit.components,
        shares=fit.shares,
        mixture=mixture,
        samples=runs,
        seed=main_seed,
        chunk=rows,
    )
    part = _part(
        item,
        main,
        scale=scale,
        alpha=alpha,
        tilts=MappingProxyType({}),
        components=fit.components,
        shares=fit.shares,
    )
    return part, fit.pilot_samples


def _check_declaration(
    mechanism: Any,
    counts_d: np.ndarray,
    counts_d2: np.ndarray,
    d: tuple[int, ...],
    d2: tuple[int, ...],
    support: frozenset[int],
    support2: frozenset[int],
    parts: list[GapItemBound],
    check_runs: int,
    rows: int,
    seed: np.random.SeedSequence,
) -> int:
    """Run ``D'`` under each part's tilt, under each probe shift, and plain; ``D`` plain.

    Returns the runs spent; raises ``DeclaredSupportError`` at the first outcome that
    contradicts a declaration.
    """
    tilted_seed, probe_seed, plain_seed, plain_d_seed = seed.spawn(4)
    sample = sample_method(mechanism)
    spent = 0

    def event_d2(how: str) -> Any:
        def event(outcomes: Any) -> np.ndarray:
            check_support(outcomes, d2, support2, how)
            return np.zeros(np.shape(outcomes)[0], dtype=bool)

        return event

    def first_item_d2(outcomes: Any) -> np.ndarray:
        check_support(outcomes, d2, support2, "probe")
        return np.full(np.shape(outcomes)[0], PAD)

    # The same tilts: they make the gap items as likely as a tilt of D's noise can.
    share = max(1, check_runs // len(parts))
    for part, stream in zip(parts, tilted_seed.spawn(len(parts))):
        try:
            if part.components:
                mixture_runs(
                    mechanism,
                    counts_d2,
                    event_d2(f"tilted for item {part.item}"),
                    components=part.components,
                    shares=part.shares,
                    mixture=ALL_SHIFTED,
                    samples=share,
                    seed=stream,
                    chunk=rows,
                )
            else:
                weighted_runs(
                    mechanism,
                    counts_d2,
                    event_d2(f"tilted for item {part.item}"),
                    tilts=part.tilts,
                    mixture=ALL_SHIFTED,
                    samples=share,
                    seed=stream,
                    chunk=rows,
                )
        except DeclaredSupportError:
            raise
        except ValueError:
            continue  # D''s noise has another shape (a smaller domain): the probes cover it
        spent += share
    d2_draws = tiltable_draws(sample, counts_d2, rows, probe_seed.spawn(1)[0])
    if d2_draws:
        _, probed = probe_tilts(
            mechanism, counts_d2, first_item_d2, [BOTTOM], d2_draws, probe_seed, rows
        )
        spent += probed
    plain = np.random.Generator(np.random.PCG64(plain_seed))
    check_support(sample(counts_d2, check_runs, plain), d2, support2, "plain")
    plain_d = np.random.Generator(np.random.PCG64(plain_d_seed))
    check_support(sample(counts_d, check_runs, plain_d), d, support, "plain")
    return spent + 2 * check_runs
