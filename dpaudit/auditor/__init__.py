"""The empirical auditor: a mechanism seen only through its sampler.

``dpaudit.audit(mech, ...)`` and ``dpaudit.audit(f, claim=(ε, δ), width=w, ...)``
(the function :func:`dpaudit.auditor.runner.audit`, re-exported at the top level)
return an :class:`AuditResult`. This package, ``dpaudit.auditor``, holds it.

Roles (DESIGN.md, "How the auditor is organised"), written down as Protocols in
:mod:`.interfaces`: pair sources (:mod:`dpaudit.neighbours.candidates`: families that
compose with ``|`` and know whether they are targeted); sample sources — an executor
(:mod:`.executors`, :mod:`.dask_executor`) behind :class:`.live.LiveSource`, or outcome
files (:class:`.offline.FileDraws`); testers (:func:`.confirmation.confirm_events`, after
:mod:`.screening` over :mod:`.events` and :mod:`.statistics`). :mod:`.plan` fixes budgets
and seed streams, :mod:`.options` the validated options, and :mod:`.pipeline` runs
search -> screen -> select -> confirm over any sample source; :mod:`.runner` and
:func:`.offline.audit_from_samples` build a source and run it, and
:meth:`AuditResult.from_summary` assembles every result.
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
