"""Google's partition selection through ``python-dp`` (PyDP), as installed, as a dpaudit mechanism.

Only PyDP's public API is used: ``pydp.algorithms.partition_selection.create_partition_strategy``
and the strategy's ``should_keep(num_users)``. Partition ``i`` of a histogram has ``c_i``
users; each present partition is decided by one ``should_keep(c_i)`` call, a partition with
no user is absent and never released. A user contributes to at most ``m`` partitions
(``max_partitions_contributed``): the relation is [`AddRemoveUser`][mechanisms.AddRemoveUser]
``(m)``. The outcome is the set of released keys (ascending ids, padded with ``PAD``).

Claim: the strategy object's own ``epsilon`` and ``delta`` (read back from the library
object), under ``AddRemoveUser(m)``. Law: that of
[`truncated_geometric_keep`][dpaudit.integrations.pipelinedp.truncated_geometric_keep] and
[`laplace_keep`][dpaudit.integrations.pipelinedp.laplace_keep] (the same C++ core;
PipelineDP calls these strategies).

``extra_users`` is the broken wrapper of
[`PipelineDPSelectPartitions`][dpaudit.integrations.pipelinedp.PipelineDPSelectPartitions]:
``should_keep(c_i + extra_users)`` for a present partition, the threshold that many users lower.

Randomness: PyDP's secure generator, no seed: ``seeded_by_rng = False``. One strategy object
serves a batch; every ``should_keep`` draws afresh (``partition-selection.h``: a uniform per
call, or the Laplace mechanism's noise per call), so the rows are independent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from pydp.algorithms import partition_selection

from mechanisms import PAD, AddRemoveUser, PrivacyClaim, TopKMechanism

from .budget import empty_releases, validate_partition_selection

__all__ = ["STRATEGIES", "PyDPPartitionSelection"]

#: The strategies whose law ``dpaudit.integrations.pipelinedp`` states, by PyDP's names.
STRATEGIES = ("truncated_geometric", "laplace")


@dataclass(frozen=True)
class PyDPPartitionSelection(TopKMechanism):
    """``create_partition_strategy(strategy, epsilon, delta, m).should_keep`` per partition.

    Parameters
    ----------
    epsilon, delta : the strategy's ε and δ (over the ``m`` partitions of one user).
    max_partitions_contributed : m.
    strategy : ``"truncated_geometric"`` or ``"laplace"``.
    extra_users : phantom users per present partition (0: the library; >= 1: broken).
    partitions : the most partitions of a histogram audited (the outcome width).
    """

    epsilon: float
    delta: float
    max_partitions_contributed: int = 1
    strategy: str = "truncated_geometric"
    extra_users: int = 0
    partitions: int = 5

    outcome_validation: ClassVar[str] = "strict"
    #: PyDP draws OS entropy; the audit's generator cannot replay it.
    seeded_by_rng: ClassVar[bool] = False
    parallel_min_chunk: ClassVar[int] = 1
    preferred_chunk: ClassVar[int] = 20_000
    ordered: ClassVar[bool] = False

    def __post_init__(self):
        validate_partition_selection(self, STRATEGIES)

    @property
    def width(self) -> int:
        return self.partitions

    def selector(self) -> Any:
        """A fresh PyDP strategy object with this adapter's parameters."""
        return partition_selection.create_partition_strategy(
            self.strategy, self.epsilon, self.delta, self.max_partitions_contributed
        )

    @cached_property
    def claim(self) -> PrivacyClaim:
        """The strategy object's ``epsilon`` and ``delta``, under ``AddRemoveUser(m)``."""
        selector = self.selector()
        return PrivacyClaim(
            float(selector.epsilon),
            float(selector.delta),
            AddRemoveUser(int(selector.max_partitions_contributed)),
        )

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` releases: one ``should_keep`` per present partition and row."""
        counts, size, rng, out = empty_releases(self, counts, size, rng)
        d = int(counts.size)
        present = [(i, int(c) + self.extra_users) for i, c in enumerate(counts) if c > 0]
        if not present or size == 0:
            return out
        keep = self.selector().should_keep
        kept = np.zeros((size, d), dtype=bool)
        for i, users in present:
            kept[:, i] = [keep(users) for _ in range(size)]
        ids = np.where(kept, np.arange(d), d)
        ids.sort(axis=1)
        out[:, :d] = np.where(ids < d, ids, PAD)
        return out

    def __str__(self) -> str:
        broken = f", extra_users={self.extra_users}" if self.extra_users else ""
        return (
            f"python-dp {self.strategy} partition selection(epsilon={self.epsilon:g}, "
            f"delta={self.delta:g}, max_partitions_contributed="
            f"{self.max_partitions_contributed}{broken})"
        )
