"""The auditor's door: [`audit`][dpaudit.auditor.run.runner.audit] runs its three phases, each
a named, frozen value handed to the next: the request ([`request`][dpaudit.auditor.run.request]),
the prepared audit ([`preparation`][dpaudit.auditor.run.preparation]: the mechanism as the
auditor sees it, its options and budget), the run ([`execution`][dpaudit.auditor.run.execution]:
sampling, through the pipeline [`pipeline`][dpaudit.auditor.run.pipeline]) and the result
([`assembly`][dpaudit.auditor.run.assembly]).

Roles (DESIGN.md, "How the auditor is organised"; [`interfaces`][dpaudit.auditor.interfaces]): pair
sources in [`dpaudit.neighbours.candidates`][dpaudit.neighbours.candidates]; the tester
[`confirmation.confirm_events`][dpaudit.auditor.confirm.confirmation.confirm_events] after
[`screening`][dpaudit.auditor.search.screening]; the plan ([`plan`][dpaudit.auditor.planning.plan]) carried out by
an executor ([`executors`][dpaudit.auditor.sources.executors],
[`dask_executor`][dpaudit.auditor.sources.dask_executor]) behind the live sample source
([`live`][dpaudit.auditor.run.live]). A violation is reported only when a confirmed bound exceeds the
claim; a pass only when the audit had power ([`result`][dpaudit.auditor.results.result]).
"""

from __future__ import annotations

import time

from dpaudit.neighbours.candidates import candidate_pairs

from ..planning.options import DEFAULT_SAMPLES
from ..planning.plan import AuditPlan
from ..results.power import DEFAULT_POWER_FACTOR
from ..results.result import AuditResult
from ..search.screening import score_pairs
from ..sources.blackbox import as_auditable
from ..sources.executors import LocalExecutor
from ..sources.sampling import DEFAULT_CHUNK
from .assembly import assemble
from .execution import execute
from .live import LiveSource
from .preparation import prepare
from .request import AuditRequest
from .schedule import histograms_of

__all__ = ["DEFAULT_SAMPLES", "audit", "candidate_pairs", "screen"]


def screen(mech, pairs, samples_per_pair=20_000, keep=3, seed=0, alpha=0.05, claim=None):
    """Score ``pairs`` on few samples each; return the ``keep`` best as ``[(pair, ε estimate)]``."""
    target = as_auditable(mech, claim)
    mech, declared = target.mechanism, target.claim
    plan = AuditPlan(samples=max(1000, samples_per_pair), seed=seed, alpha=alpha, keep=keep)
    executor = LocalExecutor(mech, 1, DEFAULT_CHUNK)
    try:
        pooled = LiveSource(plan, executor).draw(
            "screen", 0, histograms_of(pairs), samples_per_pair
        )
    finally:
        executor.close()
    scored = []
    for pair, cands in zip(
        pairs, score_pairs(pairs, pooled, samples_per_pair, alpha / 6, declared)
    ):
        scored.append((pair, max((c[0] for c in cands), default=0.0)))
    scored.sort(key=lambda t: -t[1])
    return scored[:keep]


def audit(
    mechanism,
    *,
    claim=None,
    width=None,
    counts=None,
    pairs=None,
    restrict=False,
    neighbours=None,
    samples=None,
    alpha=0.05,
    seed=0,
    workers=1,
    keep=3,
    max_pairs=600,
    events_per_pair=3,
    chunk=DEFAULT_CHUNK,
    domain_size=None,
    search=True,
    power_factor=DEFAULT_POWER_FACTOR,
    progress=False,
    name=None,
    executor=None,
    client=None,
    resume=None,
    batched=False,
    values=0,
    evidence=None,
    budget=None,
    epsilon_only=False,
    looks=6,
    refine=False,
    black_box=False,
) -> AuditResult:
    """Audit ``mechanism`` through its sampler; return an [`AuditResult`][dpaudit.auditor.results.result.AuditResult].

    ``mechanism``: a mechanism (``sample(counts, size, rng)`` and ``claim``) or a plain callable
    (give ``claim`` and ``width``). Every keyword is documented on the field of its name: the
    options at [`AuditOptions`][dpaudit.auditor.planning.options.AuditOptions], the rest (the
    claim, how to wrap a callable, ``samples``/``budget``, the sampler, the evidence, ``black_box``)
    at [`AuditRequest`][dpaudit.auditor.run.request.AuditRequest].
    """
    request = AuditRequest.from_arguments(locals())  # every keyword, validated, by name
    started = time.perf_counter()
    prepared = prepare(request)
    return assemble(request, prepared, execute(prepared, request), started)
