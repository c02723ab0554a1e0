"""Wrap a plain per-call Python function into the auditor's batched shape.

The auditor sees every mechanism through ``sample(counts, size, rng) ->
(size, width) int64``. A user's ``f(counts, rng) -> outcome tuple`` is wrapped
once, here, at the edge; the loop over calls is the only per-sample Python loop
in the auditor.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms import PAD, AddRemoveUser, BoundedChange, PrivacyClaim, TopKMechanism
from mechanisms.validation import (
    require_nonnegative_float,
    require_positive_int,
    require_probability,
)

__all__ = ["BlackBox", "as_auditable", "make_claim"]


def make_claim(claim, neighbours=None) -> PrivacyClaim:
    """A ``PrivacyClaim`` from ``(ε, δ)``, ``(ε, δ, relation)`` or a ``PrivacyClaim``."""
    if isinstance(claim, PrivacyClaim):
        return claim if neighbours is None else PrivacyClaim(claim.epsilon, claim.delta, neighbours)
    try:
        parts = tuple(claim)
    except TypeError:
        raise ValueError(f"claim must be (epsilon, delta) or (epsilon, delta, relation), got {claim!r}") from None
    if len(parts) not in (2, 3):
        raise ValueError(f"claim must be (epsilon, delta) or (epsilon, delta, relation), got {claim!r}")
    epsilon = require_nonnegative_float("claim epsilon", parts[0])
    delta = require_probability("claim delta", parts[1], allow_zero=True, allow_one=True)
    relation = neighbours if neighbours is not None else (parts[2] if len(parts) == 3 else AddRemoveUser())
    if not isinstance(relation, (AddRemoveUser, BoundedChange)):
        raise ValueError(f"neighbours must be AddRemoveUser or BoundedChange, got {relation!r}")
    return PrivacyClaim(epsilon, delta, relation)


@dataclass(frozen=True)
class BlackBox(TopKMechanism):
    """A per-call function ``f(counts, rng) -> outcome tuple`` as a batched mechanism.

    Parameters
    ----------
    function : the mechanism, one outcome per call (items, ``BOTTOM=-1`` for ⊥).
    declared_claim : its claimed guarantee (``PrivacyClaim``).
    max_width : the longest outcome it can return.
    name : shown in reports.
    """

    function: Callable[..., Any]
    declared_claim: PrivacyClaim
    max_width: int
    name: str = "black box"

    def __post_init__(self):
        if not callable(self.function):
            raise ValueError(f"function must be callable, got {self.function!r}")
        require_positive_int("width", self.max_width)

    @property
    def width(self) -> int:
        return self.max_width

    @property
    def claim(self) -> PrivacyClaim:
        return self.declared_claim

    def sample(self, counts, size, rng):
        batch = np.full((int(size), self.max_width), PAD, dtype=np.int64)
        for i in range(int(size)):
            outcome = self.function(counts, rng)
            if isinstance(outcome, numbers.Integral):
                outcome = (int(outcome),)
            outcome = tuple(int(v) for v in outcome)
            if len(outcome) > self.max_width:
                raise ValueError(f"the function returned {outcome!r}, longer than width={self.max_width}")
            batch[i, : len(outcome)] = outcome
        return batch

    def __str__(self):
        return self.name


def as_auditable(mechanism, claim=None, width=None, name=None):
    """``(sampler object, claim, name)``: mechanisms pass through, callables are wrapped."""
    if hasattr(mechanism, "sample") and hasattr(mechanism, "claim"):
        declared = mechanism.claim if claim is None else make_claim(claim, None if len(tuple(claim)) == 3 else mechanism.claim.neighbours)
        return mechanism, declared, name or _describe(mechanism)
    if callable(mechanism):
        if claim is None:
            raise ValueError("a plain callable needs claim=(epsilon, delta[, relation])")
        if width is None:
            raise ValueError("a plain callable needs width= (the longest outcome it returns)")
        declared = make_claim(claim)
        label = name or getattr(mechanism, "__name__", "black box")
        return BlackBox(mechanism, declared, int(width), label), declared, label
    raise ValueError(f"cannot audit {mechanism!r}: pass a mechanism with sample/claim or a callable")


def _describe(mechanism) -> str:
    text = repr(mechanism)
    return text if len(text) <= 200 else text[:197] + "..."
