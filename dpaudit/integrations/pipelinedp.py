"""PipelineDP's ``select_partitions`` and its count aggregation, as installed, as dpaudit mechanisms.

Only PipelineDP's public API is used: ``NaiveBudgetAccountant``, ``DPEngine`` on the
``LocalBackend``, ``SelectPartitionsParams``, ``AggregateParams`` and ``DataExtractors``
([`PipelineDPSelectPartitions`][dpaudit.integrations.pipelinedp.PipelineDPSelectPartitions],
[`PipelineDPCount`][dpaudit.integrations.pipelinedp.PipelineDPCount]). Each library call
gets a fresh accountant and engine, so every release spends the configured budget once.

Encoding. A histogram ``c`` is a table of ``(privacy_id, partition_key)`` rows: partition
``i`` gets ``c_i`` users of its own, each contributing one row. A user of PipelineDP may
contribute to up to ``max_partitions_contributed`` partitions (``m``); the release depends
on the data only through the number of distinct users per partition (``select_partitions``
counts privacy ids per key and decides each key alone), so any table with those counts and
at most ``m`` partitions per user has the same law. Removing one user touching at most
``m`` partitions moves those counts down by one: the neighbour relation is
[`AddRemoveUser`][mechanisms.AddRemoveUser] ``(m)``. A partition with no user is absent
from the table and never released. The outcome is the set of released keys (ascending ids,
padded with ``PAD``); ``select_partitions`` releases nothing else, ``aggregate`` also the
noisy counts, dropped here (post-processing: a bound on the keys is one on the release).

Claim: the sum of the ``(eps, delta)`` the library's accountant assigns to its mechanisms
(their ``MechanismSpec`` objects, read through a recording subclass of
``NaiveBudgetAccountant``), under ``AddRemoveUser(m)``: for ``select_partitions`` the
selection's alone, the accountant's total ``(ε, δ)``. Every call checks the specs it got
against the claim's.

Law (read from the library's C++ core, google/differential-privacy
``cc/algorithms/partition-selection.h``, which ``python-dp`` wraps): with
``ε' = ε/m`` and ``δ' = 1 − (1 − δ)^(1/m)``,

* ``truncated_geometric`` keeps a partition of ``n`` users with probability ``π(n)``,
  ``π(0) = 0``, ``π(n) = min(e^ε' π(n−1) + δ', 1 + e^−ε' (π(n−1) + δ' − 1), 1)``
  (Desfontaines, Voss, Gipson, Mandayam, "Differentially private partition selection",
  PoPETs 2022, Thm. 1; [`truncated_geometric_keep`][dpaudit.integrations.pipelinedp.truncated_geometric_keep]);
* ``laplace`` keeps it when ``n + Lap(m/ε) > τ``, ``τ = 1 − (m/ε) ln(2δ')``
  ([`laplace_keep`][dpaudit.integrations.pipelinedp.laplace_keep]).

``extra_users`` is a deliberately broken wrapper: it adds that many phantom users to every
present partition before the library sees the table, which lowers the library's effective
threshold by as many users: the off-by-one of opendp/opendp issue 2922 (the mass at the
threshold left out of δ), rebuilt by hand in ``dpaudit/corpus/partition_selection.py``.

Randomness: PyDP draws its keep decisions from its own secure generator and offers no seed,
so ``seeded_by_rng = False`` (the grey-box replay check skips this adapter). Batching: one
``sample`` call runs the library on ``size`` copies of the histogram at once, copy ``b``'s
partition ``i`` keyed ``(b, i)`` with users of its own. Each key's decision is one
``should_keep(n)`` of a selector whose parameters are the budget's ``(ε, δ, m)`` alone
(``dp_engine._select_private_partitions_internal``), no user is in two copies, and no user
exceeds ``m`` partitions (so contribution bounding samples nothing): the law of one copy is
that of a call on the histogram alone, and copies are independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pipeline_dp

from mechanisms import PAD, AddRemoveUser, PrivacyClaim, TopKMechanism

from .budget import empty_releases, validate_partition_selection

__all__ = [
    "STRATEGIES",
    "PipelineDPCount",
    "PipelineDPSelectPartitions",
    "laplace_keep",
    "pipelinedp_version",
    "truncated_geometric_keep",
]

#: The strategies whose law this module states, by the library's own names.
STRATEGIES = {
    "truncated_geometric": pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
    "laplace": pipeline_dp.PartitionSelectionStrategy.LAPLACE_THRESHOLDING,
}

#: Rows handed to the library per call at most (memory), whatever the batch size.
MAX_ROWS_PER_CALL = 500_000


def pipelinedp_version() -> str:
    """The installed pipeline-dp and python-dp versions (for the audit's evidence)."""
    from importlib.metadata import version

    return f"pipeline-dp {version('pipeline-dp')}, python-dp {version('python-dp')}"


def _adjusted(epsilon: float, delta: float, m: int) -> tuple[float, float]:
    """Per-partition ``(ε/m, 1 − (1 − δ)^(1/m))`` (partition-selection.h, CalculateAdjustedDelta)."""
    return epsilon / m, -math.expm1(math.log1p(-delta) / m)


def truncated_geometric_keep(n: int, epsilon: float, delta: float, m: int = 1) -> float:
    """P(a partition of ``n`` users is kept) under the truncated geometric strategy.

    The recursion of Desfontaines et al. 2022, Thm. 1, at the per-partition ``(ε', δ')``
    (module docstring); independent of the library's own ``probability_of_keep``.
    """
    eps, dlt = _adjusted(epsilon, delta, m)
    p = 0.0
    for _ in range(int(n)):
        p = min(math.exp(eps) * p + dlt, 1.0 + math.exp(-eps) * (p + dlt - 1.0), 1.0)
    return p


def laplace_keep(n: int, epsilon: float, delta: float, m: int = 1) -> float:
    """P(n + Lap(m/ε) > τ), ``τ = 1 − (m/ε) ln(2δ')`` (partition-selection.h, CalculateThreshold)."""
    if n == 0:
        return 0.0
    b = m / epsilon
    tau = 1.0 - b * math.log(2.0 * _adjusted(epsilon, delta, m)[1])
    gap = tau - n
    return 0.5 * math.exp(-gap / b) if gap >= 0 else 1.0 - 0.5 * math.exp(gap / b)


class _RecordingAccountant(pipeline_dp.NaiveBudgetAccountant):
    """A ``NaiveBudgetAccountant`` that keeps the ``MechanismSpec`` objects it hands out."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.specs: list[Any] = []

    def request_budget(self, *args: Any, **kwargs: Any) -> Any:
        spec = super().request_budget(*args, **kwargs)
        self.specs.append(spec)
        return spec


@dataclass(frozen=True)
class PipelineDPSelectPartitions(TopKMechanism):
    """``pipeline_dp.DPEngine.select_partitions`` (local backend) on user–partition rows.

    Parameters
    ----------
    epsilon, delta : the ``NaiveBudgetAccountant``'s total budget.
    max_partitions_contributed : ``SelectPartitionsParams.max_partitions_contributed`` (m).
    strategy : ``"truncated_geometric"`` (the library's default) or ``"laplace"``.
    extra_users : phantom users added to every present partition (0: the library as
        shipped; >= 1: a broken wrapper, module docstring).
    partitions : the most partition keys of a histogram audited (the outcome width).
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

    def _engine(self) -> tuple[Any, _RecordingAccountant]:
        """A fresh accountant with this adapter's total budget, and its local engine."""
        accountant = _RecordingAccountant(total_epsilon=self.epsilon, total_delta=self.delta)
        return pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend()), accountant

    def _run(self, rows: list[tuple[int, Any]]) -> tuple[list[Any], list[Any]]:
        """One library call: the released keys and the specs the accountant handed out."""
        engine, accountant = self._engine()
        params = pipeline_dp.SelectPartitionsParams(
            max_partitions_contributed=self.max_partitions_contributed,
            partition_selection_strategy=STRATEGIES[self.strategy],
        )
        extractors = pipeline_dp.DataExtractors(
            privacy_id_extractor=lambda row: row[0], partition_extractor=lambda row: row[1]
        )
        released = engine.select_partitions(rows, params, extractors)
        accountant.compute_budgets()
        return list(released), accountant.specs  # the local backend is lazy: list() runs it

    @cached_property
    def specs(self) -> tuple[tuple[str, float, float], ...]:
        """``(name, eps, delta)`` of every mechanism the accountant budgets, from a one-row run.

        (The library refuses an empty collection; the specs do not depend on the rows.)
        """
        _, specs = self._run([(0, (0, 0))])
        return tuple((str(s.name), float(s.eps), float(s.delta)) for s in specs)

    @property
    def selection_budget(self) -> tuple[float, float]:
        """``(eps, delta)`` of the partition-selection mechanism alone (its keep law's)."""
        (selection,) = [(e, d) for name, e, d in self.specs if name == "PartitionSelection"]
        return selection

    @cached_property
    def claim(self) -> PrivacyClaim:
        """The sum of the accountant's ``(eps, delta)`` over its mechanisms (basic composition)."""
        return PrivacyClaim(
            sum(e for _, e, _ in self.specs),
            sum(d for _, _, d in self.specs),
            AddRemoveUser(self.max_partitions_contributed),
        )

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` releases, as many copies of the histogram per library call as fit."""
        counts, size, rng, out = empty_releases(self, counts, size, rng)
        d = int(counts.size)
        per_copy = np.where(counts > 0, counts + self.extra_users, 0).astype(np.int64)
        rows_per_copy = int(per_copy.sum())
        if rows_per_copy == 0:
            # No user: the library refuses an empty collection; there is no key to release.
            return out
        copies = max(1, MAX_ROWS_PER_CALL // max(rows_per_copy, 1))
        claim = self.claim
        done = 0
        while done < size:
            n = min(copies, size - done)
            keys, specs = self._run(_rows(per_copy, n))
            spent = tuple((str(s.name), float(s.eps), float(s.delta)) for s in specs)
            if spent != self.specs:
                raise RuntimeError(
                    f"PipelineDP spent {spent} on a call, not the {self.specs} of the claim {claim}"
                )
            kept = np.zeros((n, d), dtype=bool)
            if keys:
                copy, item = np.array([self._key(k) for k in keys], dtype=np.int64).T
                kept[copy, item] = True
            out[done : done + n, :d] = _key_sets(kept)
            done += n
        return out

    @staticmethod
    def _key(released: Any) -> tuple[int, int]:
        """``(copy, partition)`` of one released element (``select_partitions``: the key)."""
        return released

    def __str__(self) -> str:
        broken = f", extra_users={self.extra_users}" if self.extra_users else ""
        return (
            f"PipelineDP select_partitions(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"max_partitions_contributed={self.max_partitions_contributed}, "
            f"strategy={self.strategy}{broken})"
        )


def _rows(per_copy: np.ndarray, copies: int) -> list[tuple[int, tuple[int, int]]]:
    """``(privacy_id, (copy, partition))`` rows, every user in one partition of one copy."""
    items = np.repeat(np.arange(per_copy.size), per_copy)
    copy = np.repeat(np.arange(copies), items.size)
    item = np.tile(items, copies)
    return [(uid, key) for uid, key in enumerate(zip(copy.tolist(), item.tolist()))]


def _key_sets(kept: np.ndarray) -> np.ndarray:
    """Ascending ids of the kept keys per row, padded with PAD."""
    _, d = kept.shape
    ids = np.where(kept, np.arange(d), d)
    ids.sort(axis=1)
    return np.where(ids < d, ids, PAD).astype(np.int64)


@dataclass(frozen=True)
class PipelineDPCount(PipelineDPSelectPartitions):
    """``DPEngine.aggregate`` with ``PRIVACY_ID_COUNT`` and private partition selection.

    The same rows, relation and batching as
    [`PipelineDPSelectPartitions`][dpaudit.integrations.pipelinedp.PipelineDPSelectPartitions]
    (``max_contributions_per_partition = 1``: every user has one row per partition, so the
    library's per-partition bounding keeps them all). The accountant splits the budget between
    the Laplace count and the selection (``specs``); the claim is their sum under
    ``AddRemoveUser(m)``. The outcome is the released keys; their noisy counts are dropped
    (post-processing). The keys follow the selection's law at
    [`selection_budget`][dpaudit.integrations.pipelinedp.PipelineDPSelectPartitions.selection_budget]
    (``(ε/2, δ)`` with the default even split).
    """

    def _run(self, rows: list[tuple[int, Any]]) -> tuple[list[Any], list[Any]]:
        engine, accountant = self._engine()
        params = pipeline_dp.AggregateParams(
            noise_kind=pipeline_dp.NoiseKind.LAPLACE,
            metrics=[pipeline_dp.Metrics.PRIVACY_ID_COUNT],
            max_partitions_contributed=self.max_partitions_contributed,
            max_contributions_per_partition=1,
            partition_selection_strategy=STRATEGIES[self.strategy],
        )
        extractors = pipeline_dp.DataExtractors(
            privacy_id_extractor=lambda row: row[0],
            partition_extractor=lambda row: row[1],
            value_extractor=lambda row: 0,
        )
        released = engine.aggregate(rows, params, extractors)
        accountant.compute_budgets()
        return list(released), accountant.specs

    @staticmethod
    def _key(released: Any) -> tuple[int, int]:
        """``(copy, partition)`` of one ``(key, MetricsTuple)`` row of ``aggregate``."""
        return released[0]

    def __str__(self) -> str:
        return "PipelineDP aggregate PRIVACY_ID_COUNT, " + super().__str__().removeprefix(
            "PipelineDP select_partitions"
        )
