"""Outcomes and batches of outcomes (DESIGN.md, "Outcomes").

An outcome is a tuple of item ids. Ordered mechanisms list items in selection
order; set mechanisms list them ascending. ``BOTTOM`` is the last element when
a mechanism stops early with ⊥ (or returns only ⊥). A batch of outcomes is an
``int64`` array of shape ``(size, width)`` whose unused cells hold ``PAD``.

A mechanism that also releases real numbers (noisy counts next to the items, or
only a noisy value) declares ``value_width > 0`` and returns a
[`MixedBatch`][mechanisms.outcomes.MixedBatch]: the item block as above and a ``float64`` block of
shape ``(size, value_width)``, row for row. A value slot with nothing to report (its item is ⊥ or
PAD) holds NaN.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BOTTOM",
    "PAD",
    "MixedBatch",
    "batch_from_outcomes",
    "count_outcomes",
    "outcome_from_row",
    "outcomes_from_batch",
]

BOTTOM = -1
PAD = -2


def outcome_from_row(row: np.ndarray) -> tuple[int, ...]:
    """The outcome tuple stored in one row of a batch (PAD cells dropped)."""
    row = np.asarray(row)
    return tuple(int(v) for v in row[row != PAD])


def outcomes_from_batch(batch: np.ndarray) -> list[tuple[int, ...]]:
    """Every row of a batch as an outcome tuple."""
    return [outcome_from_row(row) for row in np.asarray(batch)]


def batch_from_outcomes(outcomes: Sequence[Sequence[int]], width: int) -> np.ndarray:
    """Pack outcome tuples into a ``(len(outcomes), width)`` int64 batch padded with PAD."""
    batch = np.full((len(outcomes), width), PAD, dtype=np.int64)
    lengths = np.fromiter(map(len, outcomes), dtype=np.int64, count=len(outcomes))
    if lengths.size and lengths.max() > width:
        outcome = outcomes[int(np.argmax(lengths > width))]
        raise ValueError(f"outcome {outcome!r} is longer than width={width}")
    # One array per outcome length: numpy packs equal-length tuples in C.
    distinct = np.unique(lengths).tolist()
    if len(distinct) == 1 and distinct[0]:
        batch[:, : distinct[0]] = np.array(outcomes, dtype=np.int64)
        return batch
    for length in distinct:
        if length:
            rows = np.flatnonzero(lengths == length)
            batch[rows, :length] = np.array([outcomes[i] for i in rows.tolist()], dtype=np.int64)
    return batch


def count_outcomes(batch: np.ndarray) -> Counter:
    """Counts of each distinct outcome in a batch, vectorized over rows.

    ``np.unique`` over rows does the grouping in C; only the distinct rows are
    turned into tuples, so this is cheap even for millions of samples.
    """
    batch = np.asarray(batch, dtype=np.int64)
    if batch.ndim != 2:
        raise ValueError(f"batch must be a 2-D array, got shape {batch.shape}")
    if batch.shape[0] == 0:
        return Counter()
    rows, counts = np.unique(batch, axis=0, return_counts=True)
    # Accumulate rather than assign: two distinct rows can name the same outcome
    # when PAD sits mid-row, and their counts must add up, not overwrite.
    tally: Counter = Counter()
    for row, count in zip(rows, counts):
        tally[outcome_from_row(row)] += int(count)
    return tally


@dataclass(frozen=True, eq=False)
class MixedBatch:
    """A batch of outcomes that carry real values: an item block and a value block.

    Parameters
    ----------
    items : int64 ``(size, width)`` item ids padded with PAD (``width`` may be 0 for a
        mechanism that releases values only).
    values : float64 ``(size, value_width)``; NaN marks a slot with no value.
    """

    items: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        items = np.asarray(self.items)
        values = np.asarray(self.values)
        if values.ndim == 1:
            values = values[:, None]
        if items.ndim == 1 and items.size == 0:
            items = np.zeros((values.shape[0], 0), dtype=np.int64)
        if items.ndim != 2 or values.ndim != 2:
            raise ValueError(
                f"MixedBatch needs 2-D items and values, got shapes {items.shape} "
                f"and {values.shape}"
            )
        if items.shape[0] != values.shape[0]:
            raise ValueError(
                f"MixedBatch items have {items.shape[0]} rows but values have {values.shape[0]}"
            )
        if items.size and not np.issubdtype(items.dtype, np.integer):
            raise ValueError(f"MixedBatch items must be integer ids, got {items.dtype}")
        if values.size and not (
            np.issubdtype(values.dtype, np.floating) or np.issubdtype(values.dtype, np.integer)
        ):
            raise ValueError(f"MixedBatch values must be real numbers, got {values.dtype}")
        object.__setattr__(self, "items", items.astype(np.int64, copy=False))
        object.__setattr__(self, "values", values.astype(np.float64, copy=False))

    @property
    def size(self) -> int:
        return int(self.values.shape[0])

    @property
    def width(self) -> int:
        return int(self.items.shape[1])

    @property
    def value_width(self) -> int:
        return int(self.values.shape[1])

    def __len__(self) -> int:
        return self.size

    @classmethod
    def stack(cls, batches: Iterable[MixedBatch]) -> MixedBatch:
        """The batches one after another (all of the same widths)."""
        batches = list(batches)
        return cls(np.vstack([b.items for b in batches]), np.vstack([b.values for b in batches]))

    def row(self, index: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """One outcome: ``(item ids, values)`` with PAD cells dropped from the ids."""
        return outcome_from_row(self.items[index]), tuple(float(v) for v in self.values[index])
