"""Rare events by importance sampling: tilted draws, bounded weights, valid bounds.

DESIGN.md, "Black box and grey box"; issue 43, item 3. A rare event ``S`` of a mechanism's outcome
is made common by drawing some of its noise from a shifted law, and each run is weighted by its
likelihood ratio. The proposal is a defensive mixture (Hesterberg, "Weighted average importance
sampling and defensive mixture distributions", Technometrics 37(2), 1995): each run takes the
mechanism's own law ``p`` with probability ``λ`` and the shifted law ``p̃`` otherwise, so its
weight ``w = p / (λ p + (1 − λ) p̃)`` is at most ``1/λ`` and
[`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound] turns the weighted hits
``Y = w 1{S}`` into confidence bounds on ``P(S)``.

* [`TiltedGenerator`][dpaudit.auditor.greybox.importance.TiltedGenerator]: the generator handed to
  the mechanism for one batch; it shifts the chosen draws and keeps each run's log ratio.
* [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability]:
  bounds on ``P(S | counts)`` from weighted runs.
* [`cross_entropy_tilt`][dpaudit.auditor.greybox.importance.cross_entropy_tilt]: a shift chosen on
  a pilot by the cross-entropy method, on streams the main run never uses.

The weight bound decides how small a probability can be bounded: see
[`weighted_bounds`][dpaudit.auditor.bounds.weighted_bounds] (an upper bound cannot go below about
``B ln(1/α) / n``) and [`argmax_weights`][dpaudit.auditor.greybox.argmax_weights] for bounds far
below ``1/λ`` on noisy-argmax events.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import stats

from mechanisms.validation import require_positive_int, require_probability

from ..bounds.weighted_bounds import WeightedBound, betting_bound
from .inputs import Seed, sample_method, seed_sequence
from .recording import RecordingGenerator
from .sites import short_path

__all__ = [
    "LOCATION_FAMILIES",
    "CrossEntropyRound",
    "CrossEntropyTilt",
    "ImportanceSampledProbability",
    "TiltedDraw",
    "TiltedGenerator",
    "WeightedRuns",
    "cross_entropy_tilt",
    "importance_sampled_probability",
    "weighted_runs",
]

#: The draws a tilt can shift: numpy's location families, ``method(loc, scale, size)``.
LOCATION_FAMILIES: tuple[str, ...] = ("gumbel", "laplace", "logistic", "normal")

# scipy's law of each family (numpy's gumbel is the maximum type, scipy's gumbel_r), and the
# mean of the standard law (Euler's γ for the Gumbel).
_LAWS = {
    "gumbel": stats.gumbel_r,
    "laplace": stats.laplace,
    "logistic": stats.logistic,
    "normal": stats.norm,
}
_STANDARD_MEAN = {"gumbel": float(np.euler_gamma), "laplace": 0.0, "logistic": 0.0, "normal": 0.0}
_PARAMETERS = ("loc", "scale", "size")

# The pilot's streams: SeedSequence(seed) with this spawn key first, never one of the main
# run's children (their keys are the chunk numbers, far below it).
_PILOT_KEY = 2**32 - 1

TiltKey = int | str
Tilts = Mapping[TiltKey, Any]
Event = Callable[[Any], Any]


def _tilt_table(tilts: Tilts) -> dict[TiltKey, np.ndarray]:
    """``{key: read-only float64 shift}`` after checking keys and shifts."""
    if not isinstance(tilts, Mapping) or not tilts:
        raise ValueError(
            "tilts must be a non-empty mapping {key: shift}: key a draw's index in the trace "
            "(int >= 0) or its call site ('file.py:123'), shift an array of location shifts"
        )
    table: dict[TiltKey, np.ndarray] = {}
    for key, shift in tilts.items():
        if isinstance(key, bool) or not isinstance(key, (int, np.integer, str)):
            raise ValueError(f"a tilt key must be a draw index (int >= 0) or a site, got {key!r}")
        if isinstance(key, str):
            if not key:
                raise ValueError("a tilt key must not be the empty string")
        elif key < 0:
            raise ValueError(f"a tilt key must be a draw index >= 0, got {key!r}")
        try:
            array = np.array(shift, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"the shift of tilt {key!r} must be an array of numbers, got {shift!r}"
            ) from None
        if not np.all(np.isfinite(array)):
            raise ValueError(f"the shift of tilt {key!r} must be finite, got {shift!r}")
        array.flags.writeable = False
        table[key if isinstance(key, str) else int(key)] = array
    return table


def _frozen_tilts(table: Mapping[TiltKey, np.ndarray]) -> Mapping[TiltKey, np.ndarray]:
    return MappingProxyType(dict(table))


@dataclass(frozen=True)
class TiltedDraw:
    """One draw of a batch that a tilt shifted.

    Parameters
    ----------
    index : the draw's position in the trace.
    method : the location family ("gumbel", "laplace", "logistic", "normal").
    site : ``file:line`` of the call.
    key : the tilt that matched it (the index or the site).
    """

    index: int
    method: str
    site: str
    key: TiltKey


class TiltedGenerator(RecordingGenerator):
    """A recording generator for one batch of ``size`` runs, some of whose draws are shifted.

    Issue 43, item 3. Each run (row ``r`` of the batch) is drawn from the defensive mixture
    ``λ p + (1 − λ) p̃`` (Hesterberg 1995): its component is fixed once, at construction, from
    ``components`` (``original`` is True with probability ``λ``), and holds for all the row's
    tilted coordinates. A tilt shifts the location of the location-family draws (laplace,
    gumbel, normal, logistic) it matches, by draw index (the ``k``-th recorded call) or by call
    site; its shift broadcasts to the draw's shape without the leading axis, which must be the
    batch (``size`` rows; anything else is refused, naming the site). Draws that no tilt matches
    are numpy's own.

    How a tilted draw is made: numpy draws the whole array with the caller's own parameters from
    the caller's stream, then the rows of the proposal component get ``+ shift``. So the rows of
    the original component are numpy's draw, untouched, and their law is exactly ``p``: the
    draw's elements are independent and identically distributed, and the components come from a
    separate stream, independent of them, so selecting rows by component does not change their
    law. The proposal rows are ``loc + shift + scale·Z``, the same family at location
    ``loc + shift``. The mechanism's stream is read exactly as without the tilt (same calls,
    same amounts), so with ``λ = 1`` every draw is numpy's, draw for draw. (The shifted value is
    rounded once, ``fl(x + shift)``; the weight is computed at that value.)

    For each row it accumulates ``Σ (log p(x) − log p̃(x))`` over its tilted coordinates, under
    the draw's own law (scipy's ``logpdf`` at the original and the shifted location);
    [`weights`][dpaudit.auditor.greybox.importance.TiltedGenerator.weights] turns it into
    ``w = p / (λ p + (1 − λ) p̃)``. This is the likelihood ratio of the whole run as long as
    each row's outcome depends on its own rows of the draws only (the batch contract of
    ``sample(counts, size, rng)``: rows are independent runs), which the generator cannot check.

    Children from ``spawn`` record into the trace but are not tilted.

    Parameters
    ----------
    bit_generator : the mechanism's stream (``numpy.random.PCG64(seed)``).
    size : the number of runs in the batch (>= 1).
    tilts : ``{key: shift}``; key an ``int`` draw index or a ``"file:line"`` site.
    mixture : ``λ`` in (0, 1], the probability of the original component.
    components : a separate ``numpy.random.BitGenerator`` for the components.
    values : as for [`RecordingGenerator`][dpaudit.auditor.greybox.recording.RecordingGenerator]
        (the tilted values are the ones kept).
    keep_noise : keep each tilted draw's values minus their mean under ``p``, for
        [`cross_entropy_tilt`][dpaudit.auditor.greybox.importance.cross_entropy_tilt].
    """

    def __init__(
        self,
        bit_generator: np.random.BitGenerator,
        *,
        size: int,
        tilts: Tilts,
        mixture: float,
        components: np.random.BitGenerator,
        values: bool = False,
        keep_noise: bool = False,
    ) -> None:
        super().__init__(bit_generator, values=values)
        if not isinstance(components, np.random.BitGenerator):
            raise TypeError(
                "components must be a numpy.random.BitGenerator on a stream of its own, such as "
                f"numpy.random.PCG64(seed_sequence.spawn(1)[0]), got {type(components).__name__}"
            )
        if components is bit_generator:
            raise ValueError(
                "components must be a stream of its own, not the mechanism's bit_generator"
            )
        self._size = require_positive_int("size", size)
        self._mixture = require_probability("mixture", mixture, allow_one=True)
        self._tilts = _tilt_table(tilts)
        self._original = np.random.Generator(components).random(self._size) < self._mixture
        self._original.flags.writeable = False
        self._log_ratio = np.zeros(self._size)
        self._tilted: list[TiltedDraw] = []
        self._keep_noise = bool(keep_noise)
        self._noise: dict[TiltKey, list[np.ndarray]] = {}

    @property
    def size(self) -> int:
        """The number of runs in the batch."""
        return self._size

    @property
    def mixture(self) -> float:
        """``λ``, the probability of the original component."""
        return self._mixture

    @property
    def tilts(self) -> Mapping[TiltKey, np.ndarray]:
        """The tilts, ``{key: shift}`` (read-only)."""
        return _frozen_tilts(self._tilts)

    @property
    def original(self) -> np.ndarray:
        """Per row, True if it takes the original law (read-only)."""
        return self._original

    @property
    def log_ratio(self) -> np.ndarray:
        """Per row, ``Σ log p(x) − log p̃(x)`` over its tilted coordinates so far (a copy)."""
        return self._log_ratio.copy()

    @property
    def tilted_draws(self) -> tuple[TiltedDraw, ...]:
        """The draws shifted so far, in order."""
        return tuple(self._tilted)

    @property
    def unmatched(self) -> tuple[TiltKey, ...]:
        """The tilts that no draw has matched so far."""
        used = {draw.key for draw in self._tilted}
        return tuple(key for key in self._tilts if key not in used)

    def noise(self, key: TiltKey) -> tuple[np.ndarray, ...]:
        """The draws ``key`` matched, minus their mean under ``p`` (needs ``keep_noise``)."""
        if not self._keep_noise:
            raise ValueError("noise() needs TiltedGenerator(..., keep_noise=True)")
        return tuple(self._noise.get(key, ()))

    def weights(self) -> np.ndarray:
        """Per row ``w = 1 / (λ + (1 − λ) exp(Σ log p̃ − Σ log p))``: ``p / (λ p + (1 − λ) p̃)``.

        At most ``1/λ``; under the mixture its mean is exactly 1 (``E_m[p/m] = ∫ p = 1``).
        """
        if self._mixture == 1.0:
            return np.ones(self._size)
        with np.errstate(over="ignore"):
            ratio = np.exp(-self._log_ratio)  # p̃/p; inf gives a weight of 0
        return 1.0 / (self._mixture + (1.0 - self._mixture) * ratio)

    def _tilt(self, method: str, index: int, out: Any, args: tuple, kwargs: dict) -> Any:
        """Shift the proposal rows of the draw just recorded at ``index``, if a tilt matches."""
        entry = self._log[index]
        code, line = entry[4], entry[5]
        site = f"{short_path(code.co_filename)}:{line}"
        keys = [key for key in (index, site) if key in self._tilts]
        if not keys:
            return out
        if len(keys) > 1:
            raise ValueError(
                f"draw #{index} {method} at {site} is matched by two tilts, by index and by "
                "site; keep one"
            )
        key = keys[0]
        shape = np.shape(out)
        if not shape or shape[0] != self._size:
            raise ValueError(
                f"the tilted draw #{index} {method} at {site} has shape {shape}, but a tilted draw "
                f"must hold the batch's {self._size} runs on its leading axis (one row per run): "
                "a mechanism that draws in chunks of rows or per run cannot be tilted there; "
                "sample in batches no larger than its chunk, or tilt another draw"
            )
        shift = self._tilts[key]
        try:
            fits = np.broadcast_shapes(shift.shape, shape[1:]) == shape[1:]
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"the shift of tilt {key!r} has shape {shift.shape}, which does not broadcast to "
                f"the shape {shape[1:]} of one row of draw #{index} {method} at {site}"
            )
        named = dict(zip(_PARAMETERS, args))
        named.update(kwargs)
        loc = np.asarray(named.get("loc", 0.0), dtype=np.float64)
        scale = np.asarray(named.get("scale", 1.0), dtype=np.float64)
        proposal = ~self._original
        out[proposal] += shift
        law = _LAWS[method]
        log_ratio = law.logpdf(out, loc, scale) - law.logpdf(out, loc + shift, scale)
        self._log_ratio += log_ratio.reshape(self._size, -1).sum(axis=1)
        if self._keep_values:
            kept = np.array(out)
            kept.flags.writeable = False
            self._log[index] = entry[:6] + (kept,)
        if self._keep_noise:
            centred = out - (loc + scale * _STANDARD_MEAN[method])
            self._noise.setdefault(key, []).append(np.broadcast_to(centred, shape).copy())
        self._tilted.append(TiltedDraw(index, method, site, key))
        return out


def _tilter(method: str) -> Callable[..., Any]:
    """The tilting override of ``RecordingGenerator.<method>``."""
    recorded = getattr(RecordingGenerator, method)

    def tilted(self: TiltedGenerator, *args: Any, **kwargs: Any) -> Any:
        if self._depth:  # numpy's own call from inside a recorded one
            return recorded(self, *args, **kwargs)
        index = self.draw_count
        out = recorded(self, *args, **kwargs)
        return self._tilt(method, index, out, args, kwargs)

    tilted.__name__ = method
    tilted.__qualname__ = f"TiltedGenerator.{method}"
    tilted.__doc__ = f"``Generator.{method}``, recorded, and shifted where a tilt matches."
    return tilted


for _method in LOCATION_FAMILIES:
    setattr(TiltedGenerator, _method, _tilter(_method))
del _method


# ------------------------------------------------------------------------------ runs


def _hits(event: Event, outcomes: Any, rows: int) -> np.ndarray:
    hits = np.asarray(event(outcomes))
    if hits.dtype != np.bool_ or hits.shape != (rows,):
        raise ValueError(
            f"event(outcomes) must return a boolean array of shape ({rows},), one entry per "
            f"run, got dtype {hits.dtype} and shape {hits.shape}"
        )
    return hits


@dataclass(frozen=True)
class _Batch:
    weights: np.ndarray
    hits: np.ndarray
    noise: dict[TiltKey, np.ndarray]


def _run_batch(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    stream: np.random.SeedSequence,
    rows: int,
    table: Mapping[TiltKey, np.ndarray],
    mixture: float,
    keep_noise: bool,
) -> _Batch:
    """One chunk: a fresh ``TiltedGenerator`` on ``stream``'s two children, the weights and hits."""
    mechanism_stream, component_stream = stream.spawn(2)
    rng = TiltedGenerator(
        np.random.PCG64(mechanism_stream),
        size=rows,
        tilts=table,
        mixture=mixture,
        components=np.random.PCG64(component_stream),
        keep_noise=keep_noise,
    )
    outcomes = sample(counts, rows, rng)
    if rng.unmatched:
        recorded = "; ".join(str(draw) for draw in rng.draws) or "no draws"
        raise ValueError(
            f"the tilts {list(rng.unmatched)!r} matched no {'/'.join(LOCATION_FAMILIES)} draw of "
            f"the mechanism; it recorded: {recorded}"
        )
    noise: dict[TiltKey, np.ndarray] = {}
    if keep_noise:
        for key in table:
            draws = rng.noise(key)
            if len(draws) != 1:
                raise ValueError(
                    f"tilt {key!r} matched {len(draws)} draws of one batch; the cross-entropy "
                    "update needs exactly one: key the tilt by draw index"
                )
            noise[key] = draws[0]
    return _Batch(rng.weights(), _hits(event, outcomes, rows), noise)


def _chunks(samples: int, chunk: int) -> list[int]:
    full, rest = divmod(samples, chunk)
    return [chunk] * full + ([rest] if rest else [])


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

    @property
    def relative_width(self) -> float:
        """``(high − low) / estimate`` (``inf`` when the estimate is 0)."""
        return (self.high - self.low) / self.estimate if self.estimate > 0.0 else math.inf

    @property
    def upper_floor(self) -> float:
        """``B ln(1/α) / n``: about the smallest upper bound ``n`` runs can give at this ``B``."""
        return self.weight_bound * math.log(1.0 / self.alpha) / self.samples


@dataclass(frozen=True, eq=False)
class WeightedRuns:
    """The runs of one importance-sampled draw: per run its weight and whether it hit ``S``.

    Built by [`weighted_runs`][dpaudit.auditor.greybox.importance.weighted_runs]; in run order
    (chunk after chunk), so that a confidence sequence may read them one by one.

    Parameters
    ----------
    weights : ``w = p / (λ p + (1 − λ) p̃)`` of every run, in ``[0, 1/λ]``.
    hits : whether each run's outcome is in the event.
    """

    weights: np.ndarray
    hits: np.ndarray

    @property
    def values(self) -> np.ndarray:
        """``Y = w 1{S}``, whose mean is an unbiased estimate of ``P(S)``."""
        return np.where(self.hits, self.weights, 0.0)


def weighted_runs(
    mechanism: Any,
    counts: Any,
    event: Event,
    *,
    tilts: Tilts,
    mixture: float,
    samples: int,
    seed: Seed,
    chunk: int = 65_536,
) -> WeightedRuns:
    """``samples`` runs of ``mechanism`` on ``counts`` from the defensive mixture, with weights.

    Chunk ``c`` runs on the ``c``-th child of ``SeedSequence(seed).spawn``, whose two children are
    the mechanism's stream and the components' stream of a fresh
    [`TiltedGenerator`][dpaudit.auditor.greybox.importance.TiltedGenerator]; arguments as for
    [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability],
    which bounds ``P(S)`` from these runs.
    """
    sample = sample_method(mechanism)
    table = _tilt_table(tilts)
    mixture = require_probability("mixture", mixture, allow_one=True)
    samples = require_positive_int("samples", samples)
    chunk = require_positive_int("chunk", chunk)
    sizes = _chunks(samples, chunk)
    streams = seed_sequence(seed).spawn(len(sizes))
    weights, hits = [], []
    for stream, rows in zip(streams, sizes):
        batch = _run_batch(sample, counts, event, stream, rows, table, mixture, False)
        weights.append(batch.weights)
        hits.append(batch.hits)
    return WeightedRuns(np.concatenate(weights), np.concatenate(hits))


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

    Issue 43, item 3. Chunk ``c`` runs on the ``c``-th child of ``SeedSequence(seed).spawn``,
    whose two children are the mechanism's stream and the components' stream of a fresh
    [`TiltedGenerator`][dpaudit.auditor.greybox.importance.TiltedGenerator]. With ``w`` the runs'
    weights, ``Y = w 1{S}`` has mean exactly ``P(S)`` (``E_m[(p/m) 1{S}] = P_p(S)``; the runs are
    i.i.d. across chunks too) and lies in ``[0, B]``; the bounds are
    [`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound] (Waudby-Smith & Ramdas,
    JRSS-B 2024, Theorem 3) with its bets tuned for ``samples``.

    ``B`` is ``1/λ`` unless ``weight_bound`` gives a smaller one, which must hold for every run
    in ``S`` whatever its component (for noisy-argmax events,
    [`noisy_max_weight_bound`][dpaudit.auditor.greybox.argmax_weights.noisy_max_weight_bound]).
    A run in ``S`` whose weight exceeds it refutes the bound, and is refused. ``B`` sets the
    floor: no upper bound goes below about ``B ln(1/α) / n``, and a lower bound stays 0 until
    ``n P(S) / B`` is several times ``ln(1/α)``.

    The tilts must be chosen before these runs (given, or from a pilot on other streams, as
    [`cross_entropy_tilt`][dpaudit.auditor.greybox.importance.cross_entropy_tilt] does), and the
    mechanism must draw only from the ``rng`` it is given
    ([`check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng]).

    Parameters
    ----------
    mechanism : an object with ``sample(counts, size, rng)``.
    counts : the histogram.
    event : ``event(outcomes) -> bool array``, one entry per run (row of the batch).
    tilts : ``{key: shift}`` (see [`TiltedGenerator`][dpaudit.auditor.greybox.importance.TiltedGenerator]).
    mixture : ``λ`` in (0, 1].
    samples : the number of runs (>= 1).
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``.
    alpha : failure probability of each one-sided bound, in (0, 1).
    chunk : runs per batch (>= 1); no larger than the mechanism's own chunk of rows.
    weight_bound : None (``1/λ``), or a bound on ``w`` over the event, <= ``1/λ``.
    """
    table = _tilt_table(tilts)
    mixture = require_probability("mixture", mixture, allow_one=True)
    samples = require_positive_int("samples", samples)
    chunk = require_positive_int("chunk", chunk)
    alpha = require_probability("alpha", alpha)
    largest = 1.0 / mixture
    if weight_bound is None:
        bound = largest
    else:
        bound = float(weight_bound)
        if not 0.0 < bound <= largest:
            raise ValueError(
                f"weight_bound must be in (0, 1/mixture] = (0, {largest!r}], got {weight_bound!r}"
            )
    runs = weighted_runs(
        mechanism,
        counts,
        event,
        tilts=table,
        mixture=mixture,
        samples=samples,
        seed=seed,
        chunk=chunk,
    )
    w, hit, y = runs.weights, runs.hits, runs.values
    if weight_bound is not None and np.any(y > bound):
        run = int(np.argmax(y > bound))
        raise ValueError(
            f"weight_bound={weight_bound!r} is not a bound on the weight over the event: run "
            f"{run} is in the event with weight {y[run]!r}. Derive it for these tilts and this "
            "event (argmax_weights.noisy_max_weight_bound for a noisy argmax), or pass None "
            "(1/mixture)"
        )
    result = betting_bound(y, weight_bound=bound, alpha=alpha, horizon=samples)
    return ImportanceSampledProbability(
        low=float(result.low),
        high=float(result.high),
        estimate=float(y.mean()),
        samples=samples,
        hits=int(hit.sum()),
        effective_samples=_effective(w),
        mixture=mixture,
        weight_bound=bound,
        alpha=alpha,
        tilts=_frozen_tilts(table),
        bound=result,
    )


# ----------------------------------------------------------------------- cross-entropy


@dataclass(frozen=True, eq=False)
class CrossEntropyRound:
    """One pilot round of the cross-entropy method.

    Parameters
    ----------
    tilts : the tilts the round drew from.
    samples : its runs.
    hits : its runs in the event.
    estimate : its mean of ``w 1{S}`` (a rough estimate of ``P(S)``).
    """

    tilts: Mapping[TiltKey, np.ndarray]
    samples: int
    hits: int
    estimate: float


@dataclass(frozen=True, eq=False)
class CrossEntropyTilt:
    """Tilts chosen on a pilot by the cross-entropy method; ``tilts`` is the last update.

    Built by [`cross_entropy_tilt`][dpaudit.auditor.greybox.importance.cross_entropy_tilt].

    Parameters
    ----------
    tilts : ``{key: shift}`` for the main run.
    rounds : the pilot rounds, in order.
    mixture : the ``λ`` of the pilot.
    """

    tilts: Mapping[TiltKey, np.ndarray]
    rounds: tuple[CrossEntropyRound, ...]
    mixture: float

    @property
    def pilot_samples(self) -> int:
        """The runs spent on the pilot, all rounds together."""
        return sum(r.samples for r in self.rounds)


def cross_entropy_tilt(
    mechanism: Any,
    counts: Any,
    event: Event,
    *,
    initial: Tilts,
    mixture: float = 0.1,
    samples: int,
    seed: Seed,
    rounds: int = 2,
    chunk: int = 65_536,
) -> CrossEntropyTilt:
    """Shifts chosen by the cross-entropy method on a pilot, for a later importance-sampled run.

    Rubinstein & Kroese, *The Cross-Entropy Method*, Springer 2004, ch. 3 (Algorithm 3.4.1, one
    level): draw from the current proposal, and move each tilted draw's location to the mean of
    its noise over the runs in the event, weighted by the likelihood ratio to ``p``, minus its
    mean under ``p``: ``shift ← Σ w 1{S} (X − E_p X) / Σ w 1{S}``, per element of a row. For a
    natural exponential family in its mean (the normal) this is the cross-entropy optimum; for
    the Laplace, logistic and Gumbel it matches the first moment of the optimal (conditional)
    law (for the winner's Gumbel noise in a Gumbel-argmax event that law is itself a shifted
    Gumbel, so the match is exact there). Each of ``rounds`` rounds draws
    ``samples`` runs from the last update, starting from ``initial``, which must put some runs
    in the event.

    Sample splitting: the tilts are chosen from data, so the runs that bound ``P(S)`` must not
    be these. The pilot draws from ``SeedSequence(seed)`` under the spawn key
    ``(2**32 − 1, round)``, which no chunk of
    [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability]
    uses, so the main run may even take the same ``seed``.

    Parameters
    ----------
    mechanism, counts, event, mixture, chunk : as for
        [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability].
    initial : the first tilts, ``{key: shift}``; each key must match exactly one draw per batch.
    samples : runs per round (>= 1).
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``.
    rounds : the number of updates (>= 1).
    """
    sample = sample_method(mechanism)
    table = _tilt_table(initial)
    mixture = require_probability("mixture", mixture, allow_one=True)
    samples = require_positive_int("samples", samples)
    rounds = require_positive_int("rounds", rounds)
    chunk = require_positive_int("chunk", chunk)
    root = seed_sequence(seed)
    history = []
    for step in range(rounds):
        pilot = np.random.SeedSequence(
            root.entropy, spawn_key=(*root.spawn_key, _PILOT_KEY, step), pool_size=root.pool_size
        )
        sizes = _chunks(samples, chunk)
        weighted: dict[TiltKey, Any] = dict.fromkeys(table, 0.0)
        total = 0.0
        hits = 0
        for stream, rows in zip(pilot.spawn(len(sizes)), sizes):
            batch = _run_batch(sample, counts, event, stream, rows, table, mixture, True)
            y = np.where(batch.hits, batch.weights, 0.0)
            total += float(y.sum())
            hits += int(batch.hits.sum())
            for key in table:
                weighted[key] = weighted[key] + np.tensordot(y, batch.noise[key], axes=(0, 0))
        history.append(CrossEntropyRound(_frozen_tilts(table), samples, hits, total / samples))
        if total <= 0.0:
            raise ValueError(
                f"no run of the pilot's round {step} fell in the event ({samples} runs from the "
                f"tilts {dict(table)!r}): start from a larger initial shift, or more samples"
            )
        updated = {}
        for key in table:
            shift = np.array(np.asarray(weighted[key], dtype=np.float64) / total)  # 0-d too
            shift.flags.writeable = False
            updated[key] = shift
        table = updated
    return CrossEntropyTilt(_frozen_tilts(table), tuple(history), mixture)
