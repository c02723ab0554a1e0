"""The parameters every partition-selection adapter validates once: its (ε, δ) and its shape.

Shared by [`pipelinedp`][dpaudit.integrations.pipelinedp],
[`python_dp`][dpaudit.integrations.python_dp] and
[`smartnoise`][dpaudit.integrations.smartnoise]; imports none of their libraries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from mechanisms import PAD
from mechanisms.base import check_rng, check_size
from mechanisms.histogram import validate_counts
from mechanisms.validation import (
    require_choice,
    require_nonnegative_int,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = ["empty_releases", "validate_budget", "validate_partition_selection"]


def _set(adapter: Any, values: dict[str, object]) -> None:
    # The adapters are frozen dataclasses: validated values are written once, here.
    for name, value in values.items():
        object.__setattr__(adapter, name, value)


def validate_budget(adapter: Any) -> None:
    """Check ``adapter.epsilon`` (finite, > 0), ``delta`` (in (0, 1)) and ``partitions``
    (the outcome width, >= 1), and store them as ``float``, ``float`` and ``int``."""
    _set(
        adapter,
        {
            "epsilon": require_positive_float("epsilon", adapter.epsilon),
            "delta": require_probability("delta", adapter.delta),
            "partitions": require_positive_int("partitions", adapter.partitions),
        },
    )


def validate_partition_selection(adapter: Any, strategies: Iterable[str]) -> None:
    """[`validate_budget`][dpaudit.integrations.budget.validate_budget], then
    ``max_partitions_contributed`` (>= 1), ``strategy`` (one of ``strategies``) and
    ``extra_users`` (>= 0)."""
    validate_budget(adapter)
    _set(
        adapter,
        {
            "max_partitions_contributed": require_positive_int(
                "max_partitions_contributed", adapter.max_partitions_contributed
            ),
            "strategy": require_choice("strategy", adapter.strategy, strategies),
            "extra_users": require_nonnegative_int("extra_users", adapter.extra_users),
        },
    )


def empty_releases(
    adapter: Any, counts: Any, size: int, rng: Any, noun: str = "partitions"
) -> tuple[np.ndarray, int, np.random.Generator, np.ndarray]:
    """``(counts, size, rng, out)`` validated for ``adapter.sample``, ``out`` a ``(size,
    partitions)`` batch of ``PAD``; a histogram wider than ``adapter.partitions`` is refused."""
    counts = validate_counts(counts)
    size, rng = check_size(size), check_rng(rng)
    d = int(counts.size)
    if d > adapter.partitions:
        raise ValueError(
            f"a histogram of {d} {noun} is wider than partitions={adapter.partitions}: "
            f"construct the adapter with partitions={d}"
        )
    return counts, size, rng, np.full((size, adapter.partitions), PAD, dtype=np.int64)
