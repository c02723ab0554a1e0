"""What a value-releasing sampler returns, validated into a [`mechanisms.MixedBatch`][mechanisms.MixedBatch]."""

from __future__ import annotations

import numpy as np

from mechanisms import PAD, MixedBatch

__all__ = ["as_mixed_batch", "column_items", "value_width_of"]


def value_width_of(mechanism) -> int:
    """How many real values each outcome of ``mechanism`` carries (0: items only)."""
    value = getattr(mechanism, "value_width", 0) or 0
    return int(value)


def as_mixed_batch(batch, size: int, width: int, value_width: int, name: str) -> MixedBatch:
    """A sampler's return value as a [`MixedBatch`][mechanisms.MixedBatch] of the declared shape.

    Accepts a ``MixedBatch``, an ``(items, values)`` pair, or (``width == 0``) a bare
    float array of values. Errors name the mechanism and the shapes.
    """
    if isinstance(batch, MixedBatch):
        mixed = batch
    elif isinstance(batch, tuple) and len(batch) == 2:
        mixed = MixedBatch(
            np.asarray(batch[0]).reshape(size, -1)
            if np.size(batch[0])
            else np.zeros((size, 0), dtype=np.int64),
            np.asarray(batch[1]),
        )
    elif width == 0:
        values = np.asarray(batch)
        if values.ndim == 1:
            values = values[:, None]
        mixed = MixedBatch(np.zeros((values.shape[0], 0), dtype=np.int64), values)
    else:
        raise ValueError(
            f"{name} declares {value_width} value(s) per outcome and must return a "
            f"MixedBatch or (items, values), got {type(batch).__name__}"
        )
    if mixed.size != size or mixed.value_width != value_width or mixed.width > width:
        raise ValueError(
            f"{name} returned items of shape {mixed.items.shape} and values of shape "
            f"{mixed.values.shape}; expected ({size}, <= {width}) and "
            f"({size}, {value_width})"
        )
    if mixed.width < width:
        items = np.full((size, width), PAD, dtype=np.int64)
        items[:, : mixed.width] = mixed.items
        mixed = MixedBatch(items, mixed.values)
    return mixed


def column_items(items: np.ndarray, column: int) -> np.ndarray:
    """The item released at position ``column`` (PAD when the outcome has no items there)."""
    if column < items.shape[1]:
        return items[:, column]
    return np.full(items.shape[0], PAD, dtype=np.int64)
