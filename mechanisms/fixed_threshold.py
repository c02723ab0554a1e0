"""Durfee & Rogers' fixed-threshold mechanism: independent noisy tests of the strict top-k̄.

Seed 002 (002_a192ff3c12785105.txt), App. F, Alg. 8 and Thm 5.

RECONSTRUCTION. The 002 extraction lost every formula of App. F (Alg. 8's
threshold, Def. F.1, Lemmas F.1-F.4, Thm 5's parameters); only the prose
survives. The mechanism and its claim below are reconstructed from that prose:

* Def. F.1 / Cor. F.1: each index ``i`` runs a *truncated randomized
  response* RR_i: it answers "above" iff ``h_i + Lap(1/ε) > T`` with a FIXED
  (noise-free) data-dependent threshold ``T``, and only indices of the strictly
  limited domain can answer "above" (the prose: "at most k̄ will have non-zero
  probabilities"; "we will only need to draw randomness for these indices").
* The strictly limited domain is seed 002 §6.2, domain (9): the items of the
  top-k̄ (rank order, ties to the lower id) whose count is STRICTLY above
  ``h_(k̄+1)``.
* ``T = h_(k̄+1) + τ`` with ``τ = 1 + ln(k̄/(2δ))/ε``. Lemma F.2 item 2: an item in
  one strict domain but not in its neighbour's has gap exactly 1 to
  ``h_(k̄+1)``, so it answers "above" with probability at most
  ``P[Lap(1/ε) > τ − 1] = ½ e^{−ε(τ−1)} = δ/k̄``; items in both domains move
  their gap ``h_i − h_(k̄+1)`` by at most 1 (Lemma F.1), so RR_i is
  ``(ε, δ/k̄)``-DP (Cor. F.1). The prose's "additive savings" over the noisy
  threshold of §6.2 is this ``ln 2 / ε`` (and no noise on T).
* Lemma F.4 uses Lemma 6.7: for add/remove neighbours the two strict domains
  are nested, so at most k̄ coordinates differ; basic composition over them
  gives Thm 5: ``(k̄ε, δ)``-DP under add/remove of one user, unrestricted.
  The paper notes the factor k̄ cannot be improved to Δ (one user's count can
  move the threshold and so every test), so the claim is for unrestricted
  users. Thm 5's "also (ε', ·)-DP" alternative is advanced composition of the
  same k̄ mechanisms:
  [`FixedThreshold.advanced_claim`][mechanisms.fixed_threshold.FixedThreshold.advanced_claim].

Output: the SET of items that pass (ascending ids, "cannot return an ordering
on the indices"), followed by ``BOTTOM`` when fewer than k̄ items pass (the
mechanism "would prefer ⊥ to an index not in the top-k̄"); an empty answer is
``(BOTTOM,)``. Batches have width k̄.

Only the top ``k̄ + 1`` counts are read ([`mechanisms.as_top_counts`][mechanisms.as_top_counts],
which also accepts a precomputed [`TopCounts`][mechanisms.TopCounts]). With ``d <= k̄`` the
missing ``h_(k̄+1)`` is taken to be 0, the convention of
[`mechanisms.limit_domain`][mechanisms.limit_domain]; this is the mechanism run on the histogram
padded with zero-count items (which never enter a strict domain), so the claim
is unaffected.
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
from .outcomes import BOTTOM, PAD
from .validation import require_positive_float, require_positive_int, require_probability

__all__ = ["FixedThreshold", "fixed_threshold_tau"]


def fixed_threshold_tau(epsilon: float, threshold_delta: float, margin: float = 1.0) -> float:
    """``τ = margin + ln(1/(2 δ_i))/ε``: the fixed threshold's offset above ``h_(k̄+1)``.

    Reconstructed from seed 002 (002_a192ff3c12785105.txt) App. F, proof of
    Lemma F.2 item 2: with ``margin = 1`` (the gap of an item in one strict
    domain only) and ``δ_i = δ/k̄``, ``P[Lap(1/ε) > τ − 1] = ½ e^{−ε(τ−1)} = δ/k̄``,
    i.e. ``τ = 1 + ln(k̄/(2δ))/ε``.
    """
    return margin + math.log(1.0 / (2.0 * threshold_delta)) / epsilon


@dataclass(frozen=True)
class FixedThreshold(TopKMechanism):
    """Each item of the strict top-k̄ is reported iff its Laplace-noised count beats a fixed threshold.

    Seed 002 (002_a192ff3c12785105.txt) App. F, Alg. 8 and Thm 5, RECONSTRUCTED
    from the prose of App. F (Def. F.1, Lemma F.2, Cor. F.1, Lemma F.4 citing
    Lemma 6.7's nesting of strictly limited domains, Thm 5) because the
    extraction lost its formulas; see the module docstring.

    For ``D(h)`` = the top-k̄ items with count ``> h_(k̄+1)`` (seed 002 eq. (9))
    and ``T = h_(k̄+1) + τ``, ``τ = 1 + ln(k̄/(2δ))/ε``, every ``i ∈ D(h)``
    independently is reported iff ``h_i + Lap(1/ε) > T``. Outcome: the reported
    items ascending, then ``BOTTOM`` if fewer than k̄ were reported.

    Claim (reconstructed Thm 5): each test is ``(ε, δ/k̄)``-DP, at most k̄ tests
    differ between neighbours, so basic composition gives ``(k̄ε, δ)``-DP under
    add/remove of one user (unrestricted; the factor k̄ cannot be improved to
    Δ). [`advanced_claim`][mechanisms.fixed_threshold.FixedThreshold.advanced_claim] gives the
    advanced-composition alternative.

    Parameters
    ----------
    kbar : k̄ >= 1, the size of the limited domain (the most items reported).
    epsilon : ε > 0 of each test (Laplace scale 1/ε).
    delta : δ in (0, 1), the total δ of the k̄ tests.
    """

    kbar: int
    epsilon: float
    delta: float

    ordered: ClassVar[bool] = False
    #: Lemma F.2 item 2: the largest gap ``h_i − h_(k̄+1)`` of an item that is in one
    #: strict domain but not in its neighbour's. A documented hook: the catalog's
    #: broken variant sets it to 0.
    margin: ClassVar[float] = 1.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "kbar", require_positive_int("kbar", self.kbar))
        set_(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        set_(self, "delta", require_probability("delta", self.delta))
        if not (math.isfinite(1.0 / self.epsilon) and math.isfinite(self.tau)):
            raise ValueError(
                f"epsilon must be a finite number > 0 whose Laplace scale 1/epsilon and "
                f"threshold offset tau are finite, got {self.epsilon!r}"
            )

    @property
    def scale(self) -> float:
        """Laplace scale 1/ε of every noisy count."""
        return 1.0 / self.epsilon

    def threshold_delta(self) -> float:
        """δ/k̄: the δ_i each test's threshold is solved against (Cor. F.1, Lemma F.2 item 2).

        A documented hook: a variant that forgets the union over the k̄ tests
        returns δ here. The claim does not read it (it is Thm 5's, from the fields).
        """
        return self.delta / self.kbar

    @property
    def tau(self) -> float:
        """``τ = 1 + ln(k̄/(2δ))/ε``, the threshold's offset above ``h_(k̄+1)``."""
        return fixed_threshold_tau(self.epsilon, self.threshold_delta(), self.margin)

    @property
    def width(self) -> int:
        # k̄ items, or j < k̄ items followed by ⊥.
        return self.kbar

    @property
    def claim(self) -> PrivacyClaim:
        # Thm 5 (reconstructed): k̄ tests, each (ε, δ/k̄)-DP, basic composition.
        epsilon, delta = accounting.basic_composition(
            self.epsilon, self.delta / self.kbar, self.kbar
        )
        return PrivacyClaim(epsilon, delta, AddRemoveUser(None))

    def advanced_claim(self, delta_prime: float) -> PrivacyClaim:
        """Thm 5's alternative: advanced composition of the k̄ ``(ε, δ/k̄)``-DP tests.

        ``(ε', δ + δ')`` with ε' from
        [`mechanisms.accounting.advanced_composition`][mechanisms.accounting.advanced_composition]
        (seed 003 Thm 3); with ``delta_prime = 0`` this is the basic claim.
        """
        epsilon, delta = accounting.advanced_composition(
            [self.epsilon] * self.kbar, delta_prime, [self.delta / self.kbar] * self.kbar
        )
        return PrivacyClaim(epsilon, delta, AddRemoveUser(None))

    def limited_domain(self, counts: ArrayLike) -> tuple[np.ndarray, np.ndarray, int]:
        """``(items, counts, h_(k̄+1))`` of the strict domain D(h), items in rank order.

        ``counts`` is a full histogram or a [`TopCounts`][mechanisms.TopCounts]; a
        missing ``h_(k̄+1)`` (d <= k̄) is 0.
        """
        top = as_top_counts(counts, self.kbar + 1)
        return self._limited_domain(top)

    def _limited_domain(self, top: TopCounts) -> tuple[np.ndarray, np.ndarray, int]:
        h_next = int(top.counts[self.kbar]) if self.kbar < len(top) else 0
        # Counts are in rank order, so the strict domain is a prefix of the top k̄.
        n = int(np.count_nonzero(top.counts[: self.kbar] > h_next))
        return top.items[:n], top.counts[:n], h_next

    def threshold(self, counts: ArrayLike) -> float:
        """The fixed threshold ``T = h_(k̄+1) + τ`` for ``counts`` (histogram or TopCounts)."""
        return self.limited_domain(counts)[2] + self.tau

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The strict domain D(h): the only items that get a noisy count.

        Seed 002 (002_a192ff3c12785105.txt) App. F, Alg. 8 as reconstructed in this module: only
        the top-k̄ items with count above ``h_(k̄+1)`` are noised, and each passes the fixed
        threshold with positive probability (Laplace noise).
        """
        return frozenset(int(item) for item in self.limited_domain(counts)[0])

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        size, rng = check_size(size), check_rng(rng)
        items, values, h_next = self.limited_domain(counts)
        order = np.argsort(items, kind="stable")  # columns by ascending id: a set outcome
        items, values = items[order], values[order].astype(np.float64)
        n = items.size
        noisy = values + rng.laplace(0.0, self.scale, size=(size, n))
        passed = noisy > h_next + self.tau
        out = np.full((size, self.kbar), PAD, dtype=np.int64)
        # Pack each row's passing ids to the left, keeping ascending order.
        rows, cols = np.nonzero(passed)
        slots = np.cumsum(passed, axis=1) - 1
        out[rows, slots[rows, cols]] = items[cols]
        reported = passed.sum(axis=1)
        short = np.flatnonzero(reported < self.kbar)
        out[short, reported[short]] = BOTTOM
        return out
