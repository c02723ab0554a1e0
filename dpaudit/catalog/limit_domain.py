"""Broken limited-domain mechanisms (Durfee–Rogers LimitDom without its threshold term or its ⊥).

Seed 003 (003_9293f5da18078e1b.txt) Alg. 1 line 2, Thm 1.
"""

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mechanisms import (
    BOTTOM,
    PAD,
    AddRemoveUser,
    PrivacyClaim,
    TopKMechanism,
    accounting,
    check_rng,
    check_size,
    top_counts,
    validate_counts,
)
from mechanisms.validation import require_positive_float, require_positive_int, require_probability

from ..exact.law import output_law
from .base import _gumbel_order, _plackett_luce_law
from .entry import CatalogEntry


@dataclass(frozen=True)
class _LimitDomainBase(TopKMechanism):
    """LimitDom (seed 003, 003_9293f5da18078e1b.txt, Alg. 1) with a switchable bug.

    Parameters
    ----------
    k, kbar : outputs and domain cut-off (k <= kbar).
    epsilon : per-selection ε (Gumbel scale 1/ε).
    delta : the δ of the threshold term ln(min{Δ, k̄, d − k̄}/δ)/ε.
    max_items : Δ of the add/remove relation (None: unrestricted).
    """

    k: int = 3
    kbar: int = 10
    epsilon: float = 1.0
    delta: float = 1e-6
    max_items: int | None = None

    ordered: ClassVar[bool] = True
    _threshold_term: ClassVar[bool] = True
    _with_bottom: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "kbar", require_positive_int("kbar", self.kbar, minimum=self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "delta", require_probability("delta", self.delta))
        if self.max_items is not None:
            object.__setattr__(self, "max_items", require_positive_int("max_items", self.max_items))

    @property
    def width(self):
        return self.k + (1 if self._with_bottom else 0)

    @property
    def claim(self):
        # The correct algorithm's guarantee: Thm 1 (eq. 2) with δ' = 0.
        neighbours = AddRemoveUser(self.max_items)
        return PrivacyClaim(
            accounting.limit_domain_epsilon(self.epsilon, self.k), self.delta, neighbours
        )

    def _values(self, counts):
        """Counts of the top k̄ items, the ⊥ count last (if any), and the item ids."""
        full = validate_counts(counts)
        d = full.size
        top = top_counts(full, self.kbar + 1)
        kbar = min(self.kbar, d)
        values = top.counts[:kbar].astype(float)
        items = top.items[:kbar]
        if not self._with_bottom:
            return values, items, None
        cut = float(top.counts[self.kbar]) if d > self.kbar else 0.0
        bottom = cut + 1.0
        if self._threshold_term:
            delta_items = d if self.max_items is None else self.max_items
            m = max(1, min(delta_items, self.kbar, max(d - self.kbar, 1)))
            bottom += math.log(m / self.delta) / self.epsilon
        return np.append(values, bottom), items, kbar

    def sample(self, counts, size, rng):
        size, rng = check_size(size), check_rng(rng)
        values, items, stop = self._values(counts)
        out = np.full((size, self.width), PAD, dtype=np.int64)
        take = min(self.k + (1 if stop is not None else 0), values.size)
        order = _gumbel_order(values, self.epsilon, size, take, rng)
        labels = np.append(items, BOTTOM) if stop is not None else items
        chosen = labels[order]
        if stop is None:
            out[:, : chosen.shape[1]] = chosen[:, : self.k]
            return out
        # Truncate each row after ⊥; rows that reach k items drop the (k+1)-th pick.
        is_bottom = order == stop
        after = np.cumsum(is_bottom, axis=1) - is_bottom > 0
        chosen = np.where(after, PAD, chosen)
        full_rows = ~is_bottom[:, : min(self.k, take)].any(axis=1)
        if take > self.k:
            chosen[full_rows, self.k] = PAD
        out[:, : chosen.shape[1]] = chosen[:, : self.width]
        return out


@dataclass(frozen=True)
class LimitDomainNoThresholdTerm(_LimitDomainBase):
    """BUG: LimitDom with ⊥ at h(k̄+1) + 1, the ln(min{Δ,k̄,d−k̄}/δ)/ε term dropped.

    Seed 003 (003_9293f5da18078e1b.txt) Alg. 1 line 2 sets
    h⊥ = h(k̄+1) + 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε; without the log term an item
    entering the top k̄ is output with probability far above δ. Claims Thm 1.
    """

    _threshold_term: ClassVar[bool] = False


@dataclass(frozen=True)
class LimitDomainNoBottom(_LimitDomainBase):
    """BUG: LimitDom that never outputs ⊥: top k of the noisy top-k̄ counts.

    Seed 003 (003_9293f5da18078e1b.txt) Alg. 1 without the threshold: the
    domain of the top k̄ itself leaks (an item just outside it is never output).
    Claims Thm 1.
    """

    _with_bottom: ClassVar[bool] = False


@output_law.register(_LimitDomainBase)
def _law_limit_domain(mech, counts):
    # A non-integer ⊥ count (the correct threshold) is taken as the double the sampler uses.
    values, items, stop = mech._values(counts)
    labels = [int(i) for i in items] + ([BOTTOM] if stop is not None else [])
    take = min(mech.k, len(items)) if stop is None else min(mech.k, values.size)
    return _plackett_luce_law(list(values), mech.epsilon, take, labels, stop)


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "limit-domain-no-log-term",
        "LimitDomain without the ln(min{Δ,k̄,d−k̄}/δ)/ε threshold term",
        lambda: LimitDomainNoThresholdTerm(k=2, kbar=3, epsilon=1.0, delta=1e-3),
        ((3, 3, 3, 3, 0), (3, 3, 3, 4, 0)),
        "003 Alg. 1 line 2",
    ),
    CatalogEntry(
        "limit-domain-no-bottom",
        "LimitDomain that never outputs ⊥",
        lambda: LimitDomainNoBottom(k=2, kbar=3, epsilon=1.0, delta=1e-3),
        ((3, 3, 3, 3, 0), (3, 3, 3, 4, 0)),
        "003 Alg. 1",
    ),
)
