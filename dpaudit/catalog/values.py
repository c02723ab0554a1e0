"""Broken releases of real values (the auditor's value encoders see them).

Bichsel et al. (DP-Sniper, S&P 2021) Table II; seed 002 §6.1 footnote 8; Dwork & Roth
2014, Claim 3.9 and Thm 3.6; Mironov 2012 (CCS) on floating-point Laplace noise.
"""

from dataclasses import dataclass
from typing import ClassVar

import mpmath
import numpy as np

import mechanisms as M
from mechanisms import (
    AddRemoveUser,
    PrivacyClaim,
    TopKMechanism,
    check_rng,
    check_size,
    validate_counts,
)
from mechanisms.discrete_laplace import RATIO_BITS, discrete_laplace, discrete_laplace_ratio
from mechanisms.validation import require_positive_float

from ..exact.value_laws import discrete_laplace_below, value_law
from .base import _BoundedChangeClaimsEpsilon
from .entry import CatalogEntry


@dataclass(frozen=True)
class ReportNoisyMaxFloatValue(_BoundedChangeClaimsEpsilon):
    """BUG: report noisy max that releases only the noisy maximum, as a real number.

    DP-Sniper's ReportNoisyMax3 (Bichsel et al., S&P 2021, Table II; Ding et al. 2018):
    Laplace noise of scale 2/ε on each count and the largest noisy count released,
    claiming (ε, 0) under BoundedChange(1) as the argmax would (Dwork & Roth 2014,
    Claim 3.9). Moving every count up by 1 shifts the maximum by 1; below every count
    the law of the maximum of d such variables moves by e^{dε/2}, so the true ε is dε/2
    (2.5 for d = 5, ε = 1). The noise is the discrete Laplace of
    [`mechanisms.discrete_laplace`][mechanisms.discrete_laplace] (``r = e^{−ε/2}`` rounded up), so
    that this law holds on doubles too: a double-precision Laplace sample would make the release
    ∞-DP (Mironov 2012), and an audit's bound would say so rather than dε/2 — this
    entry is the reference of the value pipeline's validity tests, whose true ε must be
    the one its exact law gives. Outcomes: no items, one value.

    Parameters
    ----------
    epsilon : ε > 0 (noise ratio e^{−ε/2}, the discrete analogue of scale 2/ε).
    """

    value_width: ClassVar[int] = 1

    @property
    def width(self):
        return 0

    @property
    def noise_ratio(self) -> int:
        """The noise parameter ``r = noise_ratio / 2^53`` (``e^{−ε/2}`` rounded up)."""
        return discrete_laplace_ratio(self.epsilon / 2)

    def sample(self, counts, size, rng):
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        noisy = counts + discrete_laplace(self.noise_ratio, (size, counts.size), rng)
        return M.MixedBatch(np.zeros((size, 0), dtype=np.int64), noisy.max(axis=1).astype(float))


@dataclass(frozen=True)
class _NoisyMaxLaw:
    """Law of the noisy maximum: ``P(max < t) = Π_i P(c_i + Z_i < t)``, Z discrete Laplace."""

    histogram: tuple[int, ...]
    ratio: mpmath.mpf

    @property
    def items(self) -> dict:
        return {(): mpmath.mpf(1)}  # no items are released

    def below(self, t):
        return mpmath.fprod(discrete_laplace_below(t, c, self.ratio) for c in self.histogram)

    def box(self, items, intervals):
        (interval,) = intervals
        if items != () or interval == ():
            return mpmath.mpf(0)
        if interval is None:
            return mpmath.mpf(1)
        low, high = interval
        return self.below(high) - self.below(low)


@value_law.register(ReportNoisyMaxFloatValue)
def _noisy_max_law(mech, counts):
    ratio = mpmath.mpf(mech.noise_ratio) / mpmath.mpf(2) ** RATIO_BITS
    return _NoisyMaxLaw(tuple(int(c) for c in np.asarray(counts)), ratio)


@dataclass(frozen=True)
class NoisyCountsHalfNoise(M.NoisyCountsRelease):
    """BUG: top-k with noisy counts whose noise is half as wide as its claim needs.

    [`mechanisms.NoisyCountsRelease`][mechanisms.NoisyCountsRelease] (seed 002 §6.1, footnote 8)
    calibrates the discrete Laplace count noise to ``epsilon_counts / sensitivity`` per unit of
    change; this one uses twice that (noise about half as wide), so its count release is
    ``2 epsilon_counts``-DP while the claim still adds ``epsilon_counts``. Adding one user
    to every item shifts all released counts by 1: on the event "every released count
    above its count" the ratio is ``e^{2 epsilon_counts}`` (for k released items with
    sensitivity k).

    The fields are the parent's, unchanged: ``selector``, the item selection, and
    ``epsilon_counts``, the ε the counts claim (> 0).
    """

    @property
    def unit_epsilon(self) -> float:
        return 2 * self.epsilon_counts / self.sensitivity


@dataclass(frozen=True)
class FloatLaplaceNoisyCount(TopKMechanism):
    """BUG: a noisy count released with the textbook inverse-CDF Laplace on doubles.

    ``count + (−λ sgn(u) ln(1 − 2|u|))``, ``u = U − ½`` with ``U`` a 53-bit uniform double,
    ``λ = 1/ε`` — the Laplace mechanism (Dwork & Roth 2014, Thm 3.6) as diffprivlib
    wrote it before IBM diffprivlib issue 19. On doubles it is not ε-DP for any ε:
    the doubles reachable from count ``c`` and from ``c + 1`` differ (Mironov, CCS 2012,
    "On significance of the least significant bits for differential privacy", Sec. 3-4),
    so one output can rule the neighbour out. Claims (ε, 0) under AddRemoveUser; its
    correct twin is [`mechanisms.NoisyCount`][mechanisms.NoisyCount] (integer noise). Outcomes: no
    items, one value.

    Parameters
    ----------
    epsilon : the ε claimed, > 0 (noise scale 1/ε).
    item : the item whose count is released.
    """

    epsilon: float = 1.0
    item: int = 0

    value_width: ClassVar[int] = 1

    def __post_init__(self):
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))

    @property
    def width(self):
        return 0

    @property
    def claim(self):
        return PrivacyClaim(self.epsilon, 0.0, AddRemoveUser())

    def sample(self, counts, size, rng):
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        count = float(counts[self.item]) if self.item < counts.size else 0.0
        u = rng.random((size, 1)) - 0.5
        with np.errstate(divide="ignore"):
            noise = -(1.0 / self.epsilon) * np.sign(u) * np.log(1 - 2 * np.abs(u))
        return M.MixedBatch(np.zeros((size, 0), dtype=np.int64), count + noise)


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
    CatalogEntry(
        "float-laplace-noisy-count",
        "a noisy count with textbook inverse-CDF Laplace noise on doubles: outputs the "
        "neighbour cannot reach (not DP for any ε; claim 1)",
        lambda: FloatLaplaceNoisyCount(epsilon=1.0),
        None,
        "Mironov 2012 (CCS), Sec. 3-4; IBM diffprivlib issue 19",
        {},
        lambda: M.NoisyCount(epsilon=1.0),
    ),
)
