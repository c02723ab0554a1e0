"""Location shifts for a rare event, chosen on a pilot by the cross-entropy method.

Issue 43, item 3. Rubinstein & Kroese, *The Cross-Entropy Method*, Springer 2004, ch. 3
(Algorithm 3.4.1, one level): draw from the current proposal, and move each tilted draw's location
to the mean of its noise over the runs in the event, weighted by the likelihood ratio to ``p``,
minus its mean under ``p``: ``shift ← Σ w 1{S} (X − E_p X) / Σ w 1{S}``, per element of a row.
For a natural exponential family in its mean (the normal) this is the cross-entropy optimum; for
the Laplace, logistic and Gumbel it matches the first moment of the optimal (conditional) law
(for the winner's Gumbel noise in a Gumbel-argmax event that law is itself a shifted Gumbel, so
the match is exact there).

Sample splitting: the tilts are chosen from data, so the runs that bound ``P(S)`` must not be
these. The pilot draws from ``SeedSequence(seed)`` under the spawn key ``(2**32 − 1, round)``,
which no chunk of
[`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability]
uses, so the main run may even take the same ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms.validation import require_positive_int, require_probability

from .inputs import Seed, seed_sequence
from .tilted_generator import TiltKey, Tilts, frozen_tilts, tilt_table
from .tilted_runs import Event, chunks, pilot_stream, tilted_batch

__all__ = ["CrossEntropyRound", "CrossEntropyTilt", "cross_entropy_tilt"]

# The pilot's streams: SeedSequence(seed) with this spawn key first, never one of the main
# run's children (their keys are the chunk numbers, far below it).
_PILOT_KEY = 2**32 - 1


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

    Built by [`cross_entropy_tilt`][dpaudit.auditor.greybox.cross_entropy.cross_entropy_tilt].

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


@dataclass(frozen=True)
class _Sums:
    """One round's sums: ``Σ w 1{S}``, the hits, and ``Σ w 1{S} (X − E_p X)`` per tilt."""

    total: float
    hits: int
    weighted: dict[TiltKey, Any]


def _pilot_round(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    pilot: np.random.SeedSequence,
    table: Mapping[TiltKey, np.ndarray],
    *,
    mixture: float,
    samples: int,
    chunk: int,
) -> _Sums:
    """``samples`` runs from ``table`` on the children of ``pilot``, summed for the update."""
    sizes = chunks(samples, chunk)
    weighted: dict[TiltKey, Any] = dict.fromkeys(table, 0.0)
    total = 0.0
    hits = 0
    for stream, rows in zip(pilot.spawn(len(sizes)), sizes):
        batch = tilted_batch(sample, counts, event, stream, rows, table, mixture, True)
        y = np.where(batch.hits, batch.weights, 0.0)
        total += float(y.sum())
        hits += int(batch.hits.sum())
        for key in table:
            weighted[key] = weighted[key] + np.tensordot(y, batch.noise[key], axes=(0, 0))
    return _Sums(total, hits, weighted)


def _updated(sums: _Sums) -> dict[TiltKey, np.ndarray]:
    """The next tilts: each ``Σ w 1{S} (X − E_p X) / Σ w 1{S}``, read-only."""
    updated = {}
    for key, weighted in sums.weighted.items():
        shift = np.array(np.asarray(weighted, dtype=np.float64) / sums.total)  # 0-d too
        shift.flags.writeable = False
        updated[key] = shift
    return updated


def cross_entropy_tilt(
    sample: Callable[..., Any],
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

    Rubinstein & Kroese 2004, Algorithm 3.4.1 (see the module docstring). Each of ``rounds``
    rounds draws ``samples`` runs from the last update, starting from ``initial``, which must put
    some runs in the event, on the pilot's own streams.

    Parameters
    ----------
    sample : the mechanism's ``sample(counts, size, rng)``, resolved by the caller.
    counts, event, mixture, chunk : as for
        [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability].
    initial : the first tilts, ``{key: shift}``; each key must match exactly one draw per batch.
    samples : runs per round (>= 1).
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``.
    rounds : the number of updates (>= 1).
    """
    table = tilt_table(initial)
    mixture = require_probability("mixture", mixture, allow_one=True)
    samples = require_positive_int("samples", samples)
    rounds = require_positive_int("rounds", rounds)
    chunk = require_positive_int("chunk", chunk)
    root = seed_sequence(seed)
    history = []
    for step in range(rounds):
        pilot = pilot_stream(root, _PILOT_KEY, step)
        sums = _pilot_round(
            sample, counts, event, pilot, table, mixture=mixture, samples=samples, chunk=chunk
        )
        history.append(
            CrossEntropyRound(frozen_tilts(table), samples, sums.hits, sums.total / samples)
        )
        if sums.total <= 0.0:
            raise ValueError(
                f"no run of the pilot's round {step} fell in the event ({samples} runs from the "
                f"tilts {dict(table)!r}): start from a larger initial shift, or more samples"
            )
        table = _updated(sums)
    return CrossEntropyTilt(frozen_tilts(table), tuple(history), mixture)
