"""Outcomes and batches of outcomes (DESIGN.md, "Outcomes").

An outcome is a tuple of item ids. Ordered mechanisms list items in selection
order; set mechanisms list them ascending. ``BOTTOM`` is the last element when
a mechanism stops early with ⊥ (or returns only ⊥). A batch of outcomes is an
``int64`` array of shape ``(size, width)`` whose unused cells hold ``PAD``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

__all__ = [
    "BOTTOM",
    "PAD",
    "batch_from_outcomes",
    "count_outcomes",
    "outcome_from_row",
    "outcomes_from_batch",
]

BOTTOM = -1
PAD = -2


def outcome_from_row(row) -> tuple[int, ...]:
    """The outcome tuple stored in one row of a batch (PAD cells dropped)."""
    row = np.asarray(row)
    return tuple(int(v) for v in row[row != PAD])


def outcomes_from_batch(batch) -> list[tuple[int, ...]]:
    """Every row of a batch as an outcome tuple."""
    return [outcome_from_row(row) for row in np.asarray(batch)]


def batch_from_outcomes(outcomes, width: int) -> np.ndarray:
    """Pack outcome tuples into a ``(len(outcomes), width)`` int64 batch padded with PAD."""
    batch = np.full((len(outcomes), width), PAD, dtype=np.int64)
    for i, outcome in enumerate(outcomes):
        if len(outcome) > width:
            raise ValueError(f"outcome {outcome!r} is longer than width={width}")
        batch[i, : len(outcome)] = outcome
    return batch


def count_outcomes(batch) -> Counter:
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
