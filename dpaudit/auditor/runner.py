"""The auditor's runner: :func:`audit` validates, builds its sample source and
candidates, and runs the pipeline (:mod:`.pipeline`).

Roles (DESIGN.md, "How the auditor is organised"; :mod:`.interfaces`): pair sources in
:mod:`dpaudit.neighbours.candidates`; the tester :func:`.confirmation.confirm_events`
after :mod:`.screening`; the plan (:mod:`.plan`) carried out by an executor
(:mod:`.executors`, :mod:`.dask_executor`) behind the live sample source (:mod:`.live`).
A violation is reported only when a confirmed bound exceeds the claim; a pass only when
the audit had power (:mod:`.result`).
"""

from __future__ import annotations

import time

import numpy as np

from dpaudit.neighbours.candidates import candidate_pairs
from mechanisms.claims import RELATIONS, AddRemoveUser, BoundedChange

from .blackbox import as_auditable
from .checkpoint import ChunkStore, plan_key
from .confirmation import summarise
from .dask_executor import DaskExecutor
from .evidence import audit_evidence, mechanism_spec, relation_to_dict, rerun_options, versions
from .executors import LocalExecutor
from .live import LOCAL_PER_HISTOGRAM, LiveSchedule, LiveSource, with_local_search
from .options import DEFAULT_SAMPLES, AuditOptions
from .pipeline import histograms_of, run_pipeline
from .plan import AuditPlan
from .result import AuditResult
from .sampling import DEFAULT_CHUNK
from .screening import score_pairs

__all__ = ["DEFAULT_SAMPLES", "audit", "candidate_pairs", "screen"]


def _relation(neighbours, declared):
    relation = neighbours if neighbours is not None else declared.neighbours
    if not isinstance(relation, RELATIONS):
        raise ValueError(
            f"neighbours must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
        )
    return relation


def _checkpoint_store(path, mech, declared, relation, options: AuditOptions):
    """The DuckDB chunk store of ``resume=`` (:mod:`.checkpoint`), keyed by the plan."""
    description = dict(
        options.plan_fields(),
        mechanism=mechanism_spec(mech) or repr(mech),
        claim=[declared.epsilon, declared.delta],
        relation=relation_to_dict(relation),
        dpaudit=versions().get("dpaudit"),
    )
    return ChunkStore(path, plan_key(description), description)


def _executor(mech, options: AuditOptions, client, progress, store):
    if client is not None:
        return DaskExecutor(mech, client, int(options.chunk), progress, int(options.samples))
    return LocalExecutor(
        mech, int(options.workers), int(options.chunk), progress, int(options.samples), store
    )


def _budgets(plan: AuditPlan, n_candidates: int, options: AuditOptions, relation) -> dict:
    searches = options.searches
    # The local search walks add/remove and bounded-change pairs only: no share otherwise.
    local = searches and isinstance(relation, (AddRemoveUser, BoundedChange))
    return with_local_search(plan.budgets(n_candidates, searches), plan.samples, local)


def _candidates(mech, relation, declared, options: AuditOptions, source: LiveSource, plan):
    """The candidate pairs, drawn on the pair stream (spawn key 99) and the search streams."""
    pair_rng = np.random.default_rng(np.random.SeedSequence(int(options.seed), spawn_key=(99,)))
    budget = _budgets(plan, options.max_pairs, options, relation)
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


def _run(source: LiveSource, mech, relation, declared, options: AuditOptions):
    """Candidates, then the pipeline: ``(candidates, witnesses, interrupted)``.

    On Ctrl-C the pairs built so far are counted and no witness is reported.
    """
    candidates: list = []
    try:
        plan = source.plan
        candidates = _candidates(mech, relation, declared, options, source, plan)
        budget = _budgets(plan, len(candidates), options, relation)
        schedule = LiveSchedule(plan, budget, len(candidates))
        return candidates, run_pipeline(source, candidates, declared, schedule).witnesses, False
    except KeyboardInterrupt:
        return candidates, (), True


def _close(executor, store) -> None:
    if executor is not None:
        executor.close()
    if store is not None:
        store.close()


def _resume_evidence(store, executor) -> dict:
    if store is None:
        return {}
    resumed = int(getattr(executor, "resumed", 0))
    return {"resume": {"file": store.path, "plan": store.key, "samples_read": resumed}}


def screen(mech, pairs, samples_per_pair=20_000, keep=3, seed=0, alpha=0.05, claim=None):
    """Score ``pairs`` on few samples each; return the ``keep`` best as ``[(pair, ε estimate)]``."""
    mech, declared, _ = as_auditable(mech, claim)
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
    samples=DEFAULT_SAMPLES,
    alpha=0.05,
    seed=0,
    workers=1,
    keep=2,
    max_pairs=600,
    events_per_pair=3,
    chunk=DEFAULT_CHUNK,
    domain_size=None,
    search=True,
    power_factor=2.0,
    progress=False,
    name=None,
    executor=None,
    client=None,
    resume=None,
    batched=False,
    values=0,
    evidence=None,
):
    """Audit a mechanism as a black box; return an :class:`AuditResult`.

    Parameters
    ----------
    mechanism : a mechanism (``sample(counts, size, rng)`` and ``claim``), a plain
        callable ``f(counts, rng) -> outcome tuple``, or with ``batched=True`` a callable
        ``f(counts, size, rng) -> (size, width) array`` (then give ``claim`` and ``width``).
    claim : ``(ε, δ)`` or ``(ε, δ, relation)`` to audit instead of ``mechanism.claim``.
    width : longest outcome of a plain callable.
    counts : a histogram whose neighbours are added to the candidate pairs.
    pairs : explicit ``[(counts, counts2), ...]`` added to the candidates (checked
        against the relation).
    restrict : screen only the given ``counts``/``pairs`` (the result says so).
    neighbours : relation to audit under (default: the claim's).
    samples : total budget of mechanism samples, all phases and both sides (a
        target: each histogram gets at least 200 samples per phase, so a tiny
        budget over many pairs is exceeded; ``AuditResult.samples`` is exact).
    alpha : failure probability; the bounds hold with confidence ``1 − alpha``.
    seed : root seed (an int); same seed, same result, whatever ``workers`` is.
    workers : processes that sample chunks in parallel (ignored with ``executor``).
    keep : pairs carried from screening to selection and confirmation.
    max_pairs : cap on the candidate pairs screened (targeted families are kept).
    events_per_pair : events confirmed per kept pair (Bonferroni over all).
    chunk : rows per sampling call (memory is O(chunk · width)).
    domain_size : number of items of the default histograms.
    search : run the threshold search and the local search over histograms (shares of the
        budget, :class:`.plan.AuditPlan`, :data:`.live.LOCAL_SHARE`) for pairs where the
        output changes.
    power_factor : PASSED needs a detectable ε <= power_factor × the claimed ε.
    progress : show a tqdm bar on stderr.
    executor : an executor with ``draw(histograms, per_histogram, seeds)`` (default: local).
    client : a ``dask.distributed.Client``: sample on that cluster (:mod:`.dask_executor`);
        same seed, same result as in-process.
    batched : ``mechanism`` is a batched callable ``f(counts, size, rng)``.
    values : real values per outcome of a plain callable (its returns are then
        ``(item ids, values)``; with ``width=0`` a number or float array). A mechanism
        declares them by a ``value_width`` attribute and returns a
        :class:`mechanisms.MixedBatch`. Values are binned and scored by encoders learned on
        samples drawn before the ones they reduce (:mod:`.value_encoding`).
    resume : a DuckDB file (:mod:`.checkpoint`): finished chunks are appended to it, and a
        rerun with the same file continues where an interrupted run stopped, with the same
        result; a file from another plan (mechanism, options, seed, version) is refused.
    evidence : extra entries for the result's evidence (e.g. the command line).
    """
    started = time.perf_counter()
    options = AuditOptions(
        samples=samples,
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
    )
    mech, declared, label = as_auditable(mechanism, claim, width, name, batched, values)
    options = options.for_mechanism(mech)
    relation = _relation(neighbours, declared)
    if resume is not None and (client is not None or executor is not None):
        raise ValueError("resume= works with the local executor (not with client= or executor=)")
    store = None if resume is None else _checkpoint_store(resume, mech, declared, relation, options)
    own_executor = executor is None
    if own_executor:
        executor = _executor(mech, options, client, progress, store)
    source = LiveSource(options.plan(), executor, mech)
    try:
        candidates, witnesses, interrupted = _run(source, mech, relation, declared, options)
    finally:
        _close(executor if own_executor else None, store)
    # Everything `dpaudit recheck --rerun` needs to repeat this audit from its spec.
    fields = options.plan_fields()
    rerun = rerun_options(
        fields, power_factor, claim, declared, neighbours, width, values, batched, name
    )
    extra = {**(evidence or {}), "options": rerun, **_resume_evidence(store, executor)}
    return AuditResult.from_summary(
        summarise(witnesses, declared),
        mechanism=label,
        claim=declared,
        relation=relation,
        alpha=alpha,
        witnesses=witnesses,
        samples=source.samples,
        seconds=time.perf_counter() - started,
        pairs_screened=len(candidates),
        seed=int(seed),
        interrupted=interrupted,
        power_factor=power_factor,
        restricted=restrict,
        evidence=audit_evidence(mech, relation, int(seed), executor, extra),
    )
