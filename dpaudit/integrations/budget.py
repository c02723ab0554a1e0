"""The parameters every partition-selection adapter validates once: its (ε, δ) and its shape.

Shared by [`pipelinedp`][dpaudit.integrations.pipelinedp],
[`python_dp`][dpaudit.integrations.python_dp] and
[`smartnoise`][dpaudit.integrations.smartnoise]; imports none of their libraries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mechanisms.validation import (
    require_choice,
    require_nonnegative_int,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = ["validate_budget", "validate_partition_selection"]


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
