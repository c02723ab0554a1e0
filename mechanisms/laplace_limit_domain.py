"""Laplace limited domain: Durfee & Rogers' limited-domain top-k with Laplace instead of Gumbel noise.

seed 002_a192ff3c12785105.txt §6.1 (Alg. 4, Lemma 6.1; the 002 extraction
lost its formulas) as restated by seed 001_49698e97f2ea8cba.txt App. E.1:
add Lap(1/ε) to each of the top-k̄ counts and to the threshold
``h_⊥ = h_(k̄+1) + 1 + ln(Δ/δ)/ε``, sort, and report the items ahead of ⊥ (at
most k; ⊥ is reported when it comes before the k-th item).

The claim (see [`LaplaceLimitDomain`][mechanisms.laplace_limit_domain.LaplaceLimitDomain]): seed
002's Lemma 6.1 combines a bound δ̄ on the bad outcomes (Lemma 6.3, eq. 8) with an APPROXIMATE-DP
bound on the good outcomes (Lemma 6.4) — "the reason for the factor on the δ in our final privacy
guarantees" — which gives ``((Δ + 1)ε, (1 + e^{(Δ+1)ε}) δ̄)``, ``δ̄ = (δ/4)(3 + ln(Δ/δ))``; seed
001's own experiments (App. E.1) budget LaplaceLimitDomain with that factor. Seed 001's text
restates the guarantee without the factor; that reading is available, by name, as
``claim_basis="restated"``.

Only the top ``k̄ + 1`` counts are read ([`mechanisms.as_top_counts`][mechanisms.as_top_counts],
which also accepts a precomputed [`TopCounts`][mechanisms.TopCounts]). With
``d <= k̄`` the missing ``h_(k̄+1)`` is taken to be 0, the convention of
[`mechanisms.limit_domain`][mechanisms.limit_domain].

The fixed-threshold variant of seed 002 App. F (Alg. 8, Thm 5) is
[`mechanisms.FixedThreshold`][mechanisms.FixedThreshold], reconstructed from the prose of App. F
because the extraction lost its formulas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from . import accounting
from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, PrivacyClaim
from .histogram import TopCounts, as_top_counts
from .laplace import noisy_top_k
from .outcomes import BOTTOM, PAD
from .tail_bounds import laplace_limit_domain_delta
from .validation import (
    require_choice,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = ["CLAIM_BASES", "LaplaceLimitDomain", "laplace_limit_domain_threshold"]

#: What LaplaceLimitDomain's claim rests on: seed 002's lemmas combined ("proved") or
#: seed 001 App. E.1's restatement ("restated").
CLAIM_BASES = ("proved", "restated")


def laplace_limit_domain_threshold(
    top: TopCounts, kbar: int, epsilon: float, delta: float, max_items: int
) -> float:
    """``h_⊥ = h_(k̄+1) + 1 + ln(Δ/δ)/ε`` (seed 002 §6.1, Alg. 4; 0 for a missing h_(k̄+1))."""
    h_next = int(top.counts[kbar]) if kbar < len(top) else 0
    return h_next + 1.0 + math.log(max_items / delta) / epsilon


@dataclass(frozen=True)
class LaplaceLimitDomain(TopKMechanism):
    """Top-k over the true top-k̄ with Lap(1/ε) noise and a noisy threshold ⊥.

    seed 002_a192ff3c12785105.txt §6.1, Alg. 4 and Lemma 6.1, for users touching at most
    Δ items. The (Δ+1)ε is the Laplace mechanism on the Δ touched counts plus the
    threshold (basic composition, Lemma 6.2). The δ depends on ``claim_basis``:

    * ``"proved"`` (default): ``(1 + e^{(Δ+1)ε}) δ̄``, ``δ̄ = (δ/4)(3 + ln(Δ/δ))``. Seed 002
      §6.1 proves P[bad outcome] <= δ̄ (Lemma 6.3, eq. 8, via Lemma D.1) and, on the good
      outcomes, only approximate DP with the same δ̄ (Lemma 6.4; its prose: "our bounds on
      the good outcomes will instead be approximate differential privacy guarantees, which
      is the reason for the factor on the δ in our final privacy guarantees"). Then
      P(S) <= P(S ∩ good) + P(bad) <= e^{ε'} (Q(S) + δ̄) + δ̄. The extraction lost the
      formulas; this is the combination the prose describes, and the one seed 001 App. E.1
      budgets in its experiments ("(e^{ε_total} + 1)(δ/4)(3 + ln(Δ/δ)) at most δ_total").
    * ``"restated"``: δ̄ alone, seed 001 App. E.1's restatement ("LaplaceLimitDomain is
      ((Δ + 1)ε, δ̄)-DP"), which no theorem in the seeds proves. Supported only by
      exhaustive exact checks (``dpaudit.exact.verify``): it holds on every pair of the
      families in ``tests/dpaudit/exact/test_laplace_limit_domain_claims.py`` (d <= 5,
      counts <= 3, k̄ <= 3, Δ <= 2; worst δ 0.89 δ̄ on d = 5, counts <= 3) — small domains and counts, so
      evidence, not proof.

    Parameters
    ----------
    k : most items reported (>= 1).
    kbar : size k̄ >= k of the limited domain (the top-k̄ counts).
    epsilon : per-count ε > 0 (Laplace scale 1/ε).
    delta : δ in (0, 1) in the threshold's ln(Δ/δ)/ε.
    max_items : Δ >= 1, the most items one user touches.
    claim_basis : "proved" (default) or "restated" (see above).
    """

    k: int
    kbar: int
    epsilon: float
    delta: float
    max_items: int
    claim_basis: str = "proved"
    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "k", require_positive_int("k", self.k))
        set_(self, "kbar", require_positive_int("kbar", self.kbar, minimum=self.k))
        set_(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        set_(self, "delta", require_probability("delta", self.delta))
        set_(self, "max_items", require_positive_int("max_items", self.max_items))
        require_choice("claim_basis", self.claim_basis, CLAIM_BASES)

    @property
    def scale(self) -> float:
        """Laplace scale 1/ε of every noisy count and of the threshold."""
        return 1.0 / self.epsilon

    @property
    def width(self) -> int:
        # Either k items, or j < k items followed by ⊥.
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        """``((Δ+1)ε, (1 + e^{(Δ+1)ε}) δ̄)`` (proved), or ``((Δ+1)ε, δ̄)`` (restated)."""
        epsilon, _ = accounting.basic_composition(self.epsilon, 0.0, self.max_items + 1)
        bad = laplace_limit_domain_delta(self.delta, self.max_items)
        if self.claim_basis == "restated":
            return PrivacyClaim(epsilon, bad, AddRemoveUser(self.max_items))
        return PrivacyClaim(
            epsilon,
            accounting.good_and_bad_outcomes_delta(epsilon, bad),
            AddRemoveUser(self.max_items),
        )

    def threshold(self, counts: ArrayLike) -> float:
        """The noiseless threshold h_⊥ for ``counts`` (histogram or TopCounts)."""
        top = as_top_counts(counts, self.kbar + 1)
        return laplace_limit_domain_threshold(
            top, self.kbar, self.epsilon, self.delta, self.max_items
        )

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The top ``min(k̄, d)`` items: the only ones that get a noisy score.

        Seed 002 (002_a192ff3c12785105.txt) §6.1 Alg. 4, as restated by seed 001 App. E.1: only the
        top-k̄ counts and ⊥ are noised, and Laplace noise puts each of them first with
        positive probability.
        """
        top = as_top_counts(counts, self.kbar + 1)
        return frozenset(int(item) for item in top.items[: min(self.kbar, len(top))])

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        size, rng = check_size(size), check_rng(rng)
        top = as_top_counts(counts, self.kbar + 1)
        m = min(self.kbar, len(top))
        h_bot = laplace_limit_domain_threshold(
            top, self.kbar, self.epsilon, self.delta, self.max_items
        )
        scores = np.append(top.counts[:m].astype(np.float64), h_bot)
        labels = np.append(top.items[:m], BOTTOM)
        noisy = scores + rng.laplace(0.0, self.scale, size=(size, m + 1))
        positions = noisy_top_k(noisy, self.k, self.k)
        filled = positions != PAD
        out = np.full(positions.shape, PAD, dtype=np.int64)
        out[filled] = labels[positions[filled]]
        # Everything after ⊥ is not reported (Alg. 4: the list stops at v_⊥).
        after_bottom = np.cumsum(out == BOTTOM, axis=1) - (out == BOTTOM) > 0
        out[after_bottom] = PAD
        return out
