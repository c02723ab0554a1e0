"""Weighted runs of a mechanism on tilted generators, chunk by chunk.

Issue 43, item 3. A run of ``samples`` is cut into chunks of at most ``chunk`` rows; chunk ``c``
draws on the ``c``-th child of ``SeedSequence(seed).spawn``, whose two children are the
mechanism's stream and the components' stream of a fresh tilted generator
([`TiltedGenerator`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator] here,
[`MixtureTiltedGenerator`][dpaudit.auditor.greybox.tilt_mixture.MixtureTiltedGenerator] for a
mixture of exponential tilts). A pilot that chooses the tilts draws under a spawn key of its own
([`pilot_stream`][dpaudit.auditor.greybox.tilted_runs.pilot_stream]), never a chunk's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from mechanisms.validation import require_positive_int, require_probability

from .inputs import Seed, seed_sequence
from .recording import RecordingGenerator
from .tilted_generator import LOCATION_FAMILIES, TiltedGenerator, TiltKey, Tilts, tilt_table

__all__ = [
    "Batch",
    "Event",
    "WeightedRuns",
    "chunked_runs",
    "chunks",
    "event_hits",
    "pilot_stream",
    "sample_batch",
    "tilted_batch",
    "weighted_runs",
]

Event = Callable[[Any], Any]
Generator = TypeVar("Generator", bound=RecordingGenerator)


@dataclass(frozen=True, eq=False)
class WeightedRuns:
    """The runs of one importance-sampled draw: per run its weight and whether it hit ``S``.

    Built by [`weighted_runs`][dpaudit.auditor.greybox.tilted_runs.weighted_runs]; in run order
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


def chunks(samples: int, chunk: int) -> list[int]:
    """The batch sizes of ``samples`` runs in chunks of ``chunk`` rows (the last one shorter)."""
    full, rest = divmod(samples, chunk)
    return [chunk] * full + ([rest] if rest else [])


def pilot_stream(root: np.random.SeedSequence, key: int, step: int) -> np.random.SeedSequence:
    """Round ``step`` of a pilot: ``root`` under the spawn key ``(key, step)``.

    Parameters
    ----------
    root : the pilot's seed.
    key : far above any chunk number, so no chunk of a main run on ``root`` shares the stream.
    step : the round.
    """
    return np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, key, step), pool_size=root.pool_size
    )


def sample_batch(
    sample: Callable[..., Any],
    counts: Any,
    stream: np.random.SeedSequence,
    rows: int,
    generator: Callable[[np.random.BitGenerator, np.random.BitGenerator], Generator],
) -> tuple[Generator, Any]:
    """One chunk: ``generator(mechanism bits, component bits)`` on ``stream``'s two children.

    Returns the generator and ``sample(counts, rows, rng)`` on it.
    """
    mechanism_stream, component_stream = stream.spawn(2)
    rng = generator(np.random.PCG64(mechanism_stream), np.random.PCG64(component_stream))
    return rng, sample(counts, rows, rng)


def chunked_runs(
    run_chunk: Callable[[np.random.SeedSequence, int], tuple[np.ndarray, np.ndarray]],
    *,
    samples: int,
    chunk: int,
    seed: Seed,
) -> WeightedRuns:
    """``samples`` runs, chunk ``c`` by ``run_chunk(stream, rows) -> (weights, hits)``.

    ``stream`` is the ``c``-th child of ``SeedSequence(seed).spawn``, ``rows`` at most ``chunk``.
    """
    sizes = chunks(require_positive_int("samples", samples), require_positive_int("chunk", chunk))
    weights, hits = [], []
    for stream, rows in zip(seed_sequence(seed).spawn(len(sizes)), sizes):
        chunk_weights, chunk_hits = run_chunk(stream, rows)
        weights.append(chunk_weights)
        hits.append(chunk_hits)
    return WeightedRuns(np.concatenate(weights), np.concatenate(hits))


def event_hits(event: Event, outcomes: Any, rows: int) -> np.ndarray:
    """``event(outcomes)``, checked to be one boolean per run."""
    hits = np.asarray(event(outcomes))
    if hits.dtype != np.bool_ or hits.shape != (rows,):
        raise ValueError(
            f"event(outcomes) must return a boolean array of shape ({rows},), one entry per "
            f"run, got dtype {hits.dtype} and shape {hits.shape}"
        )
    return hits


@dataclass(frozen=True)
class Batch:
    """One chunk on a ``TiltedGenerator``: per run its weight and hit; per tilt its noise."""

    weights: np.ndarray
    hits: np.ndarray
    noise: dict[TiltKey, np.ndarray]


def tilted_batch(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    stream: np.random.SeedSequence,
    rows: int,
    table: Mapping[TiltKey, np.ndarray],
    mixture: float,
    keep_noise: bool,
) -> Batch:
    """One chunk on a fresh ``TiltedGenerator``: the weights, hits and (``keep_noise``) noise."""
    rng, outcomes = sample_batch(
        sample,
        counts,
        stream,
        rows,
        lambda bits, components: TiltedGenerator(
            bits,
            size=rows,
            tilts=table,
            mixture=mixture,
            components=components,
            keep_noise=keep_noise,
        ),
    )
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
    return Batch(rng.weights(), event_hits(event, outcomes, rows), noise)


def weighted_runs(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    *,
    tilts: Tilts,
    mixture: float,
    samples: int,
    seed: Seed,
    chunk: int = 65_536,
) -> WeightedRuns:
    """``samples`` runs of ``sample`` on ``counts`` from the defensive mixture, with weights.

    Chunk ``c`` runs on the ``c``-th child of ``SeedSequence(seed).spawn``, whose two children are
    the mechanism's stream and the components' stream of a fresh
    [`TiltedGenerator`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator]; arguments as for
    [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability],
    which bounds ``P(S)`` from these runs; ``sample`` is the mechanism's ``sample(counts, size,
    rng)``, resolved by the caller.
    """
    table = tilt_table(tilts)
    mixture = require_probability("mixture", mixture, allow_one=True)

    def run_chunk(stream: np.random.SeedSequence, rows: int) -> tuple[np.ndarray, np.ndarray]:
        batch = tilted_batch(sample, counts, event, stream, rows, table, mixture, False)
        return batch.weights, batch.hits

    return chunked_runs(run_chunk, samples=samples, chunk=chunk, seed=seed)
