"""Top-k selection via distance to instability: A_stab and Top-Stable (TS).

seed 000 (000_4bf15007bce596ab.txt), Carvalho, Wang, Gondara, Miao (UAI 2020):

* [`StabilityRelease`][mechanisms.stability.StabilityRelease] — A_stab (Alg. 1, Thm 2.7) applied to
  ``f_k`` = the set of the top-k items, whose distance to instability is the gap
  ``q_k = h_k − h_{k+1} − 1`` (Sec. 3).
* [`TopStable`][mechanisms.stability.TopStable] — TS (Alg. 3, Thm 3.2): an SVT (c = 1) over the gaps
  ``q_k̄, q_{k̄−1}, ..., q_1``; the first position i whose noisy gap beats the noisy
  threshold releases ``f_i`` (all of it when i <= k, else k of its items chosen by the
  exponential mechanism or uniformly at random); ⊥ when no position passes.

Both only read the top ``k̄ + 1`` counts (accept a full histogram or a ``TopCounts``).
Counts beyond the domain are 0 (``h_j = 0`` for ``j > d``) and TS only tests positions
``i <= d`` (a public, data-independent restriction of its query list), so it never
returns an item that does not exist. Outcomes are sets (ascending ids), or ``(BOTTOM,)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from . import tail_bounds
from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, PrivacyClaim
from .histogram import TopCounts, as_top_counts
from .outcomes import BOTTOM, PAD
from .validation import (
    require_choice,
    require_nonnegative_float,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = ["StabilityRelease", "TopStable", "top_gaps"]


def top_gaps(top: TopCounts, positions: int) -> np.ndarray:
    """``q_i = h_i − h_{i+1} − 1`` for ``i = 1..positions`` (seed 000 Alg. 3 line 6).

    ``h`` is the sorted histogram with zeros beyond the domain; ``top`` must hold the
    top ``positions + 1`` counts (or the whole domain).
    """
    h = np.zeros(positions + 1, dtype=np.int64)
    n = min(len(top), positions + 1)
    h[:n] = top.counts[:n]
    return h[:-1] - h[1:] - 1


@dataclass(frozen=True)
class StabilityRelease(TopKMechanism):
    """A_stab releasing the top-k set when its noisy distance to instability beats ln(1/δ)/ε.

    seed 000 (000_4bf15007bce596ab.txt) Alg. 1 with Thm 2.7's threshold
    ``T = ln(1/δ)/ε``; the distance of ``f_k`` is ``h_k − h_{k+1} − 1`` (Sec. 3). Outcome:
    the top-k item ids ascending, or ``(BOTTOM,)``. (ε, δ)-DP under add/remove of a user
    (Thm 2.7).

    Parameters
    ----------
    k : size of the released set, >= 1.
    epsilon : ε > 0 (noise Lap(1/ε) on the distance).
    delta : δ in (0, 1).
    """

    k: int
    epsilon: float
    delta: float

    ordered: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "delta", require_probability("delta", self.delta))

    @property
    def threshold(self) -> float:
        """T = ln(1/δ)/ε (Thm 2.7)."""
        return math.log(1.0 / self.delta) / self.epsilon

    @property
    def width(self) -> int:
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        """(ε, δ) by seed 000 Thm 2.7."""
        return PrivacyClaim(self.epsilon, self.delta, AddRemoveUser())

    def released_set(self, counts: ArrayLike) -> tuple[np.ndarray, int]:
        """The ascending top-k ids (at most d of them) and the gap ``q_k``."""
        top = as_top_counts(counts, self.k + 1)
        items = np.sort(top.items[: self.k])
        return items, int(top_gaps(top, self.k)[-1])

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The top-k set ``f_k(counts)``: the only items A_stab can release.

        Seed 000 (000_4bf15007bce596ab.txt) Alg. 1: the output is ``f_k(D)`` or ⊥, and the
        noisy distance (Laplace) passes the threshold with positive probability.
        """
        return frozenset(int(item) for item in self.released_set(counts)[0])

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        check_rng(rng)
        size = check_size(size)
        items, gap = self.released_set(counts)
        out = np.full((size, self.width), PAD, dtype=np.int64)
        if size == 0:
            return out
        passed = gap + rng.laplace(0.0, 1.0 / self.epsilon, size) > self.threshold
        out[passed, : items.size] = items
        out[~passed, 0] = BOTTOM
        return out


@dataclass(frozen=True)
class TopStable(TopKMechanism):
    """TS: the first stable position i (from k̄ down to 1) releases k items of the top i.

    seed 000 (000_4bf15007bce596ab.txt) Alg. 3; privacy Thm 3.2: (ε + ε_EM, δ)-DP under
    add/remove of one user. ε₁ = p₁ε (threshold noise Lap(1/ε₁)), ε₂ = (1 − p₁)ε (gap
    noise Lap(2/ε₂)), c = 2ε₁/ε₂ (must differ from 1: Lemma 3.1). δ_q (line 2) is the
    largest value whose unstable-release probability is <= δ/k̄, computed by
    ``mechanisms.tail_bounds.delta_q_for_target``; ``T = ln(1/δ_q)/(ε₂/2)`` (line 3).

    ``calibration="paper"`` measures that probability by Lemma 3.1's bound (line 2 as
    written); ``"exact"`` by the exact tail P[Lap(2/ε₂) > T + Lap(1/ε₁)]. Thm 3.2's proof
    only uses "probability <= δ/k̄", so both give the same claim; "exact" has a lower T.

    When the first success is at i > k: ``epsilon_em > 0`` picks k of the i items by the
    exponential mechanism with monotonic count scores (peeling, ε_EM/k per pick, seed 000
    Lemma 2.4, i.e. Gumbel top-k with scale k/ε_EM); ``epsilon_em = 0`` picks a uniformly
    random k-subset (line 10-11, Sec. 3). Outcome: item ids ascending, or ``(BOTTOM,)``.

    Parameters
    ----------
    k : number of items wanted, >= 1.
    kbar : k̄ >= k, the number of stability positions tested (reads the top k̄+1 counts).
    epsilon : ε > 0 of the SVT part.
    delta : δ in (0, 1).
    epsilon_em : ε_EM >= 0 for the final exponential mechanism (0: uniform subset).
    p1 : share of ε for the threshold noise, in (0, 1), with 2p₁/(1 − p₁) != 1 (p₁ != 1/3).
    calibration : "paper" or "exact" (see above).
    """

    k: int
    kbar: int
    epsilon: float
    delta: float
    epsilon_em: float = 0.0
    p1: float = 0.37
    calibration: str = "paper"

    ordered: ClassVar[bool] = False

    def __post_init__(self) -> None:
        k = require_positive_int("k", self.k)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "kbar", require_positive_int("kbar", self.kbar, minimum=k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "delta", require_probability("delta", self.delta))
        object.__setattr__(
            self, "epsilon_em", require_nonnegative_float("epsilon_em", self.epsilon_em)
        )
        p1 = require_probability("p1", self.p1)
        if math.isclose(2.0 * p1 / (1.0 - p1), 1.0, rel_tol=1e-9):
            raise ValueError(
                f"p1 must be in (0, 1) and differ from 1/3 (c = 2·p1/(1 − p1) must not be 1, "
                f"seed 000 Lemma 3.1), got {self.p1!r}"
            )
        object.__setattr__(self, "p1", p1)
        require_choice("calibration", self.calibration, tail_bounds.CALIBRATIONS)
        # Fail at construction, not at the first sample, if δ_q cannot be solved.
        _ = self.delta_q

    # -- parameters of Alg. 3, lines 1-3 -------------------------------------------------
    @property
    def epsilon1(self) -> float:
        """ε₁ = p₁ε, the threshold-noise budget (line 1)."""
        return self.p1 * self.epsilon

    @property
    def epsilon2(self) -> float:
        """ε₂ = (1 − p₁)ε, the gap-noise budget (line 1)."""
        return (1.0 - self.p1) * self.epsilon

    @property
    def c(self) -> float:
        """c = 2ε₁/ε₂ (line 1)."""
        return 2.0 * self.epsilon1 / self.epsilon2

    def unstable_budget(self) -> float:
        """δ/k̄: the bound each of the k̄ unstable releases must meet (Thm 3.2's proof)."""
        return self.delta / self.kbar

    @property
    def delta_q(self) -> float:
        """δ_q of line 2 (largest δ_q with crossing probability <= δ/k̄)."""
        return tail_bounds.delta_q_for_target(self.unstable_budget(), self.c, self.calibration)

    @property
    def threshold(self) -> float:
        """T = ln(1/δ_q)/(ε₂/2) (line 3)."""
        return tail_bounds.tail_threshold(self.epsilon2 / 2.0, self.delta_q)

    def threshold_scale(self) -> float:
        """Scale 1/ε₁ of the threshold noise (line 3)."""
        return 1.0 / self.epsilon1

    def gap_scale(self) -> float:
        """Scale 1/(ε₂/2) of each gap's noise (line 7, A_stab with ε₂/2)."""
        return 2.0 / self.epsilon2

    @property
    def width(self) -> int:
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        """(ε + ε_EM, δ) by seed 000 Thm 3.2."""
        return PrivacyClaim(self.epsilon + self.epsilon_em, self.delta, AddRemoveUser())

    def positions(self, counts: ArrayLike) -> tuple[TopCounts, np.ndarray]:
        """The top counts and the gaps ``q_1..q_K`` tested, ``K = min(k̄, d)``."""
        top = as_top_counts(counts, self.kbar + 1)
        n_positions = min(self.kbar, top.domain_size)
        return top, top_gaps(top, n_positions)

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The top ``min(k̄, d)`` items: the only ones TS can release.

        Seed 000 (000_4bf15007bce596ab.txt) Alg. 3 lines 5-11: the items come from the top i
        for the first stable position i <= k̄; i = k̄ (Laplace noise on every gap and on the
        threshold) happens with positive probability, and then each of the top k̄ items is in
        the released k-subset with positive probability (uniform subset or Gumbel keys).
        """
        top, gaps = self.positions(counts)
        return frozenset(int(item) for item in top.items[: gaps.size])

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        check_rng(rng)
        size = check_size(size)
        top, gaps = self.positions(counts)
        n = gaps.size
        out = np.full((size, self.width), PAD, dtype=np.int64)
        if size == 0:
            return out
        noisy_threshold = self.threshold + rng.laplace(0.0, self.threshold_scale(), size)
        passes = (
            gaps[None, :] + rng.laplace(0.0, self.gap_scale(), (size, n))
            > (noisy_threshold[:, None])
        )
        # Positions are tested from n down to 1: the first success is the LAST True column.
        any_pass = passes.any(axis=1)
        first = n - np.argmax(passes[:, ::-1], axis=1)  # 1-based position i
        out[~any_pass, 0] = BOTTOM
        rows = np.flatnonzero(any_pass)
        first = first[rows]
        columns = np.arange(n)
        kk = min(self.k, n)
        # Scores used to pick k of the top i: ε_EM/k · count + Gumbel (peeling EM), or
        # i.i.d. uniform keys (uniform k-subset); positions >= i are excluded.
        if self.epsilon_em > 0:
            keys = (self.epsilon_em / self.k) * top.counts[:n].astype(float)[None, :] + rng.gumbel(
                0.0, 1.0, (rows.size, n)
            )
        else:
            keys = rng.random((rows.size, n))
        keys = np.where(columns[None, :] < first[:, None], keys, -np.inf)
        if kk < n:
            picked = np.argpartition(-keys, kk - 1, axis=1)[:, :kk]
        else:
            picked = np.broadcast_to(columns, (rows.size, n))
        chosen_ids = top.items[:n][picked]
        valid = picked < first[:, None]  # when i <= k, only the i top positions are released
        chosen_ids = np.where(valid, chosen_ids, np.iinfo(np.int64).max)
        chosen_ids.sort(axis=1)
        chosen_ids = np.where(chosen_ids == np.iinfo(np.int64).max, PAD, chosen_ids)
        out[rows, :kk] = chosen_ids
        return out
