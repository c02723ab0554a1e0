"""The budget of one live audit: what was asked for, what a seconds budget buys, the
shares of the stages, and the refusal of a budget too small for a valid audit.

[`runner.audit`][dpaudit.auditor.run.runner.audit] takes ``samples=`` or ``budget=``
([`plan.Budget`][dpaudit.auditor.planning.plan.Budget]); a seconds budget becomes samples by a timed pilot
([`samples_for_seconds`][dpaudit.auditor.run.budgeting.samples_for_seconds]), recorded in the result's
evidence.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from dpaudit.neighbours.candidates import default_domain, given_family
from mechanisms.claims import AddRemoveUser, BoundedChange

from ..planning.options import DEFAULT_SAMPLES, AuditOptions
from ..planning.plan import MIN_PER_HISTOGRAM, AuditPlan, Budget
from ..values import value_width_of
from . import live
from .live import with_local_search

__all__ = [
    "asked_budget",
    "budgeted",
    "check_minimum",
    "local_runs",
    "minimum_budget",
    "samples_for_seconds",
    "stage_budgets",
]


def local_runs(options: AuditOptions, relation, values: bool = False) -> bool:
    """Whether the local search runs (and so takes its share of the budget).

    It walks add/remove and bounded-change pairs only, and scores the released items
    only, blind to a loss in the values: for a release with real ``values`` it does not
    run, and its share stays with confirmation.
    """
    return options.searches and isinstance(relation, (AddRemoveUser, BoundedChange)) and not values


def stage_budgets(
    plan: AuditPlan, n_candidates: int, options: AuditOptions, relation, values: bool = False
) -> dict:
    """The samples of each stage for ``n_candidates`` pairs, with the local search's share
    (none for a release with real ``values``:
    [`local_runs`][dpaudit.auditor.run.budgeting.local_runs])."""
    budget = plan.budgets(n_candidates, options.searches)
    return with_local_search(budget, plan.samples, local_runs(options, relation, values))


def asked_budget(samples, budget) -> Budget:
    """The budget asked for: ``samples=`` or ``budget=`` (one of them), else the default."""
    if budget is not None and samples is not None:
        raise ValueError("give budget= or samples= (the same budget), not both")
    return Budget.parse(
        budget if budget is not None else (DEFAULT_SAMPLES if samples is None else samples)
    )


def samples_for_seconds(mech, seconds, options: AuditOptions) -> tuple[int, int]:
    """Samples an audit of ``seconds`` can afford: a timed pilot on a flat histogram.

    The pilot's rate (in this process, times the workers) fixes the budget; overheads
    (screening's many small draws, events) take about a third, hence the factor 0.6.
    Returns ``(samples, pilot samples drawn)``. The result records the samples chosen.
    """
    d = options.domain_size or default_domain(mech)
    counts = np.full(d, 3, dtype=np.int64)
    rng = np.random.default_rng(options.plan().seed_for("calibrate", 0, 0))
    size, spent, drawn = 1_000, 0.0, 0
    while spent < 0.25 and drawn < 5_000_000:
        start = time.perf_counter()
        mech.sample(counts, size, rng)
        spent += time.perf_counter() - start
        drawn += size
        size *= 2
    rate = drawn / max(spent, 1e-9)
    return max(int(rate * float(seconds) * 0.6 * options.workers), 1000), drawn


def budgeted(asked: Budget, mech, options: AuditOptions) -> tuple[AuditOptions, dict]:
    """``options`` with the samples the budget buys; the evidence of a seconds budget."""
    if asked.seconds is None:
        return options, {}
    samples, pilot = samples_for_seconds(mech, asked.seconds, options)
    calibration = {"seconds": asked.seconds, "samples": samples, "pilot_samples": pilot}
    return dataclasses.replace(options, samples=samples), {"budget": calibration}


def minimum_budget(options: AuditOptions, mech, relation) -> int:
    """The smallest budget a valid audit of ``keep`` pairs needs under ``options``."""
    # The given pairs are built (and checked against the relation) before any sampling.
    given = len(
        given_family(options.counts, options.pairs, relation).pairs(np.random.default_rng(0))
    )
    values = bool(value_width_of(mech))
    local = live.LOCAL_SHARE if local_runs(options, relation, values) else 0.0
    return options.plan().minimum_samples(
        given if options.restrict else None, options.searches, values, local
    )


def check_minimum(options: AuditOptions, mech, relation) -> None:
    """Refuse a budget too small to select and confirm ``keep`` pairs, with the minimum."""
    plan = options.plan()
    minimum = minimum_budget(options, mech, relation)
    if plan.samples < minimum:
        raise ValueError(
            f"samples={plan.samples:,} is below the {minimum:,} a valid audit of "
            f"keep={plan.keep} pairs needs ({MIN_PER_HISTOGRAM} samples per histogram to "
            "select and to confirm events): raise samples (or the budget), or lower keep"
        )
