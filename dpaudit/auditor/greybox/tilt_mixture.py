"""Rare events reached by several Laplace draws together: a mixture of exponential tilts.

Issue 43, item 3. [`importance`][dpaudit.auditor.greybox.importance] shifts one proposal's
locations; that fails where an event needs a *sum* of Laplace draws to be large (the stability
family: a gap's noise minus the threshold's noise above ``T``). Given the sum, the split between
the draws is spread out, and a shift fits one split only: weights blow up on the others. The
exponential tilt ``p̃_θ(x) = p(x) e^{θ z} (1 − θ²)``, ``z = (x − loc)/scale``, ``|θ| < 1``, of
each draw fits them all: on ``{z_1 − z_0 > t}`` tilted by ``θ`` and ``−θ`` the ratio
``p / p̃ = e^{−θ (z_1 − z_0)} / (1 − θ²)²`` is at most ``e^{−θ t} / (1 − θ²)²``, whatever the
split (Siegmund, "Importance sampling in the Monte Carlo study of sequential tests", Ann.
Statist. 4(4), 1976; Asmussen & Glynn, *Stochastic Simulation*, Springer 2007, ch. VI.2).

An event reached along several ways (any of k̄ gaps above the threshold) gets one component per
way, each a tilt of every Laplace draw; a run takes the mechanism's own law with probability
``λ`` and component ``j`` with probability ``(1 − λ) β_j``, and is weighted by
``w = p / (λ p + (1 − λ) Σ_j β_j p̃_j)`` (the balance heuristic of Veach & Guibas, SIGGRAPH 1995,
with Hesterberg's defensive component, Technometrics 37(2), 1995; Owen & Zhou, JASA 95(449),
2000): ``w <= 1/λ``, and ``E[w 1{S}] = P(S)`` exactly.

* [`MixtureTiltedGenerator`][dpaudit.auditor.greybox.tilt_mixture.MixtureTiltedGenerator]: the
  generator of one batch;
* [`mixture_runs`][dpaudit.auditor.greybox.tilt_mixture.mixture_runs]: weighted runs from it;
* [`mixture_cross_entropy`][dpaudit.auditor.greybox.mixture_fit.mixture_cross_entropy] (its own
  module): the components and their shares fitted on a pilot (the cross-entropy method for
  mixtures, an EM step per round).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy.special import logsumexp

from mechanisms.validation import require_positive_int, require_probability

from .inputs import Seed
from .recording import RecordingGenerator
from .tilted_runs import Event, WeightedRuns, chunked_runs, sample_batch

__all__ = [
    "TILT_LIMIT",
    "MixtureTiltedGenerator",
    "TiltComponents",
    "mixture_runs",
    "tilt_for_mean",
]

#: The largest ``|θ|`` of a tilt (in units of ``1/scale``): the law stays a proper asymmetric
#: Laplace, of mean at most about ``1000`` scales.
TILT_LIMIT = 0.999
_PARAMETERS = ("loc", "scale", "size")

TiltComponents = tuple[Mapping[int, np.ndarray], ...]


def tilt_for_mean(mean: Any) -> np.ndarray:
    """The ``θ`` whose tilted standard Laplace has mean ``mean``: ``2θ / (1 − θ²) = mean``.

    ``θ = mean / (1 + sqrt(1 + mean²))``, clipped to ``±TILT_LIMIT``.
    """
    m = np.asarray(mean, dtype=np.float64)
    return np.clip(m / (1.0 + np.sqrt(1.0 + m * m)), -TILT_LIMIT, TILT_LIMIT)


def _tilted_quantile(z: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``G_θ⁻¹(F(z))``: a standard Laplace value carried to the tilted law, monotonically.

    ``F`` the standard Laplace CDF, ``G_θ`` the tilted one (rate ``1 + θ`` below 0, ``1 − θ``
    above, ``P(Z < 0) = (1 − θ)/2``). Tails are taken from the side where they are accurate.
    """
    below = np.where(z < 0.0, np.log(0.5) + np.minimum(z, 0.0), np.log1p(-0.5 * np.exp(-np.abs(z))))
    above = np.where(
        z >= 0.0, np.log(0.5) - np.maximum(z, 0.0), np.log1p(-0.5 * np.exp(-np.abs(z)))
    )
    low = np.log((1.0 - theta) / 2.0)
    high = np.log((1.0 + theta) / 2.0)
    return np.where(below < low, (below - low) / (1.0 + theta), (high - above) / (1.0 - theta))


def _components(components: Sequence[Mapping[Any, Any]]) -> TiltComponents:
    if not components:
        raise ValueError("components must hold at least one tilt {draw index: θ}")
    table = []
    for component in components:
        frozen = {}
        for key, theta in component.items():
            if isinstance(key, bool) or not isinstance(key, (int, np.integer)) or key < 0:
                raise ValueError(f"a tilt key must be a draw index (int >= 0), got {key!r}")
            array = np.array(theta, dtype=np.float64)
            if not np.all(np.abs(array) < 1.0):
                raise ValueError(f"a Laplace tilt θ must lie in (-1, 1), got {theta!r} for {key}")
            array.flags.writeable = False
            frozen[int(key)] = array
        table.append(MappingProxyType(frozen))
    return tuple(table)


def _shares(shares: Any, count: int) -> np.ndarray:
    array = np.array(shares, dtype=np.float64)
    if array.shape != (count,) or np.any(array <= 0.0) or not np.isclose(array.sum(), 1.0):
        raise ValueError(
            f"shares must be {count} positive numbers summing to 1 (one per component), got {shares!r}"
        )
    return array / array.sum()


class MixtureTiltedGenerator(RecordingGenerator):
    """A recording generator for one batch whose rows come from a mixture of tilted laws.

    Row ``r`` takes the mechanism's own law with probability ``λ`` and component ``j`` with
    probability ``(1 − λ) β_j``, fixed at construction from the separate ``components_stream``.
    Each Laplace draw that a component's keys name (draw indices, in recording order) is drawn
    by numpy with the caller's parameters from the caller's stream, and the rows of component
    ``j`` are then carried monotonically to its tilted law (``_tilted_quantile``), so the
    stream is read exactly as without tilts and the original rows are numpy's own. Per row it
    accumulates ``log p̃_j(x) − log p(x) = Σ (θ_j z + log(1 − θ_j²))`` for every component at
    the row's final values;
    [`weights`][dpaudit.auditor.greybox.tilt_mixture.MixtureTiltedGenerator.weights] gives
    ``p / (λ p + (1 − λ) Σ β_j p̃_j)``. As in
    [`TiltedGenerator`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator], this is the whole
    run's ratio when each row's outcome depends on its own rows of the draws only.

    Parameters
    ----------
    bit_generator : the mechanism's stream.
    size : the runs in the batch.
    components : per component ``{draw index: θ}``, ``θ`` broadcasting to one row of the draw.
    shares : ``β_j``, positive, summing to 1.
    mixture : ``λ`` in (0, 1].
    components_stream : a ``BitGenerator`` of its own for the rows' components.
    keep_noise : keep each named draw's standardised values ``z``, for the cross-entropy fit.
    """

    def __init__(
        self,
        bit_generator: np.random.BitGenerator,
        *,
        size: int,
        components: Sequence[Mapping[Any, Any]],
        shares: Any,
        mixture: float,
        components_stream: np.random.BitGenerator,
        keep_noise: bool = False,
    ) -> None:
        super().__init__(bit_generator)
        if components_stream is bit_generator:
            raise ValueError("components_stream must be a stream of its own")
        self._size = require_positive_int("size", size)
        self._mixture = require_probability("mixture", mixture, allow_one=True)
        self._components = _components(components)
        self._shares = _shares(shares, len(self._components))
        edges = self._mixture + (1.0 - self._mixture) * np.cumsum(self._shares)[:-1]
        uniform = np.random.Generator(components_stream).random(self._size)
        # 0: the original law; j >= 1: component j − 1.
        self._row_component = np.where(
            uniform < self._mixture, 0, 1 + np.searchsorted(edges, uniform, side="right")
        )
        self._log_ratio = np.zeros((self._size, len(self._components)))
        self._keys = frozenset(key for c in self._components for key in c)
        self._matched: set[int] = set()
        self._keep_noise = bool(keep_noise)
        self._noise: dict[int, np.ndarray] = {}

    @property
    def row_component(self) -> np.ndarray:
        """Per row, 0 for the original law, ``j + 1`` for component ``j`` (a copy)."""
        return self._row_component.copy()

    @property
    def log_ratio(self) -> np.ndarray:
        """``log p̃_j − log p`` per row (axis 0) and component (axis 1), so far (a copy)."""
        return self._log_ratio.copy()

    @property
    def keys(self) -> frozenset[int]:
        """The draw indices the components name."""
        return self._keys

    @property
    def unmatched(self) -> tuple[int, ...]:
        """The draw indices that no draw has matched so far."""
        return tuple(sorted(self._keys - self._matched))

    def noise(self, key: int) -> np.ndarray:
        """The standardised values ``z`` of draw ``key`` (needs ``keep_noise``)."""
        return self._noise[key]

    def weights(self) -> np.ndarray:
        """Per row ``1 / (λ + (1 − λ) Σ_j β_j e^{log p̃_j − log p})``, at most ``1/λ``."""
        if self._mixture == 1.0:
            return np.ones(self._size)
        terms = np.log1p(-self._mixture) + np.log(self._shares)[None, :] + self._log_ratio
        both = np.concatenate([np.full((self._size, 1), np.log(self._mixture)), terms], axis=1)
        return np.exp(-logsumexp(both, axis=1))

    def responsibilities(self) -> np.ndarray:
        """Per row, the posterior of each component among the tilted ones (rows sum to 1)."""
        terms = np.log(self._shares)[None, :] + self._log_ratio
        return np.exp(terms - logsumexp(terms, axis=1, keepdims=True))

    def _tilt(self, method: str, index: int, out: Any, args: tuple, kwargs: dict) -> Any:
        if index not in self._keys:
            return out
        if method != "laplace":
            raise ValueError(
                f"draw #{index} is a {method} draw: the mixture tilts Laplace draws only"
            )
        shape = np.shape(out)
        if not shape or shape[0] != self._size:
            raise ValueError(
                f"the tilted draw #{index} has shape {shape}, not the batch's {self._size} runs "
                "on its leading axis"
            )
        named = dict(zip(_PARAMETERS, args))
        named.update(kwargs)
        loc = np.broadcast_to(np.asarray(named.get("loc", 0.0), dtype=np.float64), shape)
        scale = np.broadcast_to(np.asarray(named.get("scale", 1.0), dtype=np.float64), shape)
        thetas = [np.broadcast_to(c.get(index, np.zeros(())), shape) for c in self._components]
        for j, theta in enumerate(thetas):
            rows = self._row_component == j + 1
            if rows.any() and np.any(theta[rows] != 0.0):
                z = (out[rows] - loc[rows]) / scale[rows]
                out[rows] = loc[rows] + scale[rows] * _tilted_quantile(z, theta[rows])
        z = (out - loc) / scale
        for j, theta in enumerate(thetas):
            ratio = theta * z + np.log1p(-theta * theta)
            self._log_ratio[:, j] += ratio.reshape(self._size, -1).sum(axis=1)
        if self._keep_noise:
            self._noise[index] = np.array(z)
        self._matched.add(index)
        return out

    def laplace(self, *args: Any, **kwargs: Any) -> Any:
        """``Generator.laplace``, recorded, and tilted where a component names it."""
        if self._depth:
            return super().laplace(*args, **kwargs)
        index = self.draw_count
        out = super().laplace(*args, **kwargs)
        return self._tilt("laplace", index, out, args, kwargs)


@dataclass(frozen=True)
class _MixtureBatch:
    weights: np.ndarray
    hits: np.ndarray
    responsibilities: np.ndarray
    noise: dict[int, np.ndarray]


def _mixture_batch(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    stream: np.random.SeedSequence,
    rows: int,
    components: TiltComponents,
    shares: np.ndarray,
    mixture: float,
    keep_noise: bool,
) -> _MixtureBatch:
    rng, outcomes = sample_batch(
        sample,
        counts,
        stream,
        rows,
        lambda bits, component_bits: MixtureTiltedGenerator(
            bits,
            size=rows,
            components=components,
            shares=shares,
            mixture=mixture,
            components_stream=component_bits,
            keep_noise=keep_noise,
        ),
    )
    if rng.unmatched:
        raise ValueError(f"the tilts {list(rng.unmatched)!r} matched no Laplace draw")
    hits = np.asarray(event(outcomes))
    if hits.dtype != np.bool_ or hits.shape != (rows,):
        raise ValueError(f"event(outcomes) must return a boolean array of shape ({rows},)")
    noise = {key: rng.noise(key) for key in rng.keys} if keep_noise else {}
    return _MixtureBatch(rng.weights(), hits, rng.responsibilities(), noise)


def mixture_runs(
    sample: Callable[..., Any],
    counts: Any,
    event: Event,
    *,
    components: Sequence[Mapping[Any, Any]],
    shares: Any,
    mixture: float,
    samples: int,
    seed: Seed,
    chunk: int = 65_536,
) -> WeightedRuns:
    """``samples`` runs from the mixture, chunk ``c`` on the ``c``-th child of ``seed``.

    As [`weighted_runs`][dpaudit.auditor.greybox.tilted_runs.weighted_runs], with the proposal
    of [`MixtureTiltedGenerator`][dpaudit.auditor.greybox.tilt_mixture.MixtureTiltedGenerator]:
    weights in ``[0, 1/λ]``, ``E[w 1{S}] = P(S)``. The components must be chosen before these
    runs (from a pilot on other streams). ``sample`` is the mechanism's ``sample(counts, size,
    rng)``, resolved by the caller.
    """
    table = _components(components)

    def run_chunk(stream: np.random.SeedSequence, rows: int) -> tuple[np.ndarray, np.ndarray]:
        batch = _mixture_batch(sample, counts, event, stream, rows, table, shares, mixture, False)
        return batch.weights, batch.hits

    return chunked_runs(run_chunk, samples=samples, chunk=chunk, seed=seed)
