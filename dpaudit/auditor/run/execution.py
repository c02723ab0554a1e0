"""The second phase of an audit: sampling. The grey-box δ stage, the candidate pairs, the
pipeline ([`pipeline`][dpaudit.auditor.run.pipeline]) and a refined audit's second estimate, on
the sampler of [`samplers`][dpaudit.auditor.run.samplers], closed when done or interrupted."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.neighbours.candidates import candidate_pairs, thinned

from ..greybox.delta_stage import resolves_delta, run_grey_delta
from ..planning.options import AuditOptions
from ..planning.plan import SCREEN_MIN_PER_HISTOGRAM
from ..search.screening import screen_rounds
from .budgeting import stage_budgets
from .live import LOCAL_PER_HISTOGRAM, LiveSchedule, LiveSource
from .pipeline import Findings, run_pipeline
from .preparation import PreparedAudit
from .refine import refine_findings
from .request import AuditRequest
from .samplers import close_sampler, open_sampler
from .schedule import histograms_of

__all__ = ["AuditRun", "audit_candidates", "execute"]


@dataclass(frozen=True)
class AuditRun:
    """What sampling left: the source (and what it drew), the pairs screened, the findings."""

    source: LiveSource
    """The live sample source, with the samples it drew."""
    candidates: list
    """The candidate pairs screened (those built so far when interrupted)."""
    findings: Findings | None
    """The pipeline's findings (None: interrupted, no witness)."""
    grey: dict | None
    """The grey-box δ stage's record (None: it did not run)."""
    refined: dict | None
    """The first audit's summary when the audit was refined (else None)."""
    executor: Any
    """The executor that drew the samples (closed if it was built here)."""
    store: Any
    """The chunk store of ``resume=`` (closed), or None."""


def _fit_screening(candidates, screen_budget: int, keep: int, rng) -> list:
    """Candidates thinned (targeted families first) until screening gives each histogram
    ``SCREEN_MIN_PER_HISTOGRAM`` samples in every round within ``screen_budget``."""
    while len(candidates) > keep:
        rounds = screen_rounds(len(candidates), keep)
        per = screen_budget // rounds // len(histograms_of(candidates))
        if per >= SCREEN_MIN_PER_HISTOGRAM:
            break
        candidates = thinned(candidates, max(keep, int(len(candidates) * 0.8)), rng)
    return candidates


def audit_candidates(mechanism, relation, declared, options: AuditOptions, source, pair_rng):
    """The candidate pairs, drawn on the pair stream (spawn key 99) and the search streams."""
    budget = stage_budgets(
        source.plan, options.max_pairs, options, relation, bool(source.value_width)
    )
    return candidate_pairs(
        mechanism,
        relation,
        counts=options.counts,
        pairs=options.pairs,
        restrict=options.restrict,
        domain_size=options.domain_size,
        max_pairs=options.max_pairs,
        rng=pair_rng,
        draw=source.search_draw,
        search_samples=budget["search"],
        local_draw=source.local_draw,
        local_samples=budget["local"],
        local_per_histogram=LOCAL_PER_HISTOGRAM,
        local_seed=source.local_seed,
        delta=float(declared.delta),
    )


def _schedule(candidates, options: AuditOptions, relation, source: LiveSource, rng, resolved):
    """The candidates screening can afford, and the live schedule of the audit (``resolved``: the
    grey-box δ stage resolved δ, so confirmation does not chase δ's power)."""
    plan = source.plan
    values = bool(source.value_width)
    budget = stage_budgets(plan, len(candidates), options, relation, values)
    schedule = LiveSchedule(
        plan,
        budget,
        len(candidates),
        options.power_factor,
        options.epsilon_only or resolved,
        bool(source.value_width),
    )
    fitted = _fit_screening(candidates, schedule.screen_budget, plan.keep, rng)
    if len(fitted) == len(candidates):
        return candidates, schedule
    budget = stage_budgets(plan, len(fitted), options, relation, values)
    return fitted, dataclasses.replace(schedule, budget=budget, n_candidates=len(fitted))


def _search_and_confirm(source: LiveSource, prepared: PreparedAudit, resolved: bool):
    """Candidates, then the pipeline: ``(candidates, findings or None if interrupted)``.

    On Ctrl-C the pairs built so far are counted and no witness is reported.
    """
    target, relation, options = prepared.target, prepared.relation, prepared.first
    candidates: list = []
    pair_rng = np.random.default_rng(np.random.SeedSequence(int(options.seed), spawn_key=(99,)))
    try:
        candidates = audit_candidates(
            target.mechanism, relation, target.claim, options, source, pair_rng
        )
        candidates, schedule = _schedule(candidates, options, relation, source, pair_rng, resolved)
        return candidates, run_pipeline(source, candidates, target.claim, schedule)
    except KeyboardInterrupt:
        return candidates, None


def _grey_delta(prepared: PreparedAudit) -> dict:
    """The grey-box δ stage's record ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]).

    It runs first, on its own streams: whether it resolved δ steers the confirmation's stopping
    rule (valid at any stopping time, the looks being α-spending) and nothing else.
    """
    options = prepared.options
    return run_grey_delta(
        prepared.target.mechanism,
        options.plan(),
        prepared.relation,
        prepared.target.claim,
        counts=options.counts,
        domain_size=options.domain_size,
    )


def execute(prepared: PreparedAudit, request: AuditRequest) -> AuditRun:
    """Sample ``prepared`` on the sampler ``request`` asks for; Ctrl-C ends it with no witness."""
    target, options = prepared.target, prepared.options
    executor, owned, store = open_sampler(
        target.mechanism,
        target.claim,
        prepared.relation,
        options,
        request.executor,
        request.client,
        request.resume,
        request.progress,
    )
    source = LiveSource(prepared.first.plan(), executor, target.mechanism)
    if request.black_box:
        source.replay_checked = True  # --black-box: the replay check is grey-box, skipped too
    candidates: list = []
    refined, grey, findings = None, None, None
    try:
        if options.grey_delta:
            grey = {"skipped": "the audit was interrupted"}
            grey = _grey_delta(prepared)
        resolved = resolves_delta(grey, target.claim, options.power_factor)
        candidates, findings = _search_and_confirm(source, prepared, resolved)
        if prepared.refining is not None and findings is not None:
            alpha = options.plan().blackbox_alpha
            findings, refined = refine_findings(
                source, findings, target.claim, prepared.refining, alpha
            )
    except KeyboardInterrupt:
        findings = None
    finally:
        close_sampler(executor if owned else None, store)
    return AuditRun(source, candidates, findings, grey, refined, executor, store)
