"""The auditor's runner: [`audit`][dpaudit.auditor.run.runner.audit] validates, fixes its budget
([`budgeting`][dpaudit.auditor.run.budgeting]), opens its sampler
([`samplers`][dpaudit.auditor.run.samplers]), builds its sample source and candidates, and runs the
pipeline ([`pipeline`][dpaudit.auditor.run.pipeline]).

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

import dataclasses
import time

import numpy as np

from dpaudit.neighbours.candidates import candidate_pairs, thinned
from mechanisms.claims import RELATIONS

from ..confirm.confirmation import curve_evidence, summarise
from ..greybox.delta_stage import (
    plans_grey_delta,
    resolves_delta,
    run_grey_delta,
    with_grey_delta,
)
from ..greybox.scan import GreyBoxScan, scan_pairs
from ..planning.options import DEFAULT_SAMPLES, AuditOptions
from ..planning.plan import SCREEN_MIN_PER_HISTOGRAM, AuditPlan
from ..results.evidence import audit_evidence, rerun_options
from ..results.result import DEFAULT_POWER_FACTOR, AuditResult
from ..search.screening import score_pairs, screen_rounds
from ..sources.blackbox import as_auditable
from ..sources.executors import LocalExecutor
from ..sources.sampling import DEFAULT_CHUNK
from ..sources.subprocess_mechanism import SubprocessMechanism
from .budgeting import asked_budget, budgeted, check_minimum, stage_budgets
from .live import LOCAL_PER_HISTOGRAM, LiveSchedule, LiveSource
from .pipeline import histograms_of, run_pipeline
from .refine import first_phase, refine_findings
from .samplers import close_sampler, open_sampler, resume_evidence

#: Kept under its old name (the tests of the budget shares import it from here).
_budgets = stage_budgets

__all__ = ["DEFAULT_SAMPLES", "audit", "candidate_pairs", "screen"]


def _relation(neighbours, declared):
    relation = neighbours if neighbours is not None else declared.neighbours
    if not isinstance(relation, RELATIONS):
        raise ValueError(
            f"neighbours must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
        )
    return relation


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


def _candidates(mech, relation, declared, options: AuditOptions, source: LiveSource, pair_rng):
    """The candidate pairs, drawn on the pair stream (spawn key 99) and the search streams."""
    budget = stage_budgets(
        source.plan, options.max_pairs, options, relation, bool(source.value_width)
    )
    return candidate_pairs(
        mech,
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


def _run(source: LiveSource, mech, relation, declared, options: AuditOptions, resolved=False):
    """Candidates, then the pipeline: ``(candidates, findings or None if interrupted)``.

    On Ctrl-C the pairs built so far are counted and no witness is reported.
    """
    candidates: list = []
    pair_rng = np.random.default_rng(np.random.SeedSequence(int(options.seed), spawn_key=(99,)))
    try:
        candidates = _candidates(mech, relation, declared, options, source, pair_rng)
        candidates, schedule = _schedule(candidates, options, relation, source, pair_rng, resolved)
        return candidates, run_pipeline(source, candidates, declared, schedule)
    except KeyboardInterrupt:
        return candidates, None


def _extra_evidence(evidence, findings, calibration, rerun, store, executor, claim) -> dict:
    """The result's evidence beyond the record of
    [`evidence.audit_evidence`][dpaudit.auditor.results.evidence.audit_evidence]: the caller's entries, a
    seconds budget's calibration, the confirmation's looks (the level its bounds were computed at,
    for recheck), a curve claim's most violated point, the options and the resume file."""
    extra = {k: v for k, v in (evidence or {}).items() if k not in ("confirmation_looks", "refine")}
    extra.update(calibration)
    if findings is not None and findings.looks is not None:
        extra["confirmation_looks"] = findings.looks
    curve = curve_evidence(() if findings is None else findings.witnesses, claim)
    if curve is not None:
        extra["claim_curve"] = curve
    return {**extra, "options": rerun, **resume_evidence(store, executor)}


def _grey_box_scan(mech, source: LiveSource, candidates, findings, seed: int, black_box: bool):
    """The grey-box view ([`greybox.scan`][dpaudit.auditor.greybox.scan]): the confirmed pairs,
    then the candidates, each run coupled; or why it did not run."""
    if black_box:
        return GreyBoxScan(0, 0, skipped="--black-box: the mechanism was sampled as a black box")
    if isinstance(mech, SubprocessMechanism):
        return GreyBoxScan(0, 0, skipped="a --command child draws in its own process")
    if not getattr(mech, "seeded_by_rng", True):
        return GreyBoxScan(0, 0, skipped="the mechanism cannot be seeded (seeded_by_rng = False)")
    if findings is None:
        return GreyBoxScan(0, 0, skipped="the audit was interrupted")
    if not source.replay_checked:
        return GreyBoxScan(0, 0, skipped="the audit drew nothing")
    return scan_pairs(mech, [*findings.witnesses, *candidates], seed=seed)


def _grey_delta(mech, options: AuditOptions, relation, declared) -> dict:
    """The grey-box δ stage's record ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]).

    It runs first, on its own streams: whether it resolved δ steers the confirmation's stopping
    rule (valid at any stopping time, the looks being α-spending) and nothing else.
    """
    return run_grey_delta(
        mech,
        options.plan(),
        relation,
        declared,
        counts=options.counts,
        domain_size=options.domain_size,
    )


def _result(label, declared, relation, options, source, candidates, findings, evidence, started):
    """The [`AuditResult`][dpaudit.auditor.results.result.AuditResult] of the audit (``findings`` None: interrupted, no witness)."""
    witnesses = () if findings is None else findings.witnesses
    grey = (evidence.get("greybox") or {}).get("delta")
    return AuditResult.from_summary(
        with_grey_delta(summarise(witnesses, declared, options.power_factor), grey, declared),
        mechanism=label,
        claim=declared,
        relation=relation,
        alpha=options.alpha,
        witnesses=witnesses,
        samples=source.samples,
        seconds=time.perf_counter() - started,
        pairs_screened=len(candidates),
        seed=int(options.seed),
        interrupted=findings is None,
        power_factor=options.power_factor,
        restricted=options.restrict,
        evidence=evidence,
        epsilon_only=options.epsilon_only,
        samples_requested=options.samples,
    )


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
):
    """Audit a mechanism as a black box; return an [`AuditResult`][dpaudit.auditor.results.result.AuditResult].

    Parameters
    ----------
    mechanism : a mechanism (``sample(counts, size, rng)`` and ``claim``), a plain
        callable ``f(counts, rng) -> outcome tuple``, or with ``batched=True`` a callable
        ``f(counts, size, rng) -> (size, width) array`` (then give ``claim`` and ``width``).
    claim : ``(ε, δ)`` or ``(ε, δ, relation)`` to audit instead of ``mechanism.claim``.
    width : longest outcome of a plain callable.
    counts : a histogram whose neighbours are added to the candidate pairs.
    pairs : explicit ``[(counts, counts2), ...]`` added to the candidates (checked
        against the relation); each is confirmed, up to ``keep`` of them, screening
        choosing among them when there are more
        ([`screening.with_named_pairs`][dpaudit.auditor.search.screening.with_named_pairs]).
    restrict : screen only the given ``counts``/``pairs`` (the result says so).
    neighbours : relation to audit under (default: the claim's).
    samples : total budget of mechanism samples, all phases and both sides (default
        ``DEFAULT_SAMPLES``); never exceeded: screening thins the candidate pairs to
        fit it, and a budget too small for a valid audit of ``keep`` pairs is refused
        with the minimum. ``AuditResult.samples`` is what was drawn (at most this).
    budget : the same budget as ``samples`` (give one of them), or wall-clock seconds:
        ``2e7``, ``"2e7"``, ``"60s"`` ([`plan.Budget`][dpaudit.auditor.planning.plan.Budget]; seconds become
        samples by a timed pilot, recorded in the result's evidence).
    looks : looks of the sequential confirmation (cumulative sizes doubling up to where
        one pair alone would spend confirmation's share, α spent evenly over them); 1 is
        one fixed-size confirmation at the full level, as an offline plan does.
    refine : spend the budget left after a first audit (on about a third of a large budget,
        half of a small one: [`refine.first_share`][dpaudit.auditor.run.refine.first_share]) on one
        fresh estimate, at the full ``alpha``, of the witness that audit chose; verdict, bounds and
        power are then those of that one event, the first audit's summary is kept in
        ``evidence["refine"]`` ([`refine`][dpaudit.auditor.run.refine]). Not for releases of real
        values.
    epsilon_only : accept a pass on ε alone when the budget cannot resolve the claimed δ
        (recorded in the result; without it such an audit is INCONCLUSIVE for δ).
    alpha : failure probability; the bounds hold with confidence ``1 − alpha``.
    seed : root seed (an int); same seed, same result, whatever ``workers`` is.
    workers : processes that sample chunks in parallel (ignored with ``executor``).
    keep : pairs carried from screening to selection and confirmation (with a claimed
        δ > 0, one of them is a pair whose support changes and one a pair whose support
        stays: [`screening.with_delta_slot`][dpaudit.auditor.search.screening.with_delta_slot],
        [`screening.with_epsilon_slot`][dpaudit.auditor.search.screening.with_epsilon_slot]).
    max_pairs : cap on the candidate pairs screened (targeted families are kept).
    events_per_pair : events confirmed per kept pair (Bonferroni over all).
    chunk : rows per sampling call (memory is O(chunk · width)).
    domain_size : number of items of the default histograms.
    search : run the threshold search and the local search over histograms (shares of the
        budget, [`plan.AuditPlan`][dpaudit.auditor.planning.plan.AuditPlan], ``live.LOCAL_SHARE``) for pairs
        where the output changes.
    power_factor : PASSED needs a detectable ε <= power_factor × the claimed ε and a
        detectable δ <= power_factor × the claimed δ (each at detection probability 0.9;
        default ``result.DEFAULT_POWER_FACTOR``, 1.25). Confirmation stops at the
        first of its looks where a violation is confirmed or this power is reached
        ([`pipeline.confirm_in_looks`][dpaudit.auditor.run.pipeline.confirm_in_looks]).
    progress : show a tqdm bar on stderr.
    executor : an executor with ``draw(histograms, per_histogram, seeds)`` (default: local).
    client : a ``dask.distributed.Client``: sample on that cluster
        ([`dask_executor`][dpaudit.auditor.sources.dask_executor]); same seed, same result as in-process.
    batched : ``mechanism`` is a batched callable ``f(counts, size, rng)``.
    values : real values per outcome of a plain callable (its returns are then
        ``(item ids, values)``; with ``width=0`` a number or float array). A mechanism
        declares them by a ``value_width`` attribute and returns a
        [`mechanisms.MixedBatch`][mechanisms.MixedBatch]. Values are binned and scored by encoders
        learned on samples drawn before the ones they reduce
        ([`value_encoding`][dpaudit.auditor.values]).
    resume : a DuckDB file ([`checkpoint`][dpaudit.checkpoint]): finished chunks are
        appended to it, and a rerun with the same file continues where an interrupted run stopped,
        with the same result; a file from another plan (mechanism, options, seed, version) is
        refused.
    evidence : extra entries for the result's evidence (e.g. the command line).
    black_box : sample the mechanism as a black box only: no same-seed replay check and no
        grey-box scan. By default a Python mechanism seeded by its ``rng`` is checked to draw only
        from it (refused otherwise,
        [`greybox.replay.check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng]),
        and the confirmed pairs and first candidates are run coupled on one stream for both
        neighbours ([`greybox.scan`][dpaudit.auditor.greybox.scan]); what that finds is in
        ``evidence["greybox"]`` and the text's ``grey box:`` line, and changes no verdict. A
        mechanism that declares its output support also gets the structural-δ stage
        ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]), with a tenth of ``alpha``
        (the sampled bounds take the rest): its bound on δ at the claimed ε enters the headline
        and the verdict, its record is ``evidence["greybox"]["delta"]``.
    """
    started = time.perf_counter()
    asked = asked_budget(samples, budget)
    options = AuditOptions(
        samples=asked.samples or DEFAULT_SAMPLES,
        alpha=alpha,
        seed=seed,
        workers=workers,
        keep=keep,
        max_pairs=max_pairs,
        events_per_pair=events_per_pair,
        chunk=chunk,
        domain_size=domain_size,
        search=search,
        restrict=restrict,
        counts=counts,
        pairs=pairs,
        power_factor=power_factor,
        looks=looks,
        epsilon_only=bool(epsilon_only),
        refine=bool(refine),
    )
    target = as_auditable(mechanism, claim, width, name, batched, values)
    mech, declared, label = target.mechanism, target.claim, target.label
    options.check_design(mech)
    options, calibration = budgeted(asked, mech, options.for_mechanism(mech))
    # The grey-box δ stage holds its share of α from the plan on (greybox.delta_stage).
    options = dataclasses.replace(options, grey_delta=plans_grey_delta(mech, bool(black_box)))
    relation = _relation(neighbours, declared)
    first, refining = (
        first_phase(options, mech, relation, DEFAULT_SAMPLES) if options.refine else (options, None)
    )
    check_minimum(first, mech, relation)
    executor, owned, store = open_sampler(
        mech, declared, relation, options, executor, client, resume, progress
    )
    source = LiveSource(first.plan(), executor, mech)
    if black_box:
        source.replay_checked = True  # --black-box: the replay check is grey-box, skipped too
    candidates, refined, grey = [], None, None
    try:
        if options.grey_delta:
            grey = {"skipped": "the audit was interrupted"}
            grey = _grey_delta(mech, options, relation, declared)
        resolved = resolves_delta(grey, declared, options.power_factor)
        candidates, findings = _run(source, mech, relation, declared, first, resolved)
        if refining is not None and findings is not None:
            findings, refined = refine_findings(
                source, findings, declared, refining, options.plan().blackbox_alpha
            )
    except KeyboardInterrupt:
        findings = None
    finally:
        close_sampler(executor if owned else None, store)
    # Everything `dpaudit recheck --rerun` needs to repeat this audit from its spec.
    rerun = rerun_options(
        options.plan_fields(),
        power_factor,
        claim,
        declared,
        neighbours,
        width,
        values,
        batched,
        name,
        epsilon_only,
        bool(black_box),
    )
    extra = _extra_evidence(evidence, findings, calibration, rerun, store, executor, declared)
    scan = _grey_box_scan(mech, source, candidates, findings, int(seed), bool(black_box))
    extra["greybox"] = scan.to_dict()
    if grey is not None:
        extra["greybox"]["delta"] = grey
    if refined is not None:
        extra["refine"] = refined
    record = audit_evidence(mech, relation, int(seed), executor, extra)
    return _result(
        label, declared, relation, options, source, candidates, findings, record, started
    )
