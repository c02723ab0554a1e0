"""The limited-domain family of Durfee & Rogers: top-k from the true top-k̄ with a noisy ⊥.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 1 ``LimitDom_{k,k̄}``: add
Gumbel(1/ε) to the top-k̄ counts and to the threshold
``h_⊥ = h_(k̄+1) + 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε``, sort, and report the
items ahead of ⊥ (at most k; ⊥ is reported when it comes first). By Lemma
4.2 this is a Plackett–Luce prefix over the ``k̄ + 1`` candidates, sampled by
[`mechanisms.plackett_luce`][mechanisms.plackett_luce]. Thm 1 eq. 2 gives ``(ε', δ + δ')``.

Seed 002 (002_a192ff3c12785105.txt, long version) adds the strictly limited
domain (§6.2) and the data-dependent choice of k̄ (§6.3).

Every mechanism here touches only the top ``k̄ + 1`` counts, obtained in O(d)
by [`mechanisms.as_top_counts`][mechanisms.as_top_counts], which also accepts a precomputed
[`TopCounts`][mechanisms.TopCounts] (what a database ``ORDER BY count DESC LIMIT
k̄+1`` returns).

Small domains (d <= k̄). Alg. 1 needs ``h_(k̄+1)`` and ``ln(min{Δ, k̄, d − k̄})``,
neither of which exists when the histogram has at most k̄ items. We take a
missing count to be 0 (the unknown-domain reading of seed 002 §6.2: items
outside the data have count 0) and floor the size term at 1, i.e. use
``min{Δ, k̄, max(d − k̄, 1)}``, which continues the formula from d = k̄ + 1.
Privacy is unaffected: when d <= k̄ every item is a candidate for both
neighbours, so there are no bad events (the set difference of Lemma 5.3 is
empty) and the mechanism is a peeling EM with a ⊥ score that moves with the
counts or not at all — any such threshold is covered by Thm 1.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from . import accounting
from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, PrivacyClaim
from .exponential import require_finite_log_weights, sample_categorical
from .histogram import TopCounts, as_top_counts
from .outcomes import BOTTOM, PAD
from .plackett_luce import sample_plackett_luce
from .validation import require_positive_float, require_positive_int, require_probability

__all__ = [
    "LimitDomain",
    "LimitDomainOptimizedKbar",
    "StrictLimitDomain",
    "limit_domain_threshold",
    "strict_limit_domain_threshold",
]


def _count_at(top: TopCounts, rank: int) -> int:
    """``h_(rank+1)``: the count at 0-based ``rank``, 0 if the domain has no such item."""
    return int(top.counts[rank]) if rank < len(top) else 0


def limit_domain_threshold(
    top: TopCounts, kbar: int, epsilon: float, delta: float, max_items: int | None
) -> float:
    """``h_⊥ = h_(k̄+1) + 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε`` (seed 003 Alg. 1, line 2).

    Δ = ``max_items`` (None: unrestricted, Δ = ∞). For d <= k̄ the missing count
    is 0 and the size term is floored at 1 (see the module docstring).
    """
    d = top.domain_size
    size_term = min(kbar, max(d - kbar, 1))
    if max_items is not None:
        size_term = min(size_term, max_items)
    return _count_at(top, kbar) + 1.0 + math.log(size_term / delta) / epsilon


def strict_limit_domain_threshold(top: TopCounts, kbar: int, epsilon: float, delta: float) -> float:
    """``h_(k̄+1) + 1 + ln(k̄/δ)/ε``: the ⊥ score of the strictly limited domain.

    Seed 002 (002_a192ff3c12785105.txt) §6.2, proof of Lemma 6.6: the set
    difference of two strict domains is only bounded by k̄, so there is no
    improvement from Δ.
    """
    return _count_at(top, kbar) + 1.0 + math.log(kbar / delta) / epsilon


def _sample_prefix(
    items: ArrayLike,
    counts: ArrayLike,
    h_bot: float,
    k: int,
    epsilon: float,
    size: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The Plackett–Luce k-prefix over ``items`` and ⊥ (seed 003 Alg. 1, lines 3-6)."""
    scores = np.append(np.asarray(counts, dtype=np.float64), h_bot)
    # ε (h − max h): the common shift cancels in the law and keeps exp() finite.
    with np.errstate(over="ignore"):
        log_weights = require_finite_log_weights(epsilon * (scores - scores.max()), epsilon)
    labels = np.append(np.asarray(items, dtype=np.int64), BOTTOM)
    return sample_plackett_luce(log_weights, k, size, rng, stop=labels.size - 1, labels=labels)


def _validate_ld_fields(mech: _LimitDomainFamily, kbar_field: str) -> None:
    set_ = object.__setattr__
    set_(mech, "k", require_positive_int("k", mech.k))
    set_(
        mech,
        kbar_field,
        require_positive_int(kbar_field, getattr(mech, kbar_field), minimum=mech.k),
    )
    set_(mech, "epsilon", require_positive_float("epsilon", mech.epsilon))
    set_(mech, "delta", require_probability("delta", mech.delta))
    if mech.max_items is not None:
        set_(mech, "max_items", require_positive_int("max_items", mech.max_items))
    set_(mech, "delta_prime", require_probability("delta_prime", mech.delta_prime, allow_zero=True))
    if mech.delta + mech.delta_prime > 1:
        raise ValueError(f"delta + delta_prime must be <= 1, got {mech.delta} + {mech.delta_prime}")


class _LimitDomainFamily(TopKMechanism):
    """Validation, width and claim shared by the three limited-domain mechanisms.

    Subclasses are frozen dataclasses with the fields ``k``, the k̄ field named
    by ``_kbar_field``, ``epsilon``, ``delta``, ``max_items``, ``delta_prime``.
    The claim is seed 003 Thm 1 eq. 2 over ``k + _extra_selections``
    range-bounded selections: ``(limit_domain_epsilon(ε, ·, δ'), δ + δ')``.
    """

    _kbar_field: ClassVar[str] = "kbar"
    _extra_selections: ClassVar[int] = 0
    # The subclasses' dataclass fields (this base is not a dataclass: no fields of its own).
    k: int
    epsilon: float
    delta: float
    max_items: int | None
    delta_prime: float

    def __post_init__(self) -> None:
        _validate_ld_fields(self, self._kbar_field)

    @property
    def width(self) -> int:
        # j < k items then ⊥ has at most k elements; k items have no ⊥.
        return self.k

    def _neighbours(self) -> AddRemoveUser:
        return AddRemoveUser(self.max_items)

    @property
    def claim(self) -> PrivacyClaim:
        eps = accounting.limit_domain_epsilon(
            self.epsilon, self.k + self._extra_selections, self.delta_prime
        )
        return PrivacyClaim(eps, self.delta + self.delta_prime, self._neighbours())


@dataclass(frozen=True)
class _FixedKbarLimitDomain(_LimitDomainFamily):
    """A limited domain with a given k̄: fields, ``threshold`` and ``sample``.

    Subclasses say which threshold (``_threshold``) and how many of the top k̄
    items (``_domain_size``, a prefix since counts are in rank order) compete.
    """

    k: int
    kbar: int
    epsilon: float
    delta: float
    max_items: int | None = None
    delta_prime: float = 0.0

    @abc.abstractmethod
    def _threshold(self, top: TopCounts) -> float:
        """``h_⊥`` from the top ``k̄ + 1`` counts."""

    @abc.abstractmethod
    def _domain_size(self, top: TopCounts) -> int:
        """How many of the top items are candidates besides ⊥."""

    def threshold(self, counts: ArrayLike) -> float:
        """``h_⊥`` for ``counts`` (a full histogram or a TopCounts)."""
        return self._threshold(as_top_counts(counts, self.kbar + 1))

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The candidates besides ⊥: the items that can be output on ``counts``.

        Seed 003 (003_9293f5da18078e1b.txt) Alg. 1 line 1 (seed 002, 002_a192ff3c12785105.txt,
        §6.2 domain (9) for the strict domain): only the items of the limited domain get a
        noisy score, so no other item is ever output; each of them has a finite score, so
        with Gumbel noise it comes first with positive probability.
        """
        top = as_top_counts(counts, self.kbar + 1)
        return frozenset(int(item) for item in top.items[: self._domain_size(top)])

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        size = check_size(size)
        rng = check_rng(rng)
        top = as_top_counts(counts, self.kbar + 1)
        n = self._domain_size(top)
        return _sample_prefix(
            top.items[:n], top.counts[:n], self._threshold(top), self.k, self.epsilon, size, rng
        )


@dataclass(frozen=True)
class LimitDomain(_FixedKbarLimitDomain):
    """Top-k from the true top-k̄ with a noisy threshold ⊥ (Durfee–Rogers LimitDom).

    Seed 003 (003_9293f5da18078e1b.txt) Alg. 1 with the Δ-restricted threshold
    ``h_⊥ = h_(k̄+1) + 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε``; Thm 1 eq. 2:
    ``(limit_domain_epsilon(ε, k, δ'), δ + δ')``-DP under add/remove of one user
    touching at most Δ items. Outcomes: up to k items in selection order,
    followed by BOTTOM when ⊥ comes before the k-th item.

    Parameters
    ----------
    k : number of items to report (>= 1).
    kbar : k̄ >= k, size of the limited domain (the true top-k̄).
    epsilon : per-selection ε > 0 (Gumbel scale 1/ε).
    delta : δ in (0, 1) of the threshold.
    max_items : Δ, the most items one user touches (None: unrestricted).
    delta_prime : δ' >= 0 of the range-bounded composition (0: basic kε).
    """

    ordered: ClassVar[bool] = True

    def _threshold(self, top: TopCounts) -> float:
        return limit_domain_threshold(top, self.kbar, self.epsilon, self.delta, self.max_items)

    def _domain_size(self, top: TopCounts) -> int:
        return self.kbar


@dataclass(frozen=True)
class StrictLimitDomain(_FixedKbarLimitDomain):
    """LimitDomain over only the items whose count is strictly above h_(k̄+1).

    Seed 002 (002_a192ff3c12785105.txt) §6.2, domain (9) and Lemma 6.6: at most
    k̄ candidates, all with count > h_(k̄+1), so a database that returns only
    non-zero counts suffices; the threshold is ``h_(k̄+1) + 1 + ln(k̄/δ)/ε``
    (no gain from Δ). Same guarantee as seed 003 Thm 1 eq. 2 in the
    unrestricted setting, so the claim is stated for unrestricted users
    whatever ``max_items`` is; ``max_items`` is accepted for a signature
    uniform with [`LimitDomain`][mechanisms.limit_domain.LimitDomain] and does not change the
    mechanism.

    Parameters
    ----------
    k, kbar, epsilon, delta, max_items, delta_prime : as in
        [`LimitDomain`][mechanisms.limit_domain.LimitDomain].
    """

    ordered: ClassVar[bool] = True

    def _neighbours(self) -> AddRemoveUser:
        # Lemma 6.6 gains nothing from Δ: the claim is for unrestricted users.
        return AddRemoveUser(None)

    def _threshold(self, top: TopCounts) -> float:
        return strict_limit_domain_threshold(top, self.kbar, self.epsilon, self.delta)

    def _domain_size(self, top: TopCounts) -> int:
        # Counts are in rank order, so the strict domain is a prefix.
        return int(np.count_nonzero(top.counts[: self.kbar] > _count_at(top, self.kbar)))


@dataclass(frozen=True)
class LimitDomainOptimizedKbar(_LimitDomainFamily):
    """LimitDomain with k̄ chosen privately to minimise the threshold h_⊥.

    Seed 002 (002_a192ff3c12785105.txt) §6.3 (seed 003 §3, end of "Main
    Algorithm"): the exponential mechanism with ε over k̄ ∈ {k, ..., kbar_max}
    with score ``−(h_(k̄+1) + 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε)`` (sensitivity 1 and
    monotonic by Lemma 5.1, the log term is data-independent), then
    [`LimitDomain`][mechanisms.limit_domain.LimitDomain] with that k̄. It costs one more
    range-bounded selection: ``(limit_domain_epsilon(ε, k + 1, δ'), δ + δ')``. The chosen k̄
    could be released for free (§6.3) but is not part of the outcome.

    Parameters
    ----------
    k : number of items to report (>= 1).
    kbar_max : the largest k̄ considered (>= k); the top kbar_max + 1 counts are read.
    epsilon, delta, max_items, delta_prime : as in
        [`LimitDomain`][mechanisms.limit_domain.LimitDomain].
    """

    k: int
    kbar_max: int
    epsilon: float
    delta: float
    max_items: int | None = None
    delta_prime: float = 0.0

    ordered: ClassVar[bool] = True
    _kbar_field: ClassVar[str] = "kbar_max"
    _extra_selections: ClassVar[int] = 1  # the private choice of k̄

    def kbar_candidates(self) -> np.ndarray:
        """The k̄ values the selection ranges over: k, k+1, ..., kbar_max."""
        return np.arange(self.k, self.kbar_max + 1)

    def kbar_thresholds(self, counts: ArrayLike | TopCounts) -> np.ndarray:
        """``h_⊥(k̄)`` for every candidate k̄ (the selection picks k̄ ∝ exp(−ε h_⊥(k̄)))."""
        top = as_top_counts(counts, self.kbar_max + 1)
        return np.array(
            [
                limit_domain_threshold(top, int(kb), self.epsilon, self.delta, self.max_items)
                for kb in self.kbar_candidates()
            ]
        )

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The top ``kbar_max`` items: the union of the limited domains over every k̄.

        Seed 002 (002_a192ff3c12785105.txt) §6.3: each k̄ in {k, ..., kbar_max} is chosen with
        positive probability (exponential mechanism over finite scores), then seed 003 Alg. 1
        line 1 outputs only items of the top k̄; k̄ = kbar_max makes every one of the top
        ``kbar_max`` items possible.
        """
        top = as_top_counts(counts, self.kbar_max + 1)
        return frozenset(int(item) for item in top.items[: self.kbar_max])

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        size = check_size(size)
        rng = check_rng(rng)
        top = as_top_counts(counts, self.kbar_max + 1)
        candidates = self.kbar_candidates()
        thresholds = self.kbar_thresholds(top)
        with np.errstate(over="ignore"):
            log_weights = require_finite_log_weights(
                -self.epsilon * (thresholds - thresholds.min()), self.epsilon
            )
        chosen = candidates[sample_categorical(log_weights, size, rng)]
        out = np.full((size, self.k), PAD, dtype=np.int64)
        # One batch per distinct k̄ (at most kbar_max − k + 1), in increasing k̄,
        # so the draws are a deterministic function of the generator state.
        for index, kbar in enumerate(candidates):
            rows = np.flatnonzero(chosen == kbar)
            if rows.size:
                out[rows] = _sample_prefix(
                    top.items[:kbar],
                    top.counts[:kbar],
                    thresholds[index],
                    self.k,
                    self.epsilon,
                    rows.size,
                    rng,
                )
        return out
