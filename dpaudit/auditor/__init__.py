"""The empirical auditor: a mechanism seen only through its sampler.

``dpaudit.audit(mech, ...)`` and ``dpaudit.audit(f, claim=(ε, δ), width=w, ...)``
(the function [`dpaudit.auditor.runner.audit`][dpaudit.auditor.runner.audit], re-exported at the top
level) return an [`AuditResult`][dpaudit.auditor.AuditResult]. This package, ``dpaudit.auditor``,
holds it.

Roles (DESIGN.md, "How the auditor is organised"), written down as Protocols in
[`interfaces`][dpaudit.auditor.interfaces]: pair sources
([`dpaudit.neighbours.candidates`][dpaudit.neighbours.candidates]: families that compose with ``|``
and know whether they are targeted); sample sources — an executor
([`executors`][dpaudit.auditor.executors], [`dask_executor`][dpaudit.auditor.dask_executor]) behind
[`live.LiveSource`][dpaudit.auditor.live.LiveSource], or outcome files
([`offline.FileDraws`][dpaudit.auditor.offline.FileDraws]); testers
([`confirmation.confirm_events`][dpaudit.auditor.confirmation.confirm_events], after
[`screening`][dpaudit.auditor.screening] over [`events`][dpaudit.auditor.events] and
[`statistics`][dpaudit.auditor.statistics]). [`plan`][dpaudit.auditor.plan] fixes budgets and seed
streams, [`options`][dpaudit.auditor.options] the validated options, and
[`pipeline`][dpaudit.auditor.pipeline] runs search -> screen -> select -> confirm over any sample
source; [`runner`][dpaudit.auditor.runner] and
[`offline.audit_from_samples`][dpaudit.auditor.offline.audit_from_samples] build a source and run
it, and [`AuditResult.from_summary`][dpaudit.auditor.AuditResult.from_summary] assembles every
result.
"""

from .blackbox import BatchedBlackBox, BlackBox, as_auditable, batched, make_claim, validate_batch
from .events import BottomAt, Event, ItemAt, ItemOutput, LengthAtLeast, OutcomeSet, event_from_dict
from .executors import LocalExecutor
from .interfaces import PairSource, SampleSource, Tester
from .options import AuditOptions
from .pipeline import run_pipeline
from .plan import AuditPlan, Budget
from .result import INCONCLUSIVE, PASSED, VIOLATION, AuditResult, Witness
from .runner import DEFAULT_SAMPLES, audit, screen
from .sampling import count_batch, sample_counts
from .sequential import LookSchedule
from .sessions import SessionBlackBox, audit_session, session_transcript_mechanism
from .statistics import (
    delta_lower_bound,
    detectable_delta,
    detectable_epsilon,
    epsilon_lower_bound,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)

__all__ = [
    "DEFAULT_SAMPLES",
    "INCONCLUSIVE",
    "PASSED",
    "VIOLATION",
    "AuditOptions",
    "AuditPlan",
    "AuditResult",
    "BatchedBlackBox",
    "BlackBox",
    "BottomAt",
    "Budget",
    "Event",
    "ItemAt",
    "ItemOutput",
    "LengthAtLeast",
    "LocalExecutor",
    "LookSchedule",
    "OutcomeSet",
    "PairSource",
    "SampleSource",
    "SessionBlackBox",
    "Tester",
    "Witness",
    "as_auditable",
    "audit",
    "audit_session",
    "batched",
    "count_batch",
    "delta_lower_bound",
    "detectable_delta",
    "detectable_epsilon",
    "epsilon_lower_bound",
    "event_bounds",
    "event_from_dict",
    "make_claim",
    "one_sided_lower",
    "one_sided_upper",
    "run_pipeline",
    "sample_counts",
    "screen",
    "session_transcript_mechanism",
    "validate_batch",
]
