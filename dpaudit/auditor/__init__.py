"""The empirical auditor: a mechanism seen only through its sampler.

``dpaudit.audit(mech, ...)`` and ``dpaudit.audit(f, claim=(ε, δ), width=w, ...)`` (the function
[`dpaudit.auditor.run.runner.audit`][dpaudit.auditor.run.runner.audit], re-exported at the top
level) return an [`AuditResult`][dpaudit.auditor.AuditResult]. This package, ``dpaudit.auditor``,
holds it, one folder per role (the roles written down as Protocols in
[`interfaces`][dpaudit.auditor.interfaces]):

* [`run`][dpaudit.auditor.run]: the door ([`runner`][dpaudit.auditor.run.runner]), its budgets,
  sampler and [`live.LiveSource`][dpaudit.auditor.run.live.LiveSource], and
  [`pipeline`][dpaudit.auditor.run.pipeline], which runs search -> screen -> select -> confirm
  over any sample source;
* [`planning`][dpaudit.auditor.planning]: the validated [`options`][dpaudit.auditor.planning.options]
  and the [`plan`][dpaudit.auditor.planning.plan] (budgets and seed streams);
* [`sources`][dpaudit.auditor.sources]: mechanisms as samplers and the executors that draw from
  them ([`executors`][dpaudit.auditor.sources.executors],
  [`dask_executor`][dpaudit.auditor.sources.dask_executor]);
* [`search`][dpaudit.auditor.search]: [`screening`][dpaudit.auditor.search.screening] of candidate
  events;
* [`confirm`][dpaudit.auditor.confirm]: the testers
  ([`confirmation.confirm_events`][dpaudit.auditor.confirm.confirmation.confirm_events]);
* [`bounds`][dpaudit.auditor.bounds]: [`statistics`][dpaudit.auditor.bounds.statistics], sequential
  looks, weighted bounds;
* [`results`][dpaudit.auditor.results]: the result, its text and its versioned format;
  [`AuditResult.from_summary`][dpaudit.auditor.AuditResult.from_summary] assembles every result;
* [`values`][dpaudit.auditor.values]: events ([`outcome_events`][dpaudit.auditor.values.outcome_events])
  and the encoders of released values; [`greybox`][dpaudit.auditor.greybox]: what a grey box adds;
  [`offline`][dpaudit.auditor.offline]: outcome files as a source
  ([`offline.audit_from_samples`][dpaudit.auditor.offline.audit_from_samples]).

Pair sources are [`dpaudit.neighbours.candidates`][dpaudit.neighbours.candidates]: families that
compose with ``|`` and know whether they are targeted.
"""

from .bounds.sequential import LookSchedule
from .bounds.statistics import (
    delta_lower_bound,
    detectable_delta,
    detectable_epsilon,
    epsilon_lower_bound,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)
from .interfaces import PairSource, SampleSource, Tester
from .planning.options import AuditOptions
from .planning.plan import AuditPlan, Budget
from .results.result import INCONCLUSIVE, PASSED, VIOLATION, AuditResult, Witness
from .run.pipeline import run_pipeline
from .run.runner import DEFAULT_SAMPLES, audit, screen
from .run.sessions import SessionBlackBox, audit_session, session_transcript_mechanism
from .sources.blackbox import (
    BatchedBlackBox,
    BlackBox,
    as_auditable,
    batched,
    make_claim,
    validate_batch,
)
from .sources.executors import LocalExecutor
from .sources.sampling import count_batch, sample_counts
from .values.outcome_events import (
    BottomAt,
    Event,
    ItemAt,
    ItemOutput,
    LengthAtLeast,
    OutcomeSet,
    event_from_dict,
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
