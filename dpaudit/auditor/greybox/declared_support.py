"""A mechanism's declared output support, checked on its outcomes.

Issue 43, item 3: the structural δ ([`structural_delta`][dpaudit.auditor.greybox.structural_delta])
rests on ``P(S | D') = 0`` for items outside ``output_support(D')``
([`DeclaresOutputSupport`][mechanisms.base.DeclaresOutputSupport]); an outcome against the
declaration voids it, and is a finding in itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechanisms import BOTTOM, PAD

__all__ = ["DeclaredSupportError", "check_support", "outside_support"]


class DeclaredSupportError(ValueError):
    """A mechanism output an item its ``output_support`` says it cannot: the declaration is false.

    A finding in itself (the declared structural zero does not exist), and the δ lower bound built
    on it is void.

    Attributes
    ----------
    counts : the histogram that produced the outcome.
    outcome : the offending outcome (item ids, markers dropped).
    items : its items outside the declared support.
    declared : ``output_support(counts)``.
    how : which run found it ("plain", "same tilt", "probe of draw #i column j").
    """

    def __init__(
        self,
        counts: tuple[int, ...],
        outcome: tuple[int, ...],
        items: frozenset[int],
        declared: frozenset[int],
        how: str,
    ) -> None:
        self.counts = counts
        self.outcome = outcome
        self.items = items
        self.declared = declared
        self.how = how
        super().__init__(
            f"the mechanism output {outcome} on counts {list(counts)} ({how} run), but its "
            f"output_support declares only {sorted(declared)}: items {sorted(items)} have "
            "positive probability. The declared structural zero is false; fix output_support "
            "(or the mechanism), and do not trust a δ bound built on it"
        )


def outside_support(outcomes: np.ndarray, declared: frozenset[int]) -> tuple[int, ...] | None:
    """The first outcome holding an item outside ``declared``, markers dropped; else None."""
    batch = np.asarray(outcomes)
    items = (batch != BOTTOM) & (batch != PAD)
    allowed = np.isin(batch, np.array(sorted(declared), dtype=np.int64))
    bad = (items & ~allowed).any(axis=1)
    if not bad.any():
        return None
    row = batch[int(np.argmax(bad))]
    return tuple(int(i) for i in row if i not in (BOTTOM, PAD))


def check_support(
    outcomes: Any, counts: tuple[int, ...], declared: frozenset[int], how: str
) -> None:
    """Raise [`DeclaredSupportError`][dpaudit.auditor.greybox.declared_support.DeclaredSupportError]
    if an outcome of ``counts`` holds an item outside ``declared`` (``how``: which run)."""
    if not isinstance(outcomes, np.ndarray):
        raise ValueError("structural_delta needs item outcomes; this mechanism releases values")
    outcome = outside_support(outcomes, declared)
    if outcome is not None:
        raise DeclaredSupportError(counts, outcome, frozenset(outcome) - declared, declared, how)
