"""The auditor's runner: builds the plan, proposes pairs, runs the phases, gives the verdict.

Roles (DESIGN.md, "How the auditor is organised"):

* pair generators — :mod:`dpaudit.neighbours` (fixed and random families, the user's own
  pairs, and :mod:`dpaudit.neighbours.threshold_search`, which finds from samples where
  the output law changes);
* testers — :mod:`.screening` (rank pairs, choose events, before confirmation) and
  :mod:`.confirmation` (bounds on fresh samples, power);
* the plan (:mod:`.plan`: budgets, seed streams) carried out by an executor
  (:mod:`.executors`), and this module, which strings the phases together:

1. search — probes on shapes whose top block is raised until the output changes;
2. screen — every candidate pair gets a few samples per histogram; successive halving
   keeps the best of three rankings in turn (:func:`.screening.screen_scores`);
3. select — fresh samples of the kept pairs; events chosen on everything drawn so far;
4. confirm — fresh samples; one-sided Clopper–Pearson intervals at ``alpha / (2 M)`` for
   ``M`` confirmed events (Bonferroni), so all bounds hold together w.p. ``>= 1 − alpha``.

A violation is reported only when a confirmed bound exceeds the claim; a pass only when
the audit had power (:mod:`.result`).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from mechanisms import AddRemoveUser, BoundedChange

from .blackbox import as_auditable
from .confirmation import (
    confirm_events,
    confirm_sequentially,
    focus_pairs,
    nearness,
    summarise,
)
from .evidence import audit_evidence
from .executors import LocalExecutor
from .plan import MIN_PER_HISTOGRAM, SCREEN_MIN_PER_HISTOGRAM, AuditPlan, Budget
from .result import DEFAULT_POWER_FACTOR, AuditResult, power_shortfall
from .sampling import DEFAULT_CHUNK
from .screening import (
    choose_events,
    score_pairs,
    screen_rounds,
    screen_scores,
    survivors,
    with_delta_slot,
)
from .statistics import detectable_delta

__all__ = ["DEFAULT_SAMPLES", "audit", "candidate_pairs", "screen"]

#: Default total budget (samples drawn over all phases and both sides, never more).
#: Confirmation stops early once a violation is confirmed or the audit has power, so a
#: default audit draws what it needs up to this: measured 20M-50M samples in 8-20 s for
#: LimitDomain(3, 10, ε=1, δ=1e-6) on 2 cores at load 3-5. The correct sparse vector at
#: ε = 0.1 (Lyu-Su-Li Alg. 1, c = 1) is INCONCLUSIVE on 3 of 10 seeds at 20M, 0 of 3 at 60M.
DEFAULT_SAMPLES = 50_000_000

#: Families built for the mechanism at hand (and the user's own pairs): never thinned.
_TARGETED = (
    "threshold search",
    "threshold ladder",
    "restricted domain",
    "explicit",
    "given counts",
)


def _public_int(mech, *names):
    for name in names:
        value = getattr(mech, name, None)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
    return None


def _default_domain(mech, counts):
    if counts is not None:
        return int(
            np.asarray(counts).size if not hasattr(counts, "domain_size") else counts.domain_size
        )
    kbar = _public_int(mech, "kbar", "kbar_max")
    k = _public_int(mech, "k")
    if kbar is not None:
        return kbar + 3
    if k is not None:
        return max(5, k + 3)
    return 5


def _given_pairs(counts, pairs, relation):
    from dpaudit.neighbours.pairs import add_remove_pairs, bounded_change_pairs, explicit_pairs

    found = []
    if pairs is not None:
        found += explicit_pairs(pairs, relation)
    if counts is not None:
        base = np.asarray(counts)
        if isinstance(relation, BoundedChange):
            found += bounded_change_pairs(base, relation.max_change, family="given counts")
        else:
            found += add_remove_pairs(base, relation.max_items, family="given counts")
    return found


def candidate_pairs(
    mech,
    relation,
    *,
    counts=None,
    pairs=None,
    restrict=False,
    domain_size=None,
    max_pairs=600,
    rng,
    draw=None,
    search_samples=0,
):
    """Every pair the audit screens: given pairs, default families and the threshold search.

    Given ``counts``/``pairs`` ADD to the defaults; ``restrict=True`` keeps only them.
    ``draw(histograms, per_histogram) -> [(Counter, n)]`` feeds the threshold search
    (skipped when None or ``search_samples`` is 0).
    """
    from dpaudit.neighbours.pairs import _dedupe, default_pairs, threshold_offset
    from dpaudit.neighbours.threshold_search import threshold_search_pairs

    given = _given_pairs(counts, pairs, relation)
    if restrict:
        if not given:
            raise ValueError("restrict=True needs counts= or pairs= to restrict to")
        return _dedupe(given)
    d = domain_size or _default_domain(mech, None)
    kbar = _public_int(mech, "kbar")
    k = _public_int(mech, "k")
    offset = threshold_offset(mech, d) if kbar is not None else None
    found = default_pairs(relation, d, kbar=kbar, rng=rng, threshold=offset)
    if draw is not None and search_samples > 0:
        searched = threshold_search_pairs(
            draw,
            relation,
            domain_size=d,
            kbar=kbar,
            k=k,
            rng=rng,
            samples=search_samples,
            hint_offset=offset,
        )
        # A quarter of the screening slots at most, so the fixed families keep their room.
        cap = max(max_pairs // 4, 1)
        if len(searched) > cap:
            keep_index = np.sort(rng.choice(len(searched), size=cap, replace=False))
            searched = [searched[i] for i in keep_index]
        found += searched
    found = _dedupe(given + found)
    if len(found) > max_pairs:
        # Keep the targeted families, thin the generic ones at random (seeded).
        targeted = [p for p in found if p.family in _TARGETED]
        others = [p for p in found if p.family not in _TARGETED]
        room = max(max_pairs - len(targeted), max_pairs // 2)
        targeted = targeted[: max_pairs - min(room, len(others))]
        idx = rng.choice(len(others), size=min(room, len(others)), replace=False)
        found = targeted + [others[i] for i in sorted(idx)]
    return found


def locals_for_plan(
    samples,
    seed,
    alpha,
    keep,
    max_pairs,
    events_per_pair,
    chunk,
    domain_size,
    search,
    restrict,
    counts,
    pairs,
    looks=6,
) -> dict:
    """The audit options that determine its samples (for the checkpoint's plan key)."""
    return {
        "samples": int(samples),
        "seed": int(seed),
        "alpha": float(alpha),
        "keep": int(keep),
        "max_pairs": int(max_pairs),
        "events_per_pair": int(events_per_pair),
        "chunk": int(chunk),
        "domain_size": domain_size,
        "search": bool(search),
        "looks": int(looks),
        "restrict": bool(restrict),
        "counts": None if counts is None else [int(c) for c in np.asarray(counts)],
        "pairs": None
        if pairs is None
        else [[list(map(int, a)), list(map(int, b))] for a, b in pairs],
    }


def _checkpoint_store(path, mech, declared, relation, options):
    from .checkpoint import ChunkStore, plan_key
    from .evidence import mechanism_spec, relation_to_dict, versions

    description = dict(
        options,
        mechanism=mechanism_spec(mech) or repr(mech),
        claim=[declared.epsilon, declared.delta],
        relation=relation_to_dict(relation),
        dpaudit=versions().get("dpaudit"),
    )
    return ChunkStore(path, plan_key(description), description)


def _histogram_index(pairs):
    histograms, index = [], {}
    for pair in pairs:
        for h in (pair.counts, pair.counts2):
            if h not in index:
                index[h] = len(histograms)
                histograms.append(np.array(h, dtype=np.int64))
    return histograms, index


class _Phases:
    """Draws of one audit through its executor, each histogram on the plan's seed stream.

    For a mechanism that releases real values, ``encoder`` reduces every executor draw
    (the threshold search sees the items only), and :meth:`raw` draws unreduced samples
    in this process for the encoders to be learned on.
    """

    def __init__(self, plan: AuditPlan, executor, mechanism=None, value_width=0):
        self.plan = plan
        self.executor = executor
        self.mechanism = mechanism
        self.value_width = int(value_width)
        self.search_calls = 0
        self.raw_used = 0
        self.search_encoder = None
        if self.value_width:
            from .value_encoding import items_only_encoder

            self.search_encoder = items_only_encoder(int(mechanism.width), self.value_width)

    def draw(self, phase, round_, pairs, per_histogram, encoder=None):
        histograms, index = _histogram_index(pairs)
        seeds = [self.plan.seed_for(phase, round_, i) for i in range(len(histograms))]
        drawn = self._executor_draw(histograms, per_histogram, seeds, encoder)
        return {h: drawn[i] for h, i in index.items()}

    def _executor_draw(self, histograms, per_histogram, seeds, encoder):
        if encoder is None:  # integer outcomes: the executors' original call
            return self.executor.draw(histograms, per_histogram, seeds)
        return self.executor.draw(histograms, per_histogram, seeds, encoder=encoder)

    def search_draw(self, histograms, per_histogram):
        round_ = self.search_calls
        self.search_calls += 1
        seeds = [self.plan.seed_for("search", round_, i) for i in range(len(histograms))]
        return self._executor_draw(
            [np.asarray(h, dtype=np.int64) for h in histograms],
            per_histogram,
            seeds,
            self.search_encoder,
        )

    def raw(self, round_, histograms, per_histogram):
        """Unreduced :class:`mechanisms.MixedBatch` samples, one per histogram ("learn" seeds)."""
        from mechanisms import MixedBatch

        from .sampling import chunk_sizes, draw_mixed

        batches = []
        for i, h in enumerate(histograms):
            sizes = chunk_sizes(per_histogram, self.plan.chunk)
            parts = [
                draw_mixed(
                    self.mechanism.sample,
                    np.asarray(h, dtype=np.int64),
                    size,
                    np.random.default_rng(seed),
                )
                for size, seed in zip(
                    sizes, self.plan.seed_for("learn", round_, i).spawn(len(sizes))
                )
            ]
            batches.append(MixedBatch.stack(parts))
            self.raw_used += int(per_histogram)
        return batches


#: Raw samples per histogram of the screening encoder's pilot, and histograms it uses.
PILOT_SAMPLES, PILOT_HISTOGRAMS = 2_000, 16
#: Cap on a kept pair's raw learning samples per side (memory O(cap · (width + values))).
LEARN_CAP = 200_000


def _screening_encoder(phases, mech, candidates, allowance):
    """Coarse quantile bins from a pilot over a spread of the candidates' histograms.

    The pilot draws at most ``allowance`` samples in all (part of the screening budget).
    """
    from mechanisms import MixedBatch

    from .value_encoding import fit_encoder

    histograms = _histogram_index(candidates)[0]
    step = max(1, len(histograms) // PILOT_HISTOGRAMS)
    chosen = histograms[::step][:PILOT_HISTOGRAMS]
    per = min(PILOT_SAMPLES, allowance // len(chosen))
    pilot = phases.raw(0, chosen, max(per, 1))
    pooled = MixedBatch.stack(pilot)
    return fit_encoder(mech.width, phases.value_width, pooled, None, bins=32, score=False)


def _select_and_confirm_values(phases, mech, kept, budget, alpha_each, declared, plan):
    """Per kept pair: learn its encoder, choose events, confirm them (all on fresh draws)."""
    from .value_encoding import fit_encoder

    chosen_by_pair = []
    n_target = budget["confirm"] // (2 * len(kept))
    per_side = budget["select"] // (2 * len(kept))
    learn = min(LEARN_CAP, per_side // 2)
    for position, pair in enumerate(kept):
        raw_p, raw_q = phases.raw(1 + position, [pair.counts, pair.counts2], learn)
        encoder = fit_encoder(mech.width, phases.value_width, raw_p, raw_q)
        pooled = {
            pair.counts: (encoder.count(raw_p), learn),
            pair.counts2: (encoder.count(raw_q), learn),
        }
        _pool_into(pooled, phases.draw("select", 1 + position, [pair], per_side - learn, encoder))
        chosen = choose_events(
            [pair], pooled, n_target, alpha_each, declared, plan.events_per_pair, encoder=encoder
        )
        chosen_by_pair.append((pair, encoder, chosen))
    witnesses = []
    per_confirm = budget["confirm"] // (2 * len(kept))
    for position, (pair, encoder, chosen) in enumerate(chosen_by_pair):
        confirmation = phases.draw("confirm", 1 + position, [pair], per_confirm, encoder)
        witnesses += confirm_events(chosen, confirmation, alpha_each, declared)
    return witnesses


def _fit_screening(candidates, screen_budget, keep, rng):
    """Candidates thinned (targeted families first) until screening gives each histogram
    ``SCREEN_MIN_PER_HISTOGRAM`` samples in every round without exceeding ``screen_budget``."""
    while len(candidates) > keep:
        rounds = screen_rounds(len(candidates), keep)
        per = screen_budget // rounds // len(_histogram_index(candidates)[0])
        if per >= SCREEN_MIN_PER_HISTOGRAM:
            break
        size = max(keep, int(len(candidates) * 0.8))
        targeted = [p for p in candidates if p.family in _TARGETED][:size]
        others = [p for p in candidates if p.family not in _TARGETED]
        room = min(size - len(targeted), len(others))
        idx = sorted(rng.choice(len(others), size=room, replace=False)) if room else []
        candidates = targeted + [others[i] for i in idx]
    return candidates


def _samples_for_seconds(mech, seconds, workers, plan, domain_size):
    """Samples an audit of ``seconds`` can afford: a timed pilot on a flat histogram.

    The pilot's rate (in this process, times the workers) fixes the budget; overheads
    (screening's many small draws, events) take about a third, hence the factor 0.6.
    Returns ``(samples, pilot samples drawn)``. The result records the samples chosen.
    """
    d = domain_size or _default_domain(mech, None)
    counts = np.full(d, 3, dtype=np.int64)
    rng = np.random.default_rng(plan.seed_for("calibrate", 0, 0))
    size, spent, drawn = 1_000, 0.0, 0
    while spent < 0.25 and drawn < 5_000_000:
        start = time.perf_counter()
        mech.sample(counts, size, rng)
        spent += time.perf_counter() - start
        drawn += size
        size *= 2
    rate = drawn / max(spent, 1e-9)
    return int(rate * float(seconds) * 0.6 * workers), drawn


def _pool_into(pooled, drawn):
    for h, (counter, n) in drawn.items():
        if h in pooled:
            old, m = pooled[h]
            merged = old.copy()
            merged.update(counter)
            pooled[h] = (merged, m + n)
        else:
            pooled[h] = (counter, n)


def screen(mech, pairs, samples_per_pair=20_000, keep=3, seed=0, alpha=0.05, claim=None):
    """Score ``pairs`` on few samples each; return the ``keep`` best as ``[(pair, ε estimate)]``."""
    mech, declared, _ = as_auditable(mech, claim)
    plan = AuditPlan(samples=max(1000, samples_per_pair), seed=seed, alpha=alpha, keep=keep)
    executor = LocalExecutor(mech, 1, DEFAULT_CHUNK)
    try:
        pooled = _Phases(plan, executor).draw("screen", 0, pairs, samples_per_pair)
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
    samples : total budget of mechanism samples, all phases and both sides (default
        :data:`DEFAULT_SAMPLES`); never exceeded: screening thins the candidate pairs to
        fit it, and a budget too small for a valid audit of ``keep`` pairs is refused
        with the minimum. ``AuditResult.samples`` is what was drawn (at most this).
    budget : the same budget as ``samples`` (give one of them), or wall-clock seconds:
        ``2e7``, ``"2e7"``, ``"60s"`` (:class:`.plan.Budget`; seconds become samples by a
        timed pilot, recorded in the result's evidence).
    looks : looks of the sequential confirmation (cumulative sizes doubling up to where
        one pair alone would spend confirmation's share, α spent evenly over them); 1 is
        one fixed-size confirmation at the full level, as an offline plan does.
    epsilon_only : accept a pass on ε alone when the budget cannot resolve the claimed δ
        (recorded in the result; without it such an audit is INCONCLUSIVE for δ).
    alpha : failure probability; the bounds hold with confidence ``1 − alpha``.
    seed : root seed (an int); same seed, same result, whatever ``workers`` is.
    workers : processes that sample chunks in parallel (ignored with ``executor``).
    keep : pairs carried from screening to selection and confirmation (with a claimed
        δ > 0, one of them is a pair whose support changes: :func:`.screening.with_delta_slot`).
    max_pairs : cap on the candidate pairs screened (targeted families are kept).
    events_per_pair : events confirmed per kept pair (Bonferroni over all).
    chunk : rows per sampling call (memory is O(chunk · width)).
    domain_size : number of items of the default histograms.
    search : run the threshold search (10 % of the budget) for pairs where the output changes.
    power_factor : PASSED needs a detectable ε <= power_factor × the claimed ε and a
        detectable δ <= power_factor × the claimed δ (each at detection probability 0.9;
        default :data:`.result.DEFAULT_POWER_FACTOR`, 1.25).
        Confirmation stops at the first of its looks where a violation is confirmed or
        this power is reached (:func:`.confirmation.confirm_sequentially`).
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
    if not (isinstance(workers, (int, np.integer)) and workers >= 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not (isinstance(power_factor, (int, float)) and power_factor >= 1):
        raise ValueError(f"power_factor must be a number >= 1, got {power_factor!r}")
    mech, declared, label = as_auditable(mechanism, claim, width, name, batched, values)
    if budget is not None and samples is not None:
        raise ValueError("give budget= or samples= (the same budget), not both")
    asked = Budget.parse(budget if budget is not None else (samples or DEFAULT_SAMPLES))
    calibration = None
    if asked.seconds is not None:
        probe = AuditPlan(samples=1000, seed=int(seed), alpha=float(alpha))
        samples, pilot = _samples_for_seconds(mech, asked.seconds, workers, probe, domain_size)
        calibration = {"seconds": asked.seconds, "samples": samples, "pilot_samples": pilot}
    else:
        samples = asked.samples
    plan = AuditPlan(
        samples=samples,
        seed=int(seed),
        alpha=float(alpha),
        keep=keep,
        events_per_pair=events_per_pair,
        chunk=chunk,
        looks=looks,
    )
    if chunk == DEFAULT_CHUNK and getattr(mech, "preferred_chunk", None):
        chunk = int(mech.preferred_chunk)  # per-call functions: small chunks, shared by workers
        plan = dataclasses.replace(plan, chunk=chunk)
    relation = neighbours if neighbours is not None else declared.neighbours
    if not isinstance(relation, (AddRemoveUser, BoundedChange)):
        raise ValueError(f"neighbours must be AddRemoveUser or BoundedChange, got {relation!r}")
    own_executor = executor is None
    store = None
    if resume is not None:
        if client is not None or executor is not None:
            raise ValueError(
                "resume= works with the local executor (not with client= or executor=)"
            )
        store = _checkpoint_store(
            resume,
            mech,
            declared,
            relation,
            locals_for_plan(
                samples,
                seed,
                alpha,
                keep,
                max_pairs,
                events_per_pair,
                chunk,
                domain_size,
                search,
                restrict,
                counts,
                pairs,
                looks,
            ),
        )
    if own_executor and client is not None:
        from .dask_executor import DaskExecutor

        executor = DaskExecutor(mech, client, int(chunk), progress, int(samples))
    elif own_executor:
        executor = LocalExecutor(mech, int(workers), int(chunk), progress, int(samples), store)
    from .value_encoding import value_width_of

    value_width = value_width_of(mech)
    given = len(_given_pairs(counts, pairs, relation)) if restrict else None
    minimum = plan.minimum_samples(given, bool(search) and not restrict, bool(value_width))
    if samples < minimum:
        if own_executor:
            executor.close()
        raise ValueError(
            f"samples={samples:,} is below the {minimum:,} a valid audit of keep={plan.keep} "
            f"pairs needs ({MIN_PER_HISTOGRAM} samples per histogram to select and to "
            "confirm events): raise samples (or the budget), or lower keep"
        )
    phases = _Phases(plan, executor, mech, value_width)
    pair_rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(99,)))
    use_search = bool(search) and not restrict
    interrupted = False
    look_record = None
    witnesses = []
    candidates = []
    try:
        # 0. Candidate pairs (the search draws on its own seed streams).
        search_budget = plan.budgets(max_pairs, use_search)["search"]
        candidates = candidate_pairs(
            mech,
            relation,
            counts=counts,
            pairs=pairs,
            restrict=restrict,
            domain_size=domain_size,
            max_pairs=max_pairs,
            rng=pair_rng,
            draw=phases.search_draw,
            search_samples=search_budget,
        )
        shares = plan.budgets(len(candidates), use_search)
        candidates = _fit_screening(candidates, shares["screen"], plan.keep, pair_rng)
        shares = plan.budgets(len(candidates), use_search)
        alpha_each = plan.alpha_each(len(candidates))
        kept = candidates[: plan.keep]
        pooled = {}
        n_target = shares["confirm"] // (2 * plan.keep)
        # Real values: screening counts the values in coarse bins fixed by a pilot.
        screen_budget = shares["screen"]
        screen_encoder = None
        if value_width and screen_budget:
            screen_encoder = _screening_encoder(phases, mech, candidates, screen_budget // 4)
            screen_budget -= phases.raw_used
            candidates = _fit_screening(candidates, screen_budget, plan.keep, pair_rng)
        # 1. Screening by successive halving, pooled across rounds.
        if shares["screen"]:
            survivors_ = list(candidates)
            scored: dict = {}
            rounds = screen_rounds(len(candidates), plan.keep)
            for round_ in range(rounds):
                n_histograms = len(_histogram_index(survivors_)[0])
                per = screen_budget // rounds // n_histograms
                _pool_into(pooled, phases.draw("screen", round_, survivors_, per, screen_encoder))
                scores = screen_scores(
                    survivors_, pooled, n_target, alpha_each, declared, encoder=screen_encoder
                )
                scored.update(zip(survivors_, scores))
                size = plan.keep if round_ == rounds - 1 else max(plan.keep, len(survivors_) // 4)
                survivors_ = survivors(survivors_, scores, size)
            kept = with_delta_slot(survivors_, scored, declared)
            pooled = {
                h: v for h, v in pooled.items() if any(h in (p.counts, p.counts2) for p in kept)
            }
        if value_width:
            # 2-3. Per kept pair: encoder learned, events chosen, then confirmed.
            witnesses = _select_and_confirm_values(
                phases, mech, kept, shares, alpha_each, declared, plan
            )
        else:
            # 2. Selection on fresh samples (pooled with screening: all pre-confirmation).
            per = shares["select"] // len(_histogram_index(kept)[0])
            _pool_into(pooled, phases.draw("select", 0, kept, per))
            n_target = shares["confirm"] // (2 * len(kept))
            chosen = choose_events(
                kept, pooled, n_target, alpha_each, declared, plan.events_per_pair
            )
            # 3. Confirmation on fresh samples, in looks: stop once a violation is
            # confirmed or the audit has power (bounds at α-spending levels).
            # Looks up to where one pair alone would spend the whole share; pairs go on
            # while they inform most and the share lasts.
            schedule = plan.confirm_schedule(shares["confirm"], len(_histogram_index(kept)[0]))
            tallies: dict = {}
            # A claimed δ that even the last look on a Q = 0 event cannot resolve does not
            # hold confirmation back (the verdict still says INCONCLUSIVE for δ).
            last = schedule.sizes()[-1]
            chase_delta = (
                not epsilon_only
                and detectable_delta(
                    0,
                    last,
                    last,
                    schedule.alpha_at(alpha_each, plan.looks - 1),
                    declared.epsilon,
                    declared.delta,
                )
                <= power_factor * declared.delta
            )

            def draw_look(look, size, active):
                _pool_into(tallies, phases.draw("confirm", look, active, size))
                return tallies

            def lacks_power(summary_):
                return power_shortfall(
                    summary_["detectable_epsilon"],
                    summary_["detectable_delta"],
                    declared.epsilon,
                    declared.delta,
                    power_factor,
                    not chase_delta,
                )

            def enough(found):
                # Power alone does not stop while some event's estimate is beyond the
                # claim: more samples there may confirm a violation.
                summary_ = summarise(found, declared)
                return summary_["violation"] or (
                    summary_["separated"]
                    and lacks_power(summary_) is None
                    and nearness(found, declared) < 1
                )

            def focus(latest):
                summary_ = summarise([w for ws in latest.values() for w in ws], declared)
                return focus_pairs(latest, declared, lacks_power(summary_))

            witnesses, stopped = confirm_sequentially(
                chosen,
                draw_look,
                schedule,
                alpha_each,
                declared,
                enough,
                shares["confirm"],
                focus,
                plan.focus_look(),
            )
            look_record = {
                "sizes": schedule.sizes(),
                "last_look_of_pair": {str(i): int(j) for i, j in sorted(stopped.items())},
                "alpha_each_look": float(schedule.alpha_at(alpha_each, 0)),
                "delta_within_reach": bool(chase_delta),
            }
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if own_executor:
            executor.close()
        if store is not None:
            store.close()
    summary = summarise(witnesses, declared)
    extra = dict(evidence or {})
    if calibration is not None:
        extra["budget"] = calibration
    if witnesses and look_record is not None:
        extra["confirmation_looks"] = look_record
    if store is not None:
        extra["resume"] = {
            "file": store.path,
            "plan": store.key,
            "samples_read": int(getattr(executor, "resumed", 0)),
        }
    return AuditResult(
        mechanism=label,
        claim_epsilon=float(declared.epsilon),
        claim_delta=float(declared.delta),
        neighbours=str(relation),
        epsilon_lower=float(summary["epsilon_lower"]),
        delta_lower=float(summary["delta_lower"]),
        violation=summary["violation"],
        alpha=float(alpha),
        epsilon_witness=summary["epsilon_witness"],
        delta_witness=summary["delta_witness"],
        samples=int(executor.used) + phases.raw_used,
        seconds=time.perf_counter() - started,
        pairs_screened=len(candidates),
        events_confirmed=len(witnesses),
        seed=int(seed),
        interrupted=interrupted,
        witnesses=tuple(witnesses),
        detectable_epsilon=float(summary["detectable_epsilon"]),
        detectable_delta=float(summary["detectable_delta"]),
        separated=summary["separated"],
        power_factor=float(power_factor),
        restricted=bool(restrict),
        evidence=audit_evidence(mech, relation, int(seed), executor, extra),
        epsilon_only=bool(epsilon_only),
        samples_requested=int(samples),
    )
