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
   tuned in a unit read off the pilot (steps 2 and 3: [`part_bounds`][dpaudit.auditor.greybox.part_bounds]);
4. check the declaration where it matters: ``D'`` under the same tilt, under each probe's shift,
   and plain; an outcome of ``D'`` in ``S`` (or of ``D`` outside ``support(D)``) means the
   declaration is false, [`DeclaredSupportError`][dpaudit.auditor.greybox.declared_support.DeclaredSupportError]
   ([`declaration_check`][dpaudit.auditor.greybox.declaration_check]).

The bound relies on the declaration (``Q = 0``); step 4 tests it but cannot prove it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from mechanisms import DeclaresOutputSupport, validate_counts
from mechanisms.validation import (
    require_nonnegative_float,
    require_positive_int,
    require_probability,
)

from .declaration_check import Declared, check_declaration
from .declared_support import check_support
from .inputs import Seed, sample_method, seed_sequence
from .part_bounds import (
    GapItemBound,
    PartBound,
    PartRuns,
    first_gap_item,
    mixture_part_bound,
    one_shift,
    part_event,
    shifted_part_bound,
    way_component,
)
from .recording import Draw
from .tilt_probe import (
    PROBE_SHIFTS,
    coordinate_shift,
    draw_coordinates,
    probe_tilts,
    probe_ways,
    tiltable_chunk,
)
from .tilted_generator import TiltKey

__all__ = ["StructuralDelta", "detectable_delta", "structural_delta"]


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


@dataclass(frozen=True, eq=False)
class _Inputs:
    """The checked inputs: the sampler, ``D`` and ``D'`` with their supports, the claim, sizes."""

    sample: Any
    d: Declared
    d2: Declared
    epsilon: float
    delta: float
    alpha: float
    runs: int
    pilot_runs: int
    chunk: int


def _inputs(
    mechanism: Any,
    counts: Any,
    neighbour: Any,
    claim: tuple[float, float],
    sizes: tuple[float, int, int, int],
) -> _Inputs:
    """The inputs checked in this order; ``sizes`` is ``(alpha, runs, pilot_runs, chunk)``."""
    if not isinstance(mechanism, DeclaresOutputSupport):
        raise ValueError(
            f"{type(mechanism).__name__} declares no output_support(counts): the structural-zero "
            "stage needs it (mechanisms.DeclaresOutputSupport)"
        )
    sample = sample_method(mechanism)
    d, d2 = _counts(counts, "counts"), _counts(neighbour, "neighbour")
    epsilon = require_nonnegative_float("claim epsilon", float(claim[0]))
    delta = require_probability("claim delta", float(claim[1]))
    alpha, runs, pilot_runs, chunk = sizes
    alpha = require_probability("alpha", alpha)
    runs = require_positive_int("runs", runs, minimum=2)
    pilot_runs = require_positive_int("pilot_runs", pilot_runs)
    chunk = require_positive_int("chunk", chunk)
    support = frozenset(mechanism.output_support(np.array(d)))
    support2 = frozenset(mechanism.output_support(np.array(d2)))
    if not support - support2:
        raise ValueError(
            f"support(D) \\ support(D') is empty for D={list(d)}, D'={list(d2)}: this pair has "
            "no structural zero (pick a pair whose limited domains differ, in this order)"
        )
    side, side2 = Declared(np.array(d), d, support), Declared(np.array(d2), d2, support2)
    return _Inputs(sample, side, side2, epsilon, delta, alpha, runs, pilot_runs, chunk)


@dataclass(frozen=True, eq=False)
class _Probed:
    """Step 1's findings: the batch rows, the parts' event, and per gap item its ways in and tilt."""

    rows: int
    first_item: Any
    gap: list[int]
    ways: dict[int, list[tuple[Draw, int | None, float]]]
    initial: dict[int, dict[TiltKey, np.ndarray]]
    resting: dict[TiltKey, np.ndarray]
    spent: int


def _probe(inputs: _Inputs, seed: np.random.SeedSequence) -> _Probed:
    """Step 1: the batch size at which the noise is tiltable, and each part's ways in."""
    d, items = inputs.d, inputs.d.support - inputs.d2.support
    rows, draws = tiltable_chunk(inputs.sample, d.array, inputs.chunk, seed.spawn(1)[0])
    gap = sorted(items)
    first_item = first_gap_item(
        items, lambda outcomes: check_support(outcomes, d.counts, d.support, "importance-sampled")
    )
    # Laplace noise on two or more coordinates: a part that two or more single shifts reach (the
    # stability family: the threshold's noise down, or any gap's up) needs a sum of draws to be
    # large, and gets a mixture of exponential tilts, one component per way in (tilt_mixture).
    # A part with one way in, and any other noise, gets the probe's shift, refined.
    ways: dict[int, list[tuple[Draw, int | None, float]]] = {}
    if len(draw_coordinates(draws)) >= 2 and all(draw.method == "laplace" for draw in draws):
        ways, spent = probe_ways(inputs.sample, d.array, first_item, gap, draws, seed, rows)
        initial = {item: one_shift(*found[0]) for item, found in ways.items()}
    else:
        initial, spent = probe_tilts(inputs.sample, d.array, first_item, gap, draws, seed, rows)
    # A part no probe reaches is left out: the bound is then on the union of the parts reached,
    # which is inside S, so it still bounds P(S | D) from below. The probe runs on its own
    # streams, so which parts are kept is fixed before the main runs (sample splitting). Some
    # parts are empty: TopStable releases its items ascending, so the largest of its top-k̄ is
    # never the first gap item of an outcome when k >= 2.
    if not any(item in initial for item in gap):
        raise ValueError(
            f"no shift of up to {PROBE_SHIFTS[-1]:g} scales of one noise coordinate made the items "
            f"{gap} appear on D={list(d.counts)}: no tilt to start from"
        )
    # Every tiltable draw is in the tilt (unshifted but for the probe's coordinate), so that the
    # pilot moves the other noise of the event too (the threshold's, ⊥'s).
    resting: dict[TiltKey, np.ndarray] = {
        draw.index: coordinate_shift(draw, 0 if len(draw.shape) == 2 else None, 0.0)
        for draw in draws
    }
    return _Probed(rows, first_item, gap, ways, initial, resting, spent)


def _bound_parts(
    sample: Any,
    counts: np.ndarray,
    probed: _Probed,
    settings: PartRuns,
    seeds: tuple[np.random.SeedSequence, np.random.SeedSequence],
) -> tuple[list[GapItemBound], int]:
    """Steps 2 and 3 for every part reached (``sample`` from ``_inputs``): bounds, pilot runs."""
    pilot_seed, main_seed = seeds
    parts, spent = [], 0
    gap = probed.gap
    for item, pilot_s, main_s in zip(gap, pilot_seed.spawn(len(gap)), main_seed.spawn(len(gap))):
        if item not in probed.initial:
            continue
        bound: PartBound
        proposal: Any
        if len(probed.ways.get(item, ())) >= 2:
            bound, proposal = mixture_part_bound, [way_component(*w) for w in probed.ways[item]]
        else:
            bound, proposal = shifted_part_bound, {**probed.resting, **probed.initial[item]}
        event = part_event(probed.first_item, item)
        part, used = bound(sample, counts, event, item, proposal, settings, (pilot_s, main_s))
        parts.append(part)
        spent += used
    return parts, spent


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

    Issue 43, item 3; the steps are in the module docstring. ``SeedSequence(seed).spawn(4)``
    gives the probe, the pilots, the main runs and the checks, so the tilts and the bets' unit are
    fixed before the main runs. ``P(S | D) >= lower`` with probability ``>= 1 − alpha`` (the
    betting lower bound needs only ``w 1{S} >= 0`` and its mean ``P(S | D)``: the weight bound
    ``1/λ`` does not enter); with the declaration ``P(S | D') = 0``, ``δ(ε) >= lower``.

    Parameters
    ----------
    mechanism : declares ``output_support`` and draws only from its ``rng``.
    counts, neighbour : ``D`` and ``D'`` (full histograms).
    claim, alpha : ``(ε, δ)`` claimed; the lower bound's failure probability, in (0, 1).
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``.
    runs, pilot_runs : main runs (>= 2); runs per cross-entropy round (three rounds).
    check_runs : runs of ``D'`` under the tilt, and again plain (0 skips the check).
    mixture : ``λ`` of the defensive mixture.
    chunk : the largest batch size tried (halved until the noise is one row per run).

    Raises
    ------
    DeclaredSupportError : an outcome contradicts the declared supports.
    ValueError : no declared support, no structural zero on the pair, or no tilt reaches ``S``.
    """
    started = time.perf_counter()
    inputs = _inputs(mechanism, counts, neighbour, claim, (alpha, runs, pilot_runs, chunk))
    probe_seed, pilot_seed, main_seed, check_seed = seed_sequence(seed).spawn(4)
    probed = _probe(inputs, probe_seed)
    reached = sum(item in probed.initial for item in probed.gap)
    share = max(2, inputs.runs // reached)
    settings = PartRuns(probed.rows, share, inputs.pilot_runs, mixture, inputs.alpha / reached)
    d, d2 = inputs.d, inputs.d2
    parts, used = _bound_parts(inputs.sample, d.array, probed, settings, (pilot_seed, main_seed))
    checked = 0
    if check_runs:
        checked = check_declaration(
            inputs.sample, d, d2, parts, check_runs=check_runs, rows=probed.rows, seed=check_seed
        )
    return _result(
        inputs, probed, parts, share * reached, probed.spent + used, checked, mixture, started
    )


def _result(
    inputs: _Inputs,
    probed: _Probed,
    parts: list[GapItemBound],
    runs: int,
    pilot_runs: int,
    check_runs: int,
    mixture: float,
    started: float,
) -> StructuralDelta:
    """The bound of the parts reached, with what it spent and the claim it tests."""
    estimate = sum(part.estimate for part in parts)
    return StructuralDelta(
        pair=(inputs.d.counts, inputs.d2.counts),
        items=inputs.d.support - inputs.d2.support,
        parts=tuple(parts),
        runs=runs,
        pilot_runs=pilot_runs,
        check_runs=check_runs,
        hits=sum(part.hits for part in parts),
        mixture=mixture,
        estimate=float(estimate),
        lower=float(sum(part.lower for part in parts)),
        level=1.0 - inputs.alpha,
        claimed_epsilon=inputs.epsilon,
        claimed_delta=inputs.delta,
        detectable_delta=detectable_delta(tuple(parts), inputs.delta, inputs.alpha),
        seconds=time.perf_counter() - started,
        unreached=frozenset(item for item in probed.gap if item not in probed.initial),
    )
