"""The options of one live audit, validated once, frozen, and the plan they determine."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms.validation import require_nonnegative_int, require_positive_int

from ..results.power import DEFAULT_POWER_FACTOR
from ..sources.sampling import DEFAULT_CHUNK
from .plan import AuditPlan

__all__ = ["DEFAULT_SAMPLES", "AuditOptions"]

#: Default total budget (samples drawn over all phases and both sides, never more).
#: Confirmation stops early once a violation is confirmed or the audit has power, so a
#: default audit draws what it needs up to this: measured 20M-50M samples in 8-20 s for
#: LimitDomain(3, 10, ε=1, δ=1e-6) on 2 cores at load 3-5. The correct sparse vector at
#: ε = 0.1 (Lyu-Su-Li Alg. 1, c = 1) is INCONCLUSIVE on 3 of 10 seeds at 20M, 0 of 3 at 60M.
DEFAULT_SAMPLES = 50_000_000


def _pair_tuple(pair) -> tuple:
    """``(counts, counts2)`` of a given pair: a 2-sequence or a ``NeighbourPair``."""
    return (pair.counts, pair.counts2) if hasattr(pair, "counts2") else tuple(pair)


@dataclass(frozen=True)
class AuditOptions:
    """What [`dpaudit.audit`][dpaudit.auditor.audit] was asked to do, beyond the mechanism and its claim.

    Each field is the keyword of [`runner.audit`][dpaudit.auditor.run.runner.audit] of its name.
    Construction refuses a bad value with an error naming the argument;
    [`plan`][dpaudit.auditor.planning.options.AuditOptions.plan] builds the
    [`plan.AuditPlan`][dpaudit.auditor.planning.plan.AuditPlan] (which checks ``samples``, ``alpha``,
    ``keep``, ``events_per_pair`` and ``chunk``).
    """

    samples: int = DEFAULT_SAMPLES
    """Total budget of mechanism samples, all phases and both sides (``budget=`` of ``audit``
    resolved: [`AuditRequest.budget`][dpaudit.auditor.run.request.AuditRequest.budget])."""
    alpha: float = 0.05
    """Failure probability; the bounds hold with confidence ``1 − alpha``."""
    seed: int = 0
    """Root seed (an int); same seed, same result, whatever ``workers`` is."""
    workers: int = 1
    """Processes that sample chunks in parallel (ignored with ``executor``)."""
    keep: int = 3
    """Pairs carried from screening to selection and confirmation (with a claimed δ > 0, one of
    them is a pair whose support changes and one a pair whose support stays:
    [`slots.with_delta_slot`][dpaudit.auditor.search.slots.with_delta_slot],
    [`slots.with_epsilon_slot`][dpaudit.auditor.search.slots.with_epsilon_slot])."""
    max_pairs: int = 600
    """Cap on the candidate pairs screened (targeted families are kept)."""
    events_per_pair: int = 3
    """Events confirmed per kept pair (Bonferroni over all)."""
    chunk: int = DEFAULT_CHUNK
    """Rows per sampling call (memory is O(chunk · width))."""
    domain_size: int | None = None
    """Number of items of the default histograms."""
    search: bool = True
    """Run the threshold search and the local search over histograms (shares of the budget,
    [`plan.AuditPlan`][dpaudit.auditor.planning.plan.AuditPlan], ``live.LOCAL_SHARE``) for pairs
    where the output changes."""
    restrict: bool = False
    """Screen only the given ``counts``/``pairs`` (the result says so)."""
    counts: Any = None
    """A histogram whose neighbours are added to the candidate pairs."""
    pairs: Any = None
    """Explicit ``[(counts, counts2), ...]`` added to the candidates (checked against the
    relation); each is confirmed, up to ``keep`` of them, screening choosing among them when there
    are more ([`slots.with_named_pairs`][dpaudit.auditor.search.slots.with_named_pairs])."""
    power_factor: float = DEFAULT_POWER_FACTOR
    """PASSED needs a detectable ε <= power_factor × the claimed ε and a detectable δ <=
    power_factor × the claimed δ (each at detection probability 0.9; default
    ``result.DEFAULT_POWER_FACTOR``, 1.25). Confirmation stops at the first of its looks where a
    violation is confirmed or this power is reached
    ([`pipeline.confirm_in_looks`][dpaudit.auditor.run.pipeline.confirm_in_looks])."""
    looks: int = 6
    """Looks of the sequential confirmation (cumulative sizes doubling up to where one pair alone
    would spend confirmation's share, α spent evenly over them); 1 is one fixed-size confirmation
    at the full level, as an offline plan does."""
    epsilon_only: bool = False
    """Accept a pass on ε alone when the budget cannot resolve the claimed δ (recorded in the
    result; without it such an audit is INCONCLUSIVE for δ)."""
    refine: bool = False
    """Spend the budget left after a first audit (on about a third of a large budget, half of a
    small one: [`refine.first_share`][dpaudit.auditor.run.refine.first_share]) on one fresh
    estimate, at the full ``alpha``, of the witness that audit chose; verdict, bounds and power are
    then those of that one event, the first audit's summary is kept in ``evidence["refine"]``
    ([`refine`][dpaudit.auditor.run.refine]). Not for releases of real values."""
    grey_delta: bool = False
    """The grey-box δ stage holds its share of ``alpha`` (set by the runner, not a keyword:
    [`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage])."""

    def __post_init__(self):
        require_positive_int("workers", self.workers)
        require_nonnegative_int("seed", self.seed)
        require_positive_int("max_pairs", self.max_pairs)
        if self.domain_size is not None:
            require_positive_int("domain_size", self.domain_size)
        if not (isinstance(self.power_factor, (int, float)) and self.power_factor >= 1):
            raise ValueError(f"power_factor must be a number >= 1, got {self.power_factor!r}")
        self.plan()

    def check_design(self, mechanism) -> None:
        """Refuse a design ``mechanism`` cannot be audited under, naming the argument.

        The histograms' items (``domain_size``, else the length of ``counts``, else the
        default domain) must be at least the ``k`` the mechanism selects, and ``counts``
        must have ``domain_size`` items when both are given.
        """
        from dpaudit.neighbours.candidates import default_domain, public_int

        counts = None if self.counts is None else np.asarray(self.counts)
        if counts is not None and self.domain_size is not None and len(counts) != self.domain_size:
            raise ValueError(
                f"counts has {len(counts)} items but domain_size is {self.domain_size}; "
                "give one, or make them agree"
            )
        if self.domain_size is not None:
            d, name = int(self.domain_size), "domain_size"
        elif counts is not None:
            d, name = len(counts), "counts"
        else:
            d, name = default_domain(mechanism), "the default domain"
        k = public_int(mechanism, "k")
        if k is not None and k > d:
            raise ValueError(
                f"{name}: {d} items, fewer than the k={k} the mechanism selects; "
                f"give at least {k} items"
            )

    def plan(self) -> AuditPlan:
        """Budgets and seed streams of the audit."""
        return AuditPlan(
            samples=self.samples,
            seed=int(self.seed),
            alpha=float(self.alpha),
            keep=self.keep,
            events_per_pair=self.events_per_pair,
            chunk=self.chunk,
            looks=self.looks,
            grey_delta=bool(self.grey_delta),
        )

    @property
    def searches(self) -> bool:
        """Whether the threshold search runs (never on the given pairs only)."""
        return bool(self.search) and not self.restrict

    def for_mechanism(self, mechanism) -> AuditOptions:
        """These options with the mechanism's preferred chunk when the default was kept.

        Per-call functions sample in small chunks, so that workers share them.
        """
        preferred = getattr(mechanism, "preferred_chunk", None)
        if self.chunk == DEFAULT_CHUNK and preferred:
            return dataclasses.replace(self, chunk=int(preferred))
        return self

    def plan_fields(self) -> dict:
        """The options that determine the audit's samples (the checkpoint's plan key, and the
        plan ``dpaudit recheck`` derives the level of the bounds from:
        ``dpaudit.levels``), ``refine`` ([`refine`][dpaudit.auditor.run.refine]) and ``grey_delta``
        (the α share of [`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]) included."""
        counts, pairs = self.counts, self.pairs
        return {
            "refine": bool(self.refine),
            "grey_delta": bool(self.grey_delta),
            "samples": int(self.samples),
            "seed": int(self.seed),
            "alpha": float(self.alpha),
            "keep": int(self.keep),
            "max_pairs": int(self.max_pairs),
            "events_per_pair": int(self.events_per_pair),
            "chunk": int(self.chunk),
            "domain_size": self.domain_size,
            "search": bool(self.search),
            "looks": int(self.looks),
            "restrict": bool(self.restrict),
            "counts": None if counts is None else [int(c) for c in np.asarray(counts)],
            "pairs": None
            if pairs is None
            else [[list(map(int, a)), list(map(int, b))] for a, b in map(_pair_tuple, pairs)],
        }
