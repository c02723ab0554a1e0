"""The empirical auditor: a mechanism seen only through its sampler.

``dpaudit.audit(mech, ...)`` and ``dpaudit.audit(f, claim=(ε, δ), width=w, ...)``
(the function :func:`dpaudit.auditor.runner.audit`, re-exported at the top level)
return an :class:`AuditResult`. This package, ``dpaudit.auditor``, holds
``runner``, ``statistics``, ``events``, ``sampling``, ``blackbox``, ``result``.

Roles (DESIGN.md, "How the auditor is organised"): pair generators live in
:mod:`dpaudit.neighbours.pairs`; testers are :mod:`.events` (candidate events)
plus :mod:`.statistics` (Clopper–Pearson bounds); the runner is :mod:`.runner`.
"""

from .blackbox import BlackBox, as_auditable, make_claim
from .events import BottomAt, Event, ItemAt, ItemOutput, LengthAtLeast, OutcomeSet
from .result import AuditResult, Witness
from .runner import DEFAULT_SAMPLES, audit, screen
from .sampling import count_batch, sample_counts
from .sessions import SessionBlackBox, audit_session, session_transcript_mechanism
from .statistics import (
    delta_lower_bound,
    epsilon_lower_bound,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)

__all__ = [
    "DEFAULT_SAMPLES",
    "AuditResult",
    "BlackBox",
    "BottomAt",
    "Event",
    "ItemAt",
    "ItemOutput",
    "LengthAtLeast",
    "OutcomeSet",
    "SessionBlackBox",
    "Witness",
    "as_auditable",
    "audit",
    "audit_session",
    "count_batch",
    "delta_lower_bound",
    "epsilon_lower_bound",
    "event_bounds",
    "make_claim",
    "one_sided_lower",
    "one_sided_upper",
    "sample_counts",
    "screen",
    "session_transcript_mechanism",
]

