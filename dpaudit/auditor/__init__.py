"""The empirical auditor: a mechanism seen only through its sampler.

``dpaudit.audit(mech, ...)`` and ``dpaudit.audit(f, claim=(ε, δ), width=w, ...)``
(the function :func:`dpaudit.auditor.runner.audit`, re-exported at the top level)
return an :class:`AuditResult`. This package, ``dpaudit.auditor``, holds
``runner``, ``statistics``, ``events``, ``sampling``, ``blackbox``, ``result``.

Roles (DESIGN.md, "How the auditor is organised"): pair generators live in
:mod:`dpaudit.neighbours` (families and the threshold search); testers are
:mod:`.screening` and :mod:`.confirmation` over :mod:`.events` and
:mod:`.statistics` (Clopper–Pearson bounds, power); :mod:`.plan` fixes budgets and
seed streams, an executor (:mod:`.executors`) draws the samples, and
:mod:`.runner` strings the phases together.
"""

from .blackbox import BatchedBlackBox, BlackBox, as_auditable, batched, make_claim, validate_batch
from .events import BottomAt, Event, ItemAt, ItemOutput, LengthAtLeast, OutcomeSet, event_from_dict
from .executors import LocalExecutor
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
    "SessionBlackBox",
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
    "sample_counts",
    "screen",
    "session_transcript_mechanism",
    "validate_batch",
]
