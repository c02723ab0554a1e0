"""Broken exponential mechanisms: claims that miss the 2 of non-monotone scores or the k of k outputs.

Seed 003 (003_9293f5da18078e1b.txt) Lemma 4.1, Cor. 4.1, Thm 1 eq. 2.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mechanisms import (
    PAD,
    BoundedChange,
    PrivacyClaim,
    accounting,
    check_rng,
    check_size,
    validate_counts,
)

from ..exact.law import output_law
from .base import (
    _BoundedChangeClaimsEpsilon,
    _gumbel_order,
    _KOutputsClaimsEpsilon,
    _plackett_luce_law,
)
from .entry import CatalogEntry


@dataclass(frozen=True)
class EMNonMonotoneClaimsEpsilon(_BoundedChangeClaimsEpsilon):
    """BUG: the exponential mechanism on counts that move independently, claiming ε (not 2ε).

    Seed 003 (003_9293f5da18078e1b.txt) Lemma 4.1: with a non-monotonic
    quality score the EM is only 2ε-DP; this entry claims ε under
    BoundedChange(1), where one count can rise while another falls.

    Parameters
    ----------
    epsilon : ε > 0 (Gumbel scale 1/ε).
    """

    @property
    def width(self):
        return 1

    def sample(self, counts, size, rng):
        counts = validate_counts(counts).astype(float)
        size, rng = check_size(size), check_rng(rng)
        return _gumbel_order(counts, self.epsilon, size, 1, rng).astype(np.int64)


@output_law.register(EMNonMonotoneClaimsEpsilon)
def _law_em(mech, counts):
    counts = validate_counts(counts)
    return _plackett_luce_law(list(counts), mech.epsilon, 1, list(range(counts.size)))


@dataclass(frozen=True)
class GumbelTopKClaimsEpsilon(_KOutputsClaimsEpsilon):
    """BUG: one-shot Gumbel top-k claiming ε for all k outputs (instead of kε).

    Seed 003 (003_9293f5da18078e1b.txt) Cor. 4.1 / Thm 1 eq. 2: k outputs cost
    ``limit_domain_epsilon(ε, k, δ')``; this entry claims the single-selection ε.

    Parameters
    ----------
    k : outputs (>= 2 for the bug to matter).
    epsilon : per-selection ε (Gumbel scale 1/ε).
    """

    k: int = 3
    ordered: ClassVar[bool] = True

    def sample(self, counts, size, rng):
        counts = validate_counts(counts).astype(float)
        size, rng = check_size(size), check_rng(rng)
        out = np.full((size, self.k), PAD, dtype=np.int64)
        top = _gumbel_order(counts, self.epsilon, size, self.k, rng)
        out[:, : top.shape[1]] = top
        return out


@output_law.register(GumbelTopKClaimsEpsilon)
def _law_gumbel(mech, counts):
    counts = validate_counts(counts)
    return _plackett_luce_law(
        list(counts), mech.epsilon, min(mech.k, counts.size), list(range(counts.size))
    )


@dataclass(frozen=True)
class PeelingNonMonotoneClaimsKEpsilon(GumbelTopKClaimsEpsilon):
    """BUG: peeling EM under BoundedChange(1) claiming kε (the monotonic cost) instead of 2kε.

    Seed 003 (003_9293f5da18078e1b.txt) Lemma 4.1 + Cor. 4.1: each
    non-monotonic selection costs 2ε; this entry composes ε per selection.

    Parameters
    ----------
    k : selections.
    epsilon : per-selection ε (Gumbel scale 1/ε).
    """

    k: int = 2

    @property
    def claim(self):
        return PrivacyClaim(
            accounting.limit_domain_epsilon(self.epsilon, self.k), 0.0, BoundedChange(1)
        )


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "em-non-monotone",
        "EM with counts moving independently claims ε, is 2ε",
        lambda: EMNonMonotoneClaimsEpsilon(epsilon=1.0),
        ((0, 3, 3, 3, 3), (1, 2, 2, 2, 2)),
        "003 Lemma 4.1",
    ),
    CatalogEntry(
        "gumbel-topk-claims-eps",
        "Gumbel top-k claims ε for k outputs (should be kε)",
        lambda: GumbelTopKClaimsEpsilon(k=3, epsilon=1.0),
        ((0, 0, 0, 2, 2), (0, 0, 0, 3, 3)),
        "003 Cor. 4.1, Thm 1 eq. 2",
    ),
    CatalogEntry(
        "peeling-non-monotone",
        "peeling EM under bounded change claims kε (should be 2kε)",
        lambda: PeelingNonMonotoneClaimsKEpsilon(k=2, epsilon=1.0),
        ((0, 0, 3, 3, 3), (1, 1, 2, 2, 2)),
        "003 Lemma 4.1, Cor. 4.1",
    ),
)
