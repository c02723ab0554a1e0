"""Release the selected items together with fresh discrete-Laplace-noised counts.

A top-k selection is often shipped with a noisy count next to each item. Seed 002
(002_a192ff3c12785105.txt) says how: §6.1 (its line 205, "we could allow to release
the full noisy histogram, with counts, over the limited domain … since the privacy
analysis follows from the Laplace mechanism"), and §8's footnote 8 (line 291, after
Bhaskar et al.: "fresh Laplace noise to each index that was privately output").

The release is the selection, then the discrete Laplace mechanism on the released items'
counts (integer noise, [`mechanisms.discrete_laplace`][mechanisms.discrete_laplace]: the Laplace
mechanism of Dwork & Roth 2014, Thm 3.6, on the integers — Ghosh, Roughgarden, Sundararajan 2009; a
double-precision Laplace sample is not DP on doubles, Mironov 2012), so its guarantee is
basic composition (Dwork & Roth 2014, Thm 3.16;
[`mechanisms.accounting.basic_composition`][mechanisms.accounting.basic_composition]) of the
selector's claim and ``(ε_counts, 0)``. The L1 sensitivity of the released count vector is what
one user can move it by: under add/remove a user adds at most 1 to each count and
touches at most Δ items, so ``min(width, Δ)`` (``width`` when unrestricted); under
``BoundedChange(m)`` each count moves by up to ``m``, so ``m · width``; under
``Substitute(Δ)`` a record leaves up to Δ items and joins as many others, each count
moving by at most 1, so ``min(width, 2Δ)`` (``width`` when unrestricted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .accounting import basic_composition
from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, BoundedChange, NeighbourRelation, PrivacyClaim, Substitute
from .discrete_laplace import discrete_laplace, discrete_laplace_ratio
from .histogram import validate_counts
from .outcomes import MixedBatch, outcome_from_row
from .validation import require_nonnegative_int, require_positive_float

__all__ = ["NoisyCount", "NoisyCountsRelease", "released_count_sensitivity"]


def released_count_sensitivity(width: int, relation: NeighbourRelation) -> float:
    """L1 sensitivity of ``width`` released counts under ``relation`` (module docstring)."""
    if isinstance(relation, BoundedChange):
        return float(relation.max_change * width)
    if isinstance(relation, AddRemoveUser):
        return float(width if relation.max_items is None else min(width, relation.max_items))
    if isinstance(relation, Substitute):
        return float(width if relation.max_items is None else min(width, 2 * relation.max_items))
    raise ValueError(
        f"relation must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
    )


@dataclass(frozen=True)
class NoisyCountsRelease(TopKMechanism):
    """A selection followed by a discrete-Laplace-noised count for each released item.

    Seed 002 §6.1 (line 205) and footnote 8 (line 291); privacy by basic composition
    of the selector's claim with the discrete Laplace mechanism,
    ``P(noise = z) ∝ r^{|z|}``, ``r = e^{−unit_epsilon}`` rounded up to a multiple of
    ``2^{−53}``, ``unit_epsilon = epsilon_counts / sensitivity`` (module docstring).
    Outcomes are a [`MixedBatch`][mechanisms.outcomes.MixedBatch]: the selector's items, and in
    value slot ``j`` the noisy count (an integer, as a double) of the item at position
    ``j`` (NaN at ⊥ and PAD).

    Parameters
    ----------
    selector : any item-selection mechanism of this package (integer outcomes).
    epsilon_counts : ε of the count release, > 0.
    """

    selector: TopKMechanism
    epsilon_counts: float

    def __post_init__(self):
        if not isinstance(self.selector, TopKMechanism):
            raise ValueError(f"selector must be a mechanism of this package, got {self.selector!r}")
        if getattr(self.selector, "value_width", 0):
            raise ValueError("selector must release item ids only (value_width 0)")
        object.__setattr__(
            self, "epsilon_counts", require_positive_float("epsilon_counts", self.epsilon_counts)
        )

    ordered = True

    @property
    def width(self) -> int:
        return int(self.selector.width)

    @property
    def value_width(self) -> int:
        return int(self.selector.width)

    @property
    def sensitivity(self) -> float:
        return released_count_sensitivity(self.width, self.selector.claim.neighbours)

    @property
    def unit_epsilon(self) -> float:
        """ε of one unit of change in one released count: ``epsilon_counts / sensitivity``."""
        return self.epsilon_counts / self.sensitivity

    @property
    def noise_ratio(self) -> int:
        """The noise parameter ``r = noise_ratio / 2^53`` ([`discrete_laplace_ratio`][mechanisms.discrete_laplace.discrete_laplace_ratio])."""
        return discrete_laplace_ratio(self.unit_epsilon)

    @property
    def claim(self) -> PrivacyClaim:
        inner = self.selector.claim
        epsilon, _ = basic_composition(inner.epsilon + self.epsilon_counts, 0.0, 1)
        return PrivacyClaim(epsilon, inner.delta, inner.neighbours)

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> MixedBatch:
        size, rng = check_size(size), check_rng(rng)
        histogram = validate_counts(counts)
        items = np.asarray(self.selector.sample(histogram, size, rng), dtype=np.int64)
        # Items past the end of the histogram count 0 (DESIGN.md, "Histogram").
        padded = np.concatenate([histogram.astype(np.float64), [0.0]])
        real = items >= 0
        lookup = np.where(real & (items < histogram.size), items, histogram.size)
        noise = discrete_laplace(self.noise_ratio, items.shape, rng)
        values = np.where(real, padded[lookup] + noise, np.nan)
        return MixedBatch(items, values)

    def run(self, counts: ArrayLike, rng: np.random.Generator) -> tuple:
        """One release: ``(item ids, noisy counts)``."""
        batch = self.sample(counts, 1, rng)
        items = outcome_from_row(batch.items[0])
        return items, tuple(float(v) for v in batch.values[0, : len(items)])


@dataclass(frozen=True)
class NoisyCount(TopKMechanism):
    """One item's count with discrete Laplace noise: the Laplace mechanism on the integers.

    Dwork & Roth 2014, Thm 3.6, with integer noise
    ([`mechanisms.discrete_laplace`][mechanisms.discrete_laplace]; Ghosh, Roughgarden, Sundararajan
    2009): ``P(noise = z) ∝ r^{|z|}``, ``r = e^{−ε}`` rounded up to a multiple of ``2^{−53}``. One
    user moves one count by at most 1 (add/remove), so the release is (ε, 0)-DP — also on doubles,
    since every output is an integer that every count reaches (Mironov 2012). Outcomes: no items,
    one value.

    Parameters
    ----------
    epsilon : ε > 0.
    item : the item whose count is released (items past the histogram count 0).
    """

    epsilon: float
    item: int = 0

    ordered: ClassVar[bool] = True
    value_width: ClassVar[int] = 1

    def __post_init__(self):
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "item", require_nonnegative_int("item", self.item))

    @property
    def width(self) -> int:
        return 0

    @property
    def noise_ratio(self) -> int:
        """The noise parameter ``r = noise_ratio / 2^53`` ([`discrete_laplace_ratio`][mechanisms.discrete_laplace.discrete_laplace_ratio])."""
        return discrete_laplace_ratio(self.epsilon)

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, 0.0, AddRemoveUser())

    def count_of(self, counts: ArrayLike) -> int:
        """The released item's count in ``counts`` (0 past the end)."""
        histogram = validate_counts(counts)
        return int(histogram[self.item]) if self.item < histogram.size else 0

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> MixedBatch:
        size, rng = check_size(size), check_rng(rng)
        count = self.count_of(counts)
        values = count + discrete_laplace(self.noise_ratio, (size, 1), rng)
        return MixedBatch(np.zeros((size, 0), dtype=np.int64), values.astype(np.float64))
