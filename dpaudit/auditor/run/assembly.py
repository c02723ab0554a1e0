"""The last phase of an audit: its evidence (the options a rerun needs, the grey-box view, the
resume file) and the [`AuditResult`][dpaudit.auditor.results.result.AuditResult], built by
[`AuditResult.from_summary`][dpaudit.auditor.results.result.AuditResult.from_summary]."""

from __future__ import annotations

import time

from ..confirm.confirmation import summarise
from ..confirm.curves import curve_evidence
from ..greybox.delta_stage import with_grey_delta
from ..greybox.scan import GreyBoxScan, scan_pairs
from ..results.evidence import audit_evidence, rerun_options
from ..results.result import AuditResult
from ..sources.subprocess_mechanism import SubprocessMechanism
from .execution import AuditRun
from .preparation import PreparedAudit
from .request import AuditRequest
from .samplers import resume_evidence

__all__ = ["assemble"]


def _extra_evidence(request: AuditRequest, prepared: PreparedAudit, run: AuditRun) -> dict:
    """The result's evidence beyond the record of
    [`evidence.audit_evidence`][dpaudit.auditor.results.evidence.audit_evidence]: the caller's
    entries, a seconds budget's calibration, the confirmation's looks (the level its bounds were
    computed at, for recheck), a curve claim's most violated point, the options (everything
    `dpaudit recheck --rerun` needs to repeat this audit from its spec) and the resume file."""
    given = request.evidence or {}
    extra = {k: v for k, v in given.items() if k not in ("confirmation_looks", "refine")}
    extra.update(prepared.calibration)
    findings = run.findings
    if findings is not None and findings.looks is not None:
        extra["confirmation_looks"] = findings.looks
    curve = curve_evidence(() if findings is None else findings.witnesses, prepared.target.claim)
    if curve is not None:
        extra["claim_curve"] = curve
    rerun = rerun_options(
        prepared.options.plan_fields(),
        request.options.power_factor,
        request.claim,
        prepared.target.claim,
        request.neighbours,
        request.width,
        request.values,
        request.batched,
        request.name,
        request.options.epsilon_only,
        bool(request.black_box),
    )
    return {**extra, "options": rerun, **resume_evidence(run.store, run.executor)}


def _grey_box_scan(request: AuditRequest, prepared: PreparedAudit, run: AuditRun) -> GreyBoxScan:
    """The grey-box view ([`greybox.scan`][dpaudit.auditor.greybox.scan]): the confirmed pairs,
    then the candidates, each run coupled; or why it did not run."""
    mechanism = prepared.target.mechanism
    if request.black_box:
        return GreyBoxScan(0, 0, skipped="--black-box: the mechanism was sampled as a black box")
    if isinstance(mechanism, SubprocessMechanism):
        return GreyBoxScan(0, 0, skipped="a --command child draws in its own process")
    if not getattr(mechanism, "seeded_by_rng", True):
        return GreyBoxScan(0, 0, skipped="the mechanism cannot be seeded (seeded_by_rng = False)")
    if run.findings is None:
        return GreyBoxScan(0, 0, skipped="the audit was interrupted")
    if not run.source.replay_checked:
        return GreyBoxScan(0, 0, skipped="the audit drew nothing")
    pairs = [*run.findings.witnesses, *run.candidates]
    return scan_pairs(mechanism, pairs, seed=int(request.options.seed))


def _evidence(request: AuditRequest, prepared: PreparedAudit, run: AuditRun) -> dict:
    """The evidence block of the result."""
    extra = _extra_evidence(request, prepared, run)
    extra["greybox"] = _grey_box_scan(request, prepared, run).to_dict()
    if run.grey is not None:
        extra["greybox"]["delta"] = run.grey
    if run.refined is not None:
        extra["refine"] = run.refined
    seed = int(request.options.seed)
    return audit_evidence(prepared.target.mechanism, prepared.relation, seed, run.executor, extra)


def assemble(
    request: AuditRequest, prepared: PreparedAudit, run: AuditRun, started: float
) -> AuditResult:
    """The [`AuditResult`][dpaudit.auditor.results.result.AuditResult] of the audit
    (``run.findings`` None: interrupted, no witness); ``started``: its ``time.perf_counter()``."""
    evidence = _evidence(request, prepared, run)
    options, declared = prepared.options, prepared.target.claim
    witnesses = () if run.findings is None else run.findings.witnesses
    grey = (evidence.get("greybox") or {}).get("delta")
    return AuditResult.from_summary(
        with_grey_delta(summarise(witnesses, declared, options.power_factor), grey, declared),
        mechanism=prepared.target.label,
        claim=declared,
        relation=prepared.relation,
        alpha=options.alpha,
        witnesses=witnesses,
        samples=run.source.samples,
        seconds=time.perf_counter() - started,
        pairs_screened=len(run.candidates),
        seed=int(options.seed),
        interrupted=run.findings is None,
        power_factor=options.power_factor,
        restricted=options.restrict,
        evidence=evidence,
        epsilon_only=options.epsilon_only,
        samples_requested=options.samples,
    )
