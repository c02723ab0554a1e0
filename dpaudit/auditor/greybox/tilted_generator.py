"""The generator of one importance-sampled batch: some location-family draws shifted, per row.

Issue 43, item 3. [`TiltedGenerator`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator]
draws each row of a batch from the defensive mixture ``λ p + (1 − λ) p̃`` (Hesterberg, "Weighted
average importance sampling and defensive mixture distributions", Technometrics 37(2), 1995),
``p̃`` the mechanism's own law with the locations of the chosen draws shifted, and keeps each
row's log likelihood ratio; [`tilted_runs`][dpaudit.auditor.greybox.tilted_runs] runs a mechanism
on it chunk by chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import stats

from mechanisms.validation import require_positive_int, require_probability

from .recording import RecordingGenerator
from .sites import short_path

__all__ = [
    "LOCATION_FAMILIES",
    "TiltKey",
    "TiltedDraw",
    "TiltedGenerator",
    "Tilts",
    "frozen_tilts",
    "tilt_table",
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

TiltKey = int | str
Tilts = Mapping[TiltKey, Any]


def tilt_table(tilts: Tilts) -> dict[TiltKey, np.ndarray]:
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


def frozen_tilts(table: Mapping[TiltKey, np.ndarray]) -> Mapping[TiltKey, np.ndarray]:
    """A read-only view of a copy of ``table``."""
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
    [`weights`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator.weights] turns it into
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
        [`cross_entropy_tilt`][dpaudit.auditor.greybox.cross_entropy.cross_entropy_tilt].
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
        self._tilts = tilt_table(tilts)
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
        return frozen_tilts(self._tilts)

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
