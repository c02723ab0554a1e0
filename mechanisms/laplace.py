"""Full-domain noisy-max mechanisms: Laplace, exponential (permute-and-flip) and Gaussian noise.

* [`ReportNoisyMax`][mechanisms.laplace.ReportNoisyMax] — argmax of Laplace-noised counts (Dwork &
  Roth 2014, §3.3, Claim 3.9; seed 002_a192ff3c12785105.txt §1 "report noisy max" [10]).
* [`LaplaceTopK`][mechanisms.laplace.LaplaceTopK] — one-shot Laplace top-k, the LAPLACE baseline of
  seed 004_96d6a41600571c16.txt §4: Lap(2k/ε) on every count, the k largest in order.
* [`PermuteAndFlip`][mechanisms.laplace.PermuteAndFlip] — McKenna & Sheldon (2020), cited by seed
  001_49698e97f2ea8cba.txt §7; sampled as report-noisy-max with exponential
  noise, which has the same law (Ding, Kifer, Saravanan, Wang, Xiao, 2021).
* [`GaussianTopK`][mechanisms.laplace.GaussianTopK] — Gaussian noise with the analytic calibration
  of Balle & Wang (2018), seed 001 App. E, Thm 7, for users touching at most Δ items.

Every sampler draws one ``(size, d)`` noise matrix and reduces it with numpy;
no Python loop over samples. Ties between noisy values have probability 0.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .analytic_gaussian import analytic_gaussian_sigma
from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, BoundedChange, PrivacyClaim
from .histogram import validate_counts
from .outcomes import PAD
from .validation import (
    require_bool,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = ["GaussianTopK", "LaplaceTopK", "PermuteAndFlip", "ReportNoisyMax", "noisy_top_k"]


def noisy_top_k(noisy: np.ndarray, k: int, width: int) -> np.ndarray:
    """Indices of the ``k`` largest entries of each row, largest first, padded to ``width``.

    ``argpartition`` isolates the top k in O(d) per row; only those k are sorted.
    """
    size, d = noisy.shape
    taken = min(k, d)
    out = np.full((size, width), PAD, dtype=np.int64)
    if size == 0 or taken == 0:
        return out
    if taken < d:
        top = np.argpartition(-noisy, taken - 1, axis=1)[:, :taken]
    else:
        top = np.broadcast_to(np.arange(d), (size, d))
    values = np.take_along_axis(noisy, top, axis=1)
    order = np.argsort(-values, axis=1, kind="stable")
    out[:, :taken] = np.take_along_axis(top, order, axis=1)
    return out


@dataclass(frozen=True)
class _NoisyMax(TopKMechanism):
    """Shared body of the argmax mechanisms: ``argmax(counts + noise(scale))``.

    ``monotonic=True``: scale 1/ε, claim (ε, 0, AddRemoveUser()); False: scale 2/ε,
    claim (ε, 0, BoundedChange(1)). Subclasses supply the noise by ``_noise``.
    """

    epsilon: float
    monotonic: bool = True
    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "monotonic", require_bool("monotonic", self.monotonic))

    @property
    def scale(self) -> float:
        """Noise scale: 1/ε (monotonic) or 2/ε (sensitivity-1 queries in general)."""
        return (1.0 if self.monotonic else 2.0) / self.epsilon

    @property
    def width(self) -> int:
        return 1

    @property
    def claim(self) -> PrivacyClaim:
        neighbours = AddRemoveUser() if self.monotonic else BoundedChange(1)
        return PrivacyClaim(self.epsilon, 0.0, neighbours)

    @abc.abstractmethod
    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        """A ``shape`` array of i.i.d. noise at ``scale``."""

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        noisy = counts + self._noise(rng, (size, counts.size))
        return np.argmax(noisy, axis=1).astype(np.int64)[:, None]


@dataclass(frozen=True)
class ReportNoisyMax(_NoisyMax):
    """Report noisy max: the argmax of ``counts + Lap(scale)``.

    Dwork & Roth (2014), Claim 3.9 (seed 002_a192ff3c12785105.txt §1, ref. [10]).
    For counting queries under add/remove of one user every count moves by at
    most 1 in the same direction, so Lap(1/ε) gives ε-DP (``monotonic=True``).
    If counts may move independently by 1 either way (``BoundedChange(1)``)
    the standard analysis needs Lap(2/ε) (``monotonic=False``).

    Parameters
    ----------
    epsilon : the guarantee ε > 0 (the noise scale is derived from it).
    monotonic : True: scale 1/ε, claim (ε, 0, AddRemoveUser()); False: scale
        2/ε, claim (ε, 0, BoundedChange(1)).
    """

    ordered: ClassVar[bool] = True

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        """Lap(scale): scale 1/ε (monotonic) or 2/ε (sensitivity-1 queries in general)."""
        return rng.laplace(0.0, self.scale, size=shape)


@dataclass(frozen=True)
class LaplaceTopK(TopKMechanism):
    """One-shot Laplace top-k: add Lap(2k/ε) to every count, report the k largest in order.

    The LAPLACE baseline of seed 004_96d6a41600571c16.txt §4 ("we instead add
    Laplace noise with parameter 2k/ε", ε-DP variant; ref. [12], Qiao, Su &
    Zhang 2021), which seed 004 takes as ε-DP; the claim is stated under
    ``BoundedChange(1)`` (every count moves by <= 1 either way), which
    contains add/remove of one user. The scale is the paper's, not derived
    here.

    Parameters
    ----------
    k : number of items reported (>= 1); ``min(k, d)`` are reported.
    epsilon : the guarantee ε > 0; the noise scale is 2k/ε.
    """

    k: int
    epsilon: float
    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))

    @property
    def scale(self) -> float:
        """Laplace scale 2k/ε (seed 004 §4)."""
        return 2.0 * self.k / self.epsilon

    @property
    def width(self) -> int:
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, 0.0, BoundedChange(1))

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        noisy = counts + rng.laplace(0.0, self.scale, size=(size, counts.size))
        return noisy_top_k(noisy, self.k, self.width)


@dataclass(frozen=True)
class PermuteAndFlip(_NoisyMax):
    """Permute-and-flip: visit items in random order, keep item r with prob. exp((c_r − c*)/scale).

    McKenna & Sheldon (2020), Alg. 1 (seed 001_49698e97f2ea8cba.txt §7, ref.
    [27]): ε-DP with ``exp(ε (q_r − q*) / (2Δ_q))``, and ``exp(ε (q_r − q*) / Δ_q)``
    for monotone quality scores (their Thm 1 and the monotone remark). Counts
    have Δ_q = 1 and are monotone under add/remove of a user. Sampled as
    the argmax of ``counts + Exponential(scale)`` noise, which has exactly
    the same law (Ding et al. 2021, "The permute-and-flip mechanism is
    identical to report-noisy-max with exponential noise"); the exact law in
    [`dpaudit.exact.laplace_laws`][dpaudit.exact.laplace_laws] uses the permutation form instead.

    Parameters
    ----------
    epsilon : the guarantee ε > 0.
    monotonic : True: scale 1/ε, claim (ε, 0, AddRemoveUser()); False: scale
        2/ε, claim (ε, 0, BoundedChange(1)).
    """

    ordered: ClassVar[bool] = True

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        """Exponential(scale): flip probabilities are exp((c_r − c*)/scale)."""
        return rng.exponential(self.scale, size=shape)


class AnalyticGaussianParams:
    """Validation, σ and width shared by the Gaussian top-k mechanisms.

    For frozen dataclasses with fields ``k, epsilon, delta, max_items``:
    ``σ = G(ε, δ, √Δ)``, the analytic Gaussian calibration of Balle & Wang (2018)
    for L2 sensitivity √Δ (seed 001 App. E, Thm 7).
    """

    # The subclass's dataclass fields (this mixin is not a dataclass: no fields of its own).
    k: int
    epsilon: float
    delta: float
    max_items: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "delta", require_probability("delta", self.delta))
        object.__setattr__(self, "max_items", require_positive_int("max_items", self.max_items))

    @property
    def sigma(self) -> float:
        """Noise standard deviation G(ε, δ, √Δ) (Balle & Wang 2018, Alg. 1)."""
        return analytic_gaussian_sigma(self.epsilon, self.delta, math.sqrt(self.max_items))

    @property
    def width(self) -> int:
        return self.k


@dataclass(frozen=True)
class GaussianTopK(AnalyticGaussianParams, TopKMechanism):
    """Gaussian top-k: add N(0, σ²) to every count, report the k largest in order.

    seed 001_49698e97f2ea8cba.txt App. E, Thm 7 (Balle & Wang 2018): with
    ``σ = G(ε, δ, √Δ)`` — the analytic Gaussian calibration for L2
    sensitivity √Δ, since a user moves at most Δ counts by 1 — releasing the
    noisy counts is (ε, δ)-DP, and the ordered top-k is post-processing.
    σ comes from
    [`mechanisms.analytic_gaussian.analytic_gaussian_sigma`][mechanisms.analytic_gaussian.analytic_gaussian_sigma].

    Parameters
    ----------
    k : number of items reported (>= 1); ``min(k, d)`` are reported.
    epsilon : ε > 0.
    delta : δ in (0, 1).
    max_items : Δ >= 1, the most items one user touches.
    """

    k: int
    epsilon: float
    delta: float
    max_items: int
    ordered: ClassVar[bool] = True

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, self.delta, AddRemoveUser(self.max_items))

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        noisy = counts + rng.normal(0.0, self.sigma, size=(size, counts.size))
        return noisy_top_k(noisy, self.k, self.width)
