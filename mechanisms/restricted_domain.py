"""The restricted-domain framework F and its instances RestrictedGumbel and RestrictedNormal.

seed 001 (001_49698e97f2ea8cba.txt), Carvalho & Wang, "A Framework for Practical DP
Top-k Selection":

* [`RestrictedDomain`][mechanisms.restricted_domain.RestrictedDomain] — F (Alg. 1, Thm 2): run ANY
  top-k mechanism of this project as a black box on the top-k̄ items (STEP 1), then test the
  selected items in selection order with a halting SVT (Alg. 2): item i is kept while
  ``(c_i − h_{k̄+1} − 1) + Lap(2/ε_R) > T + Lap(2/ε_R)``, ``T = ln(1/δ_q)/(ε_R/2)``; the
  first failure appends ⊥ and halts (STEP 2). (ε_M + ε_R, δ_M + δ_R)-DP (Thm 2).
* [`RestrictedGumbel`][mechanisms.restricted_domain.RestrictedGumbel] — RG (Alg. 3, Thm 6): F around
  top-k Gumbel noise GK (App. B, Alg. 4) with ε_M from eq. (15).
* [`RestrictedNormal`][mechanisms.restricted_domain.RestrictedNormal] — RN (App. E, Thm 8): F around
  top-k Gaussian noise with σ = G(ε, δ_M, √Δ) (analytic Gaussian, Balle & Wang 2018).
* [`split_total_budget`][mechanisms.accounting.split_total_budget] — §8.2's split of a total
  (ε, δ) for RG using ``Ind`` (App. C, Alg. 5).

Domain convention: counts beyond the domain are 0 (``h_{k̄+1} = 0`` when d <= k̄). The
wrapped mechanism sees the restricted histogram in rank order (position r = r-th largest
count, ties to the lower id, so its own tie-break agrees with the global one) and its
output positions are mapped back to item ids. Items of a set (unordered) inner mechanism
are tested in ascending id order. F's outcome: the kept items in test order, then
``BOTTOM`` if a test failed; an inner ``BOTTOM`` (e.g. a wrapped LimitDomain stopping
early) is kept at the end when every item passed.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from . import accounting, tail_bounds
from .accounting import split_total_budget
from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, PrivacyClaim
from .histogram import TopCounts, as_top_counts, validate_counts
from .laplace import AnalyticGaussianParams, noisy_top_k
from .outcomes import PAD, MixedBatch
from .restricted_steps import halting_test, items_of_positions
from .validation import (
    require_choice,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = [
    "GaussianNoiseTopK",
    "RestrictedDomain",
    "RestrictedGumbel",
    "RestrictedNormal",
    "split_total_budget",
]


@dataclass(frozen=True)
class RestrictedDomain(TopKMechanism):
    """Framework F: a black-box top-k mechanism on the top-k̄ items plus a halting SVT test.

    seed 001 (001_49698e97f2ea8cba.txt) Alg. 1; privacy Thm 2 (via Thm 1 and Lemma 2):
    ``(ε_M + ε_R, δ_M + δ_R)``-DP under add/remove of one user, where ``(ε_M, δ_M)`` is
    ``mechanism.claim``. δ_q (line 2): ``calibration="paper"`` takes the largest δ_q with
    ``¼·δ_q·(3 + ln 1/δ_q) <= δ_R`` (eq. 6); ``"exact"`` uses the exact crossing
    probability ``¼·δ_q·(2 + ln 1/δ_q)`` instead — Lemma 2 only needs the crossing
    probability to be <= δ_R, so the guarantee is unchanged and T is lower.

    Parameters
    ----------
    mechanism : any TopKMechanism (STEP 1), applied to the restricted histogram.
    kbar : k̄ >= 1 (>= mechanism.k when it has one): size of the restricted domain.
    epsilon : ε_R > 0 of STEP 2.
    delta : δ_R in (0, 1).
    calibration : "paper" or "exact".
    """

    mechanism: TopKMechanism
    kbar: int
    epsilon: float
    delta: float
    calibration: str = "paper"

    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, TopKMechanism):
            raise ValueError(
                f"mechanism must be a mechanisms.TopKMechanism instance, got {self.mechanism!r}"
            )
        inner_k = getattr(self.mechanism, "k", 1)
        object.__setattr__(
            self, "kbar", require_positive_int("kbar", self.kbar, minimum=max(1, int(inner_k)))
        )
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "delta", require_probability("delta", self.delta))
        require_choice("calibration", self.calibration, tail_bounds.CALIBRATIONS)

    # -- STEP 2 parameters (Alg. 1 lines 2-4) ---------------------------------------------
    @property
    def delta_q(self) -> float:
        """δ_q of line 2."""
        return tail_bounds.restricted_domain_delta_q(self.delta, self.calibration)

    @property
    def threshold(self) -> float:
        """T = ln(1/δ_q)/(ε_R/2) (line 3)."""
        return tail_bounds.tail_threshold(self.epsilon / 2.0, self.delta_q)

    def noise_scale(self) -> float:
        """Laplace scale 2/ε_R of the threshold noise and of each item's noise (lines 3, 7)."""
        return 2.0 / self.epsilon

    def reference_position(self) -> int:
        """k̄ + 1: the gap is measured to the (k̄+1)-th largest count (line 4)."""
        return self.kbar + 1

    @property
    def width(self) -> int:
        return self.mechanism.width

    @property
    def claim(self) -> PrivacyClaim:
        """(ε_M + ε_R, δ_M + δ_R) by seed 001 Thm 2."""
        inner = self.mechanism.claim
        neighbours = inner.neighbours
        if not isinstance(neighbours, AddRemoveUser):
            # BoundedChange contains every add/remove pair, and F's SVT (Thm 3) needs the
            # monotone add/remove relation.
            neighbours = AddRemoveUser()
        epsilon, delta = inner.epsilon + self.epsilon, min(1.0, inner.delta + self.delta)
        return PrivacyClaim(epsilon, delta, neighbours)

    # -- the restricted domain ------------------------------------------------------------
    def restrict(self, counts: ArrayLike) -> tuple[TopCounts, np.ndarray, int]:
        """``(top, restricted_counts, h_ref)``: the top k̄+1 entries, the top-k̄ counts in
        rank order (the wrapped mechanism's input), and the reference count of line 4."""
        top = as_top_counts(counts, self.kbar + 1)
        restricted = top.counts[: min(self.kbar, len(top))].copy()
        ref = self.reference_position()
        h_ref = int(top.counts[ref - 1]) if ref - 1 < len(top) else 0
        return top, restricted, h_ref

    def map_inner(self, batch: np.ndarray, top: TopCounts) -> np.ndarray:
        """Map the wrapped mechanism's positions to item ids (sets: ascending ids first)."""
        return items_of_positions(batch, top, self.mechanism.ordered)

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        check_rng(rng)
        size = check_size(size)
        top, restricted, h_ref = self.restrict(counts)
        inner = self.mechanism.sample(restricted, size, rng)  # STEP 1 (black box)
        if isinstance(inner, MixedBatch):
            raise ValueError(
                f"mechanism must be a top-k selection; {self.mechanism!r} releases values"
            )
        mapped = self.map_inner(inner, top)
        if size == 0:  # nothing to test: T is not computed
            return np.full((0, self.width), PAD, dtype=np.int64)
        return halting_test(mapped, top, h_ref, self.threshold, self.noise_scale(), self.width, rng)


@dataclass(frozen=True)
class GaussianNoiseTopK(AnalyticGaussianParams, TopKMechanism):
    """Top-k by Gaussian noise N(0, σ²) on every count, reported in noisy order.

    seed 001 (001_49698e97f2ea8cba.txt) App. E Thm 7 (the N^k of RestrictedNormal) with
    σ = G(ε, δ, √Δ), the analytic Gaussian calibration for L2 sensitivity √Δ
    (``mechanisms.analytic_gaussian.analytic_gaussian_sigma``). Claim as stated by Thm 7:
    (√Δ·ε, δ) for users touching <= Δ items (conservative: σ is already calibrated for
    sensitivity √Δ).

    Parameters
    ----------
    k : number of items reported, >= 1.
    epsilon : ε > 0.
    delta : δ_M in (0, 1).
    max_items : Δ >= 1.
    """

    k: int
    epsilon: float
    delta: float
    max_items: int = 1

    ordered: ClassVar[bool] = True

    @property
    def claim(self) -> PrivacyClaim:
        """(√Δ·ε, δ_M) as stated by seed 001 Thm 7."""
        return PrivacyClaim(
            math.sqrt(self.max_items) * self.epsilon, self.delta, AddRemoveUser(self.max_items)
        )

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        check_rng(rng)
        size = check_size(size)
        counts = validate_counts(counts)
        noisy = counts[None, :] + rng.normal(0.0, self.sigma, (size, counts.size))
        return noisy_top_k(noisy, self.k, self.width)


class _FrameworkWrapper:
    """Shared body of RG and RN: F(inner, k̄, ε_R, δ_R) samples; width is k.

    Subclasses define ``framework`` by ``_wrap`` on their inner mechanism.
    """

    # The subclasses' dataclass fields (this mixin is not a dataclass: no fields of its own).
    k: int
    kbar: int
    epsilon_r: float
    delta_r: float
    calibration: str

    @property
    @abc.abstractmethod
    def framework(self) -> RestrictedDomain:
        """F(inner, k̄, ε_R, δ_R): the framework instance that samples (Alg. 3 line 2)."""

    def _wrap(self, mechanism: TopKMechanism) -> RestrictedDomain:
        return RestrictedDomain(
            mechanism=mechanism,
            kbar=self.kbar,
            epsilon=self.epsilon_r,
            delta=self.delta_r,
            calibration=self.calibration,
        )

    @property
    def width(self) -> int:
        return self.k

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The top ``min(k̄, d)`` items: the restricted domain of STEP 1.

        Seed 001 (001_49698e97f2ea8cba.txt) Alg. 1 line 1 (the framework F): the inner
        mechanism sees only the top-k̄ counts; its noise (Gumbel or Gaussian, full support) can
        select each of them, and STEP 2's noisy test passes with positive probability.
        """
        top, restricted, _ = self.framework.restrict(counts)
        return frozenset(int(item) for item in top.items[: restricted.size])

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.framework.sample(counts, size, rng)


@dataclass(frozen=True)
class RestrictedGumbel(_FrameworkWrapper, TopKMechanism):
    """RG: framework F around top-k Gumbel noise GK on the top-k̄ items.

    seed 001 (001_49698e97f2ea8cba.txt) Alg. 3 (GK = App. B Alg. 4, Gumbel scale 1/ε per
    selection); privacy Thm 6: ``(ε_M + ε_R, δ_M + δ_R)`` with ε_M from eq. (15)
    (``mechanisms.accounting.ddr_composition_epsilon(ε, k, δ_M)``; δ_M = 0 gives kε).
    Use [`split_total_budget`][mechanisms.accounting.split_total_budget] /
    [`from_total`][mechanisms.restricted_domain.RestrictedGumbel.from_total] for §8.2's parameters.

    Parameters
    ----------
    k : items selected by GK, >= 1.
    kbar : k̄ >= k.
    epsilon : per-selection ε of GK, > 0.
    delta : δ_M in [0, 1) of eq. (15).
    epsilon_r : ε_R > 0 of F's STEP 2.
    delta_r : δ_R in (0, 1).
    calibration : "paper" or "exact" (see
        [`RestrictedDomain`][mechanisms.restricted_domain.RestrictedDomain]).
    """

    k: int
    kbar: int
    epsilon: float
    delta: float
    epsilon_r: float
    delta_r: float
    calibration: str = "paper"

    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        k = require_positive_int("k", self.k)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "kbar", require_positive_int("kbar", self.kbar, minimum=k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "delta", require_probability("delta", self.delta, allow_zero=True))
        object.__setattr__(self, "epsilon_r", require_positive_float("epsilon_r", self.epsilon_r))
        object.__setattr__(self, "delta_r", require_probability("delta_r", self.delta_r))
        require_choice("calibration", self.calibration, tail_bounds.CALIBRATIONS)

    @property
    def framework(self) -> RestrictedDomain:
        """F(GK, k̄, ε_R, δ_R): the framework instance that samples (Alg. 3 line 2)."""
        from .exponential import GumbelTopK

        return self._wrap(GumbelTopK(k=self.k, epsilon=self.epsilon))

    @property
    def claim(self) -> PrivacyClaim:
        """(ε_M + ε_R, δ_M + δ_R), ε_M by eq. (15): seed 001 Thm 6."""
        epsilon_m = accounting.ddr_composition_epsilon(self.epsilon, self.k, self.delta)
        return PrivacyClaim(
            epsilon_m + self.epsilon_r, min(1.0, self.delta + self.delta_r), AddRemoveUser()
        )

    @classmethod
    def from_total(
        cls, k: int, kbar: int, epsilon_total: float, delta_total: float, calibration: str = "paper"
    ) -> RestrictedGumbel:
        """RG with seed 001 §8.2's split of a total (ε, δ); see [`split_total_budget`][mechanisms.accounting.split_total_budget]."""
        return cls(
            k=k,
            kbar=kbar,
            calibration=calibration,
            **split_total_budget(epsilon_total, delta_total, k),
        )


@dataclass(frozen=True)
class RestrictedNormal(_FrameworkWrapper, TopKMechanism):
    """RN: framework F around top-k Gaussian noise with σ = G(ε, δ_M, √Δ).

    seed 001 (001_49698e97f2ea8cba.txt) App. E; privacy Thm 8:
    ``(√Δ·ε + ε_R, δ_M + δ_R)`` for users touching at most Δ items
    ([`claim`][mechanisms.restricted_domain.RestrictedNormal.claim]).

    Why this is looser than [`GaussianTopK`][mechanisms.GaussianTopK] with the same σ: Thm 7
    (the Gaussian step N^k) multiplies ε by Δ₂ = √Δ, but σ = G(ε, δ_M, √Δ) is already the
    analytic calibration for L2 sensitivity √Δ, which makes N^k (ε, δ_M)-DP by itself
    (Balle & Wang 2018, Thm 8; top-k of the noisy scores is post-processing). Read
    literally, Thm 7/8 count the sensitivity twice. Their statement is still true (a larger
    ε is a weaker claim) and is the one the seed proves, so it stays the default;
    [`tight_claim`][mechanisms.restricted_domain.RestrictedNormal.tight_claim] is
    ``(ε + ε_R, δ_M + δ_R)`` from Balle–Wang Thm 8 plus seed 001 Thm 2 (F composes its inner
    mechanism with STEP 2), the claim GaussianTopK makes for the same σ, and is checked by
    exhaustive ``dpaudit.exact.verify`` in ``tests/dpaudit/exact/test_gaussian_verify.py``.

    Parameters
    ----------
    k : items selected, >= 1.
    kbar : k̄ >= k.
    epsilon : ε > 0 of the Gaussian mechanism.
    delta : δ_M in (0, 1) of the Gaussian mechanism.
    epsilon_r : ε_R > 0 of F's STEP 2.
    delta_r : δ_R in (0, 1).
    max_items : Δ >= 1.
    calibration : "paper" or "exact".
    """

    k: int
    kbar: int
    epsilon: float
    delta: float
    epsilon_r: float
    delta_r: float
    max_items: int = 1
    calibration: str = "paper"

    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        k = require_positive_int("k", self.k)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "kbar", require_positive_int("kbar", self.kbar, minimum=k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "delta", require_probability("delta", self.delta))
        object.__setattr__(self, "epsilon_r", require_positive_float("epsilon_r", self.epsilon_r))
        object.__setattr__(self, "delta_r", require_probability("delta_r", self.delta_r))
        object.__setattr__(self, "max_items", require_positive_int("max_items", self.max_items))
        require_choice("calibration", self.calibration, tail_bounds.CALIBRATIONS)

    @property
    def framework(self) -> RestrictedDomain:
        """F(N^k, k̄, ε_R, δ_R)."""
        return self._wrap(
            GaussianNoiseTopK(
                k=self.k, epsilon=self.epsilon, delta=self.delta, max_items=self.max_items
            )
        )

    @property
    def claim(self) -> PrivacyClaim:
        """(√Δ·ε + ε_R, δ_M + δ_R) by seed 001 Thm 8."""
        return self.framework.claim

    @property
    def tight_claim(self) -> PrivacyClaim:
        """(ε + ε_R, δ_M + δ_R): Balle & Wang 2018 Thm 8 for N^k, seed 001 Thm 2 for F."""
        return PrivacyClaim(
            self.epsilon + self.epsilon_r,
            min(1.0, self.delta + self.delta_r),
            AddRemoveUser(self.max_items),
        )
