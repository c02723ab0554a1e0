"""Broken releases of real values (the auditor's value encoders see them).

Bichsel et al. (DP-Sniper, S&P 2021) Table II; seed 002 §6.1 footnote 8; Dwork & Roth
2014, Claim 3.9 and Thm 3.6.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

import mechanisms as M
from mechanisms import check_rng, check_size, validate_counts

from .base import _BoundedChangeClaimsEpsilon
from .entry import CatalogEntry


@dataclass(frozen=True)
class ReportNoisyMaxFloatValue(_BoundedChangeClaimsEpsilon):
    """BUG: report noisy max that releases only the noisy maximum, as a real number.

    DP-Sniper's ReportNoisyMax3 (Bichsel et al., S&P 2021, Table II; Ding et al. 2018):
    Laplace(2/ε) noise on each count and the largest noisy count released, claiming
    (ε, 0) under BoundedChange(1) as the argmax would (Dwork & Roth 2014, Claim 3.9).
    Moving every count up by 1 shifts the maximum by 1; below every count the density
    of the maximum of d Laplace(2/ε) variables is ∝ e^{dεx/2}, so the true ε is dε/2
    (2.5 for d = 5, ε = 1). Outcomes: no items, one value.

    Parameters
    ----------
    epsilon : ε > 0 (noise scale 2/ε).
    """

    value_width: ClassVar[int] = 1

    @property
    def width(self):
        return 0

    def sample(self, counts, size, rng):
        counts = validate_counts(counts).astype(float)
        size, rng = check_size(size), check_rng(rng)
        noisy = counts + rng.laplace(scale=2.0 / self.epsilon, size=(size, counts.size))
        return M.MixedBatch(np.zeros((size, 0), dtype=np.int64), noisy.max(axis=1))


@dataclass(frozen=True)
class NoisyCountsHalfNoise(M.NoisyCountsRelease):
    """BUG: top-k with noisy counts whose Laplace noise is half what its claim needs.

    :class:`mechanisms.NoisyCountsRelease` (seed 002 §6.1, footnote 8) calibrates the
    count noise to ``sensitivity / epsilon_counts``; this one uses half of it, so its
    count release is ``2 epsilon_counts``-DP while the claim still adds
    ``epsilon_counts``. Adding one user to every item shifts all released counts by 1:
    on the event "every released count above its count + 1" the ratio is
    ``e^{2 epsilon_counts}`` (for k released items with sensitivity k).

    Takes NoisyCountsRelease's parameters: ``selector``, the item selection, and
    ``epsilon_counts``, the ε the counts claim (> 0).
    """

    @property
    def noise_scale(self) -> float:
        return self.sensitivity / self.epsilon_counts / 2


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "rnm-releases-noisy-max",
        "report noisy max releases only its noisy maximum, a real number "
        "(DP-Sniper's ReportNoisyMax3; true ε 2.5 at a claim of 1)",
        lambda: ReportNoisyMaxFloatValue(epsilon=1.0),
        None,
        "Bichsel et al. 2021 Table II; Dwork–Roth Claim 3.9",
        {},
        lambda: M.ReportNoisyMax(epsilon=1.0, monotonic=False),
    ),
    CatalogEntry(
        "noisy-counts-half-noise",
        "top-2 with Laplace noisy counts at half the scale its claim needs",
        lambda: NoisyCountsHalfNoise(M.GumbelTopK(k=2, epsilon=0.1), epsilon_counts=1.0),
        None,
        "002 §6.1 (line 205), footnote 8; Dwork–Roth Thm 3.6",
        {},
        lambda: M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=0.1), epsilon_counts=1.0),
    ),
)
