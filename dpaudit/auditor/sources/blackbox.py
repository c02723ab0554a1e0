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
from typing import Any, ClassVar

import numpy as np

from mechanisms import (
    BOTTOM,
    PAD,
    AddRemoveUser,
    MixedBatch,
    PrivacyClaim,
    TopKMechanism,
)
from mechanisms.claims import RELATIONS
from mechanisms.validation import (
    require_nonnegative_float,
    require_nonnegative_int,
    require_positive_int,
    require_probability,
)

__all__ = [
    "AuditTarget",
    "BatchedBlackBox",
    "BlackBox",
    "as_auditable",
    "batched",
    "make_claim",
    "validate_batch",
]


def make_claim(claim, neighbours=None) -> PrivacyClaim:
    """A ``PrivacyClaim`` from ``(ε, δ)``, ``(ε, δ, relation)`` or a ``PrivacyClaim``."""
    if isinstance(claim, PrivacyClaim):
        return claim if neighbours is None else claim.with_neighbours(neighbours)
    try:
        parts = tuple(claim)
    except TypeError:
        raise ValueError(
            f"claim must be (epsilon, delta) or (epsilon, delta, relation), got {claim!r}"
        ) from None
    if len(parts) not in (2, 3):
        raise ValueError(
            f"claim must be (epsilon, delta) or (epsilon, delta, relation), got {claim!r}"
        )
    epsilon = require_nonnegative_float("claim epsilon", parts[0])
    delta = require_probability("claim delta", parts[1], allow_zero=True, allow_one=True)
    relation = (
        neighbours if neighbours is not None else (parts[2] if len(parts) == 3 else AddRemoveUser())
    )
    if not isinstance(relation, RELATIONS):
        raise ValueError(
            f"neighbours must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
        )
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
    values: int = 0

    def __post_init__(self):
        if not callable(self.function):
            raise ValueError(f"function must be callable, got {self.function!r}")
        require_nonnegative_int("values", self.values)
        if self.values:
            require_nonnegative_int("width", self.max_width)
        else:
            require_positive_int("width", self.max_width)

    @property
    def width(self) -> int:
        return self.max_width

    @property
    def value_width(self) -> int:
        """Real values per outcome (0: item ids only)."""
        return self.values

    @property
    def claim(self) -> PrivacyClaim:
        return self.declared_claim

    #: Black boxes get every check: ids within the histogram, not only the structure.
    outcome_validation = "strict"
    #: A Python call per sample is slow: ship every chunk, however small, to the workers.
    parallel_min_chunk: ClassVar[int | None] = 1
    #: Rows per chunk: small, so that workers share even a screening round.
    preferred_chunk: ClassVar[int | None] = 5_000

    def sample(self, counts, size, rng):
        if self.values:
            return self._sample_mixed(counts, int(size), rng)
        batch = np.full((int(size), self.max_width), PAD, dtype=np.int64)
        for i in range(int(size)):
            outcome = _as_outcome(self.function(counts, rng), self.name)
            if len(outcome) > self.max_width:
                raise ValueError(
                    f"{self.name} returned {outcome!r}, longer than width={self.max_width}"
                )
            batch[i, : len(outcome)] = outcome
        return batch

    def _sample_mixed(self, counts, size, rng) -> MixedBatch:
        items = np.full((size, self.max_width), PAD, dtype=np.int64)
        values = np.full((size, self.values), np.nan)
        for i in range(size):
            ids, vals = _as_mixed_outcome(
                self.function(counts, rng), self.max_width, self.values, self.name
            )
            items[i, : len(ids)] = ids
            values[i] = vals
        return MixedBatch(items, values)

    def __str__(self):
        return self.name


def _as_mixed_outcome(value, width, n_values, name):
    """``(item ids, values)`` of one per-call release; a bare number when width is 0."""
    if width == 0 and isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = ((), (value,))
    if isinstance(value, np.ndarray) and width == 0:
        value = ((), tuple(value.ravel()))
    try:
        ids, vals = value
        ids = () if ids is None else ids
        ids = (ids,) if isinstance(ids, numbers.Integral) else tuple(ids)
        vals = (vals,) if isinstance(vals, numbers.Real) else tuple(vals)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} returned {value!r}: a mechanism with values returns "
            "(item ids, values)" + (" or a number" if width == 0 else "")
        ) from None
    if len(ids) > width or len(vals) != n_values:
        raise ValueError(
            f"{name} returned {value!r}: expected at most {width} item ids and "
            f"exactly {n_values} values"
        )
    for v in ids:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"{name} returned {value!r}: {v!r} is not an integer item id")
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ValueError(f"{name} returned {value!r}: {v!r} is not a real value")
    return tuple(int(v) for v in ids), tuple(float(v) for v in vals)


@dataclass(frozen=True)
class BatchedBlackBox(BlackBox):
    """A batched function ``f(counts, size, rng) -> (size, width)`` int array, with its claim.

    The fast way to audit your own code: one call per chunk instead of one per sample.
    Declare it with [`batched`][dpaudit.auditor.sources.blackbox.batched] or
    ``dpaudit.audit(f, batched=True, claim=..., width=...)``.
    """

    name: str = "batched black box"

    # One call per chunk: the usual chunking (large chunks, small ones sampled here).
    parallel_min_chunk: ClassVar[int | None] = None
    preferred_chunk: ClassVar[int | None] = None

    def sample(self, counts, size, rng):
        batch = self.function(counts, int(size), rng)
        if batch is None:
            raise ValueError(f"{self.name} returned None, not a (size, width) array")
        if self.values:  # shapes are checked by the auditor (value_encoding.as_mixed_batch)
            return batch
        batch = np.asarray(batch)
        if batch.ndim == 1:  # a width-1 mechanism may return a flat array
            batch = batch[:, None]
        if batch.ndim != 2 or batch.shape[0] != int(size) or batch.shape[1] > self.max_width:
            raise ValueError(
                f"{self.name} returned shape {batch.shape}, not ({int(size)}, <= {self.max_width})"
            )
        if batch.shape[1] < self.max_width:
            batch = (
                np.hstack(
                    [
                        batch,
                        np.full(
                            (batch.shape[0], self.max_width - batch.shape[1]), PAD, dtype=np.int64
                        ),
                    ]
                )
                if batch.size
                else np.full((int(size), self.max_width), PAD, dtype=np.int64)
            )
        return batch

    def __str__(self):
        return self.name


def batched(*, claim, width: int, name: str | None = None, values: int = 0):
    """Decorator: ``f(counts, size, rng) -> (size, width) array`` becomes an auditable mechanism.

    With ``values=v > 0`` the function releases real numbers too: it returns a
    [`mechanisms.MixedBatch`][mechanisms.MixedBatch], an ``(items (size, width), values (size, v))``
    pair, or, when ``width=0``, just the ``(size,)`` or ``(size, v)`` float array.

    >>> @batched(claim=(1.0, 0.0), width=1)
    ... def noisy_max(counts, size, rng):
    ...     noise = rng.laplace(0.0, 2.0, size=(size, len(counts)))
    ...     return np.argmax(counts + noise, axis=1)[:, None]
    """
    declared = make_claim(claim)

    def wrap(function):
        return BatchedBlackBox(
            function,
            declared,
            int(width),
            name or str(getattr(function, "__name__", "batched black box")),
            int(values),
        )

    return wrap


def _as_outcome(value, name) -> tuple[int, ...]:
    """One returned outcome as a tuple of ints; floats, None and the like are errors."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),)
    if value is None or isinstance(value, (str, bytes, bool, numbers.Real)):
        raise ValueError(
            f"{name} returned {value!r}: an outcome is a tuple of integer item "
            "ids (BOTTOM = -1 last for ⊥); declare real values with values=N"
        )
    try:
        items = tuple(value)
    except TypeError:
        raise ValueError(
            f"{name} returned {value!r} ({type(value).__name__}), not a tuple of integer item ids"
        ) from None
    for v in items:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(
                f"{name} returned {value!r}: {v!r} is not an integer item id "
                "(floats are not truncated; declare real values with values=N)"
            )
    return tuple(int(v) for v in items)


def validate_batch(
    batch, *, domain_size: int | None = None, transcript: bool = False, name: str = "the mechanism"
) -> np.ndarray:
    """Check a sample batch against DESIGN.md's outcome conventions; return it as int64.

    Rows hold item ids in ``[0, domain_size)`` (no upper bound when ``domain_size`` is
    None), BOTTOM = -1 only as the last entry, PAD = -2 only after the outcome, and no id
    twice. A session transcript (``transcript=True``: answers concatenated) may repeat
    ids and hold ⊥ mid-row. Vectorised; the error names the first offending outcome.
    """
    array = np.asarray(batch)
    if array.ndim != 2:
        raise ValueError(f"{name} returned a batch of shape {array.shape}, not (size, width)")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"{name} returned {array.dtype} outcomes, not integer item ids "
            "(floats are not truncated; declare real values with values=N)"
        )
    array = array.astype(np.int64, copy=False)
    if array.size == 0:
        return array
    pad = array == PAD
    bad = (array < PAD) if domain_size is None else ((array < PAD) | (array >= domain_size))
    # PAD only trailing: once a cell is PAD, every later cell is PAD.
    bad_row = bad.any(axis=1) | (pad[:, :-1] & ~pad[:, 1:]).any(axis=1)
    if not transcript:
        bottom = array == BOTTOM
        after = np.zeros_like(bottom)
        after[:, 1:] = ~pad[:, 1:]
        # ⊥ followed by anything but PAD
        bad_row |= (bottom[:, :-1] & after[:, 1:]).any(axis=1)
        ordered = np.sort(np.where(array >= 0, array, -1 - np.arange(array.shape[1])), axis=1)
        bad_row |= (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    if bad_row.any():
        row = array[int(np.flatnonzero(bad_row)[0])]
        outcome = tuple(int(v) for v in row[row != PAD])
        scope = f"ids in [0, {domain_size})" if domain_size is not None else "ids >= 0"
        rule = "" if transcript else ", no id twice, ⊥ (-1) only last"
        raise ValueError(
            f"{name} returned the outcome {outcome} (row {list(map(int, row))}): "
            f"outcomes hold {scope}{rule}, then PAD (-2)"
        )
    return array


@dataclass(frozen=True)
class AuditTarget:
    """A mechanism as the auditor sees it: its sampler, the claim audited, its name."""

    mechanism: Any
    """The sampler: ``sample(counts, size, rng)`` (a mechanism, or a callable wrapped)."""
    claim: PrivacyClaim
    """The claim audited: the mechanism's own, or the one given."""
    label: str
    """The name shown in reports and results."""


def as_auditable(mechanism, claim=None, width=None, name=None, batched=False, values=0):
    """The [`AuditTarget`][dpaudit.auditor.sources.blackbox.AuditTarget] of ``mechanism``:
    mechanisms pass through, callables are wrapped.

    A callable is per-call, ``f(counts, rng) -> outcome``, unless ``batched=True``:
    ``f(counts, size, rng) -> (size, width)`` array. ``values=v`` declares ``v`` real
    values per outcome (``(items, values)`` returns; see
    [`batched`][dpaudit.auditor.sources.blackbox.batched]).
    """
    if hasattr(mechanism, "sample") and hasattr(mechanism, "claim"):
        declared = (
            mechanism.claim
            if claim is None
            else make_claim(claim, None if len(tuple(claim)) == 3 else mechanism.claim.neighbours)
        )
        # Wrappers of outside code (black boxes, child processes, libraries) name themselves.
        own_name = type(mechanism).__str__ is not object.__str__
        label = name or (str(mechanism) if own_name else _describe(mechanism))
        return AuditTarget(mechanism, declared, label)
    if callable(mechanism):
        if claim is None:
            raise ValueError("a plain callable needs claim=(epsilon, delta[, relation])")
        if width is None:
            raise ValueError("a plain callable needs width= (the longest outcome it returns)")
        declared = make_claim(claim)
        label = name or getattr(mechanism, "__name__", "black box")
        wrapper = BatchedBlackBox if batched else BlackBox
        wrapped = wrapper(mechanism, declared, int(width), label, int(values or 0))
        return AuditTarget(wrapped, declared, label)
    raise ValueError(
        f"cannot audit {mechanism!r}: pass a mechanism with sample/claim or a callable"
    )


def _describe(mechanism) -> str:
    text = repr(mechanism)
    return text if len(text) <= 200 else text[:197] + "..."
