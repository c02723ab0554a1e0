"""The components and shares of a mixture of exponential tilts, fitted on a pilot.

Issue 43, item 3. [`tilt_mixture`][dpaudit.auditor.greybox.tilt_mixture] draws weighted runs from
a defensive mixture of tilted Laplace laws; this module chooses its components before those runs,
on pilot streams of their own (sample splitting: the main runs' bound does not see the pilot).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms.validation import require_positive_int, require_probability

from .inputs import Seed, seed_sequence
from .tilt_mixture import TiltComponents, _components, _mixture_batch, tilt_for_mean
from .tilted_runs import Event, chunks, pilot_stream

__all__ = ["SHARE_FLOOR", "MixtureFit", "mixture_cross_entropy"]

#: The least share of a component after a cross-entropy round: none dies out on a small pilot.
SHARE_FLOOR = 0.02

# The pilot's streams: spawn key (_PILOT_KEY, round) under the pilot seed.
_PILOT_KEY = 2**32 - 2


@dataclass(frozen=True, eq=False)
class MixtureFit:
    """Components and shares fitted on a pilot, for a later run of ``mixture_runs``.

    Parameters
    ----------
    components : per component ``{draw index: θ}``.
    shares : ``β_j``.
    pilot_samples : the runs the pilot spent.
    hits, estimate : the last round's runs in the event and mean of ``w 1{S}``.
    """

    components: TiltComponents
    shares: tuple[float, ...]
    pilot_samples: int
    hits: int
    estimate: float


@dataclass(frozen=True)
class _Round:
    """One pilot round's sums: ``Σ y``, hits, ``Σ y r_j`` and ``Σ y r_j z`` per component."""

    total: float
    hits: int
    mass: np.ndarray
    moments: list[dict[int, Any]]


def _pilot_round(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    streams: list[np.random.SeedSequence],
    sizes: list[int],
    components: TiltComponents,
    shares: np.ndarray,
    mixture: float,
    keys: list[int],
) -> _Round:
    mass = np.zeros(len(components))
    moments: list[dict[int, Any]] = [dict.fromkeys(keys, 0.0) for _ in components]
    total, hits = 0.0, 0
    for stream, rows in zip(streams, sizes):
        batch = _mixture_batch(
            sample, counts, event, stream, rows, components, shares, mixture, True
        )
        y = np.where(batch.hits, batch.weights, 0.0)
        total += float(y.sum())
        hits += int(batch.hits.sum())
        split = y[:, None] * batch.responsibilities
        mass += split.sum(axis=0)
        for j in range(len(components)):
            for key in keys:
                moments[j][key] = moments[j][key] + np.tensordot(
                    split[:, j], batch.noise[key], axes=(0, 0)
                )
    return _Round(total, hits, mass, moments)


def mixture_cross_entropy(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    *,
    initial: Sequence[Mapping[Any, Any]],
    mixture: float,
    samples: int,
    seed: Seed,
    rounds: int = 3,
    chunk: int = 65_536,
) -> MixtureFit:
    """Components and shares by the cross-entropy method for mixtures, on pilot streams.

    Rubinstein & Kroese, *The Cross-Entropy Method*, Springer 2004, ch. 3, with the mixture
    fitted by one EM step per round (Kurtz & Song, "Cross-entropy-based adaptive importance
    sampling using Gaussian mixture", Structural Safety 42, 2013, eqs. 20-22): each run's
    ``y = w 1{S}`` is split among the components by its posterior ``r_j``; component ``j``'s
    share becomes ``Σ y r_j / Σ y`` (at least ``SHARE_FLOOR``, then renormalised), and the
    ``θ`` of each of its coordinates the one whose tilted mean is ``Σ y r_j z / Σ y r_j``
    (the tilts form an exponential family in ``z``, so matching the mean is the CE optimum).
    A component without a hit keeps its tilt. Every key of ``initial``'s union is fitted in every
    component (absent keys start at ``θ = 0``).

    The rounds draw from ``SeedSequence(seed)`` under the spawn key ``(2**32 − 2, round)``;
    ``sample`` is the mechanism's ``sample(counts, size, rng)``, resolved by the caller.
    """
    start = _components(initial)
    keys = sorted({key for c in start for key in c})
    components: TiltComponents = _components(
        [{key: c.get(key, np.zeros(())) for key in keys} for c in start]
    )
    shares = np.full(len(components), 1.0 / len(components))
    mixture = require_probability("mixture", mixture, allow_one=True)
    samples = require_positive_int("samples", samples)
    root = seed_sequence(seed)
    spent, hits, estimate = 0, 0, 0.0
    for step in range(require_positive_int("rounds", rounds)):
        pilot = pilot_stream(root, _PILOT_KEY, step)
        sizes = chunks(samples, chunk)
        fitted = _pilot_round(
            sample, counts, event, pilot.spawn(len(sizes)), sizes, components, shares, mixture, keys
        )
        total, hits, mass, moments = fitted.total, fitted.hits, fitted.mass, fitted.moments
        spent += samples
        estimate = total / samples
        if total <= 0.0:
            break  # no hit: keep the last components
        updated = []
        for j, component in enumerate(components):
            if mass[j] <= 0.0:
                updated.append(component)
                continue
            updated.append({key: tilt_for_mean(moments[j][key] / mass[j]) for key in keys})
        components = _components(updated)
        shares = np.maximum(mass / mass.sum(), SHARE_FLOOR)
        shares = shares / shares.sum()
    return MixtureFit(components, tuple(float(s) for s in shares), spent, hits, estimate)
