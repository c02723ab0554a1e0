"""Broken report-noisy-max mechanisms (Laplace): a released noisy value, half the noise.

Dwork & Roth 2014, Claim 3.9; Bichsel et al. (DP-Sniper, S&P 2021) Table II.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

import mechanisms as M
from mechanisms import check_rng, check_size, validate_counts
from mechanisms.validation import require_positive_float

from .base import _BoundedChangeClaimsEpsilon
from .entry import CatalogEntry


def _laplace_argmax(counts, scale, size, rng):
    noisy = counts + rng.laplace(scale=scale, size=(size, counts.size))
    winner = np.argmax(noisy, axis=1)
    return winner, noisy[np.arange(size), winner]


@dataclass(frozen=True)
class ReportNoisyMaxReleasesValue(_BoundedChangeClaimsEpsilon):
    """BUG: report noisy max that also releases the noisy maximum (DP-Sniper's broken RNM).

    Laplace(2/ε) noise per count, argmax released with its noisy value,
    discretised to ``resolution`` (outcome ``(i, bucket)``, bucket >= 0). Only
    the argmax is ε-DP (Dwork & Roth 2014, Claim 3.9; Bichsel et al. 2021
    Table II); the value is not. Claims (ε, 0) under BoundedChange(1).

    Parameters
    ----------
    epsilon : ε > 0 (noise scale 2/ε).
    resolution : width of a value bucket.
    """

    resolution: float = 1.0
    _offset: ClassVar[int] = 1_000

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(
            self, "resolution", require_positive_float("resolution", self.resolution)
        )

    @property
    def width(self):
        return 2

    def sample(self, counts, size, rng):
        counts = validate_counts(counts).astype(float)
        size, rng = check_size(size), check_rng(rng)
        winner, value = _laplace_argmax(counts, 2.0 / self.epsilon, size, rng)
        bucket = np.clip(np.floor(value / self.resolution) + self._offset, 0, 2 * self._offset)
        return np.stack([winner, bucket.astype(np.int64)], axis=1).astype(np.int64)


@dataclass(frozen=True)
class ReportNoisyMaxHalfNoise(M.ReportNoisyMax):
    """BUG: report noisy max with Laplace(1/ε) under BoundedChange(1), claiming ε.

    Laplace(1/ε) suffices only when all counts move the same way (Dwork & Roth
    2014, Claim 3.9); when counts move independently by 1 the argmax is only
    2ε-DP (scale 2/ε is needed). A [`mechanisms.ReportNoisyMax`][mechanisms.ReportNoisyMax] with
    ``monotonic=False`` (claim (ε, 0) under BoundedChange(1)) whose ``scale``
    keeps the monotonic 1/ε; its exact law is ReportNoisyMax's (it reads ``scale``).

    Takes ReportNoisyMax's ``epsilon`` (> 0; noise scale 1/ε — the bug).
    """

    monotonic: bool = False

    @property
    def scale(self) -> float:
        return 1.0 / self.epsilon  # the bug: should be 2/ε when monotonic is False


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "rnm-releases-value",
        "report noisy max also releases the noisy maximum",
        lambda: ReportNoisyMaxReleasesValue(epsilon=1.0),
        None,
        "Bichsel et al. 2021; Dwork–Roth Claim 3.9",
    ),
    CatalogEntry(
        "rnm-half-noise",
        "report noisy max with Laplace(1/ε) under bounded change claims ε",
        lambda: ReportNoisyMaxHalfNoise(epsilon=1.0),
        ((0, 2, 2, 2, 2), (1, 1, 1, 1, 1)),
        "Dwork–Roth Claim 3.9",
    ),
)
