"""The auditor's runner: budget, phases, chunked/parallel sampling, multiplicity, verdict.

Phases (each on its own samples, so the final interval is valid):

1. screen — every candidate pair gets a few samples per histogram (shared
   between pairs with a common histogram); each pair is scored by the bounds
   its best event would reach on a confirmation-sized sample, three ways
   (see :func:`_screen_scores`), and successive halving keeps the best of
   each ranking in turn;
2. select — the ``keep`` best pairs get fresh samples; on the pooled
   screening + selection samples the best events are chosen (by predicted ε
   bound at the claimed δ and by predicted δ bound at the claimed ε), in both
   directions of each pair;
3. confirm — fresh samples of the chosen pairs; every chosen event's
   one-sided Clopper–Pearson intervals are taken at ``alpha / (2 M)`` for
   ``M`` confirmed events, so all bounds hold together with probability
   ``>= 1 − alpha`` (Bonferroni).

A violation is reported only when a confirmed bound exceeds the claim.
"""

from __future__ import annotations

import pickle
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from mechanisms import AddRemoveUser, BoundedChange

from .blackbox import as_auditable
from .events import candidate_events, events_hits
from .result import AuditResult, Witness
from .sampling import DEFAULT_CHUNK, SamplingJob, run_jobs
from .statistics import event_bounds, one_sided_lower, one_sided_upper

__all__ = ["DEFAULT_SAMPLES", "audit", "screen"]

#: One-sided level of the cautious frequencies of the screening's first ranking.
SCREEN_CAUTION = 0.1

#: Default total budget (samples drawn over all phases and both sides).
DEFAULT_SAMPLES = 2_000_000

_PHASE_SCREEN, _PHASE_SELECT, _PHASE_CONFIRM = 0, 1, 2


def _default_domain(mech, counts):
    if counts is not None:
        return int(np.asarray(counts).size if not hasattr(counts, "domain_size") else counts.domain_size)
    kbar = getattr(mech, "kbar", None) or getattr(mech, "kbar_max", None)
    k = getattr(mech, "k", None)
    if isinstance(kbar, int):
        return kbar + 3
    if isinstance(k, int):
        return max(5, k + 3)
    return 5


#: Families built for the mechanism at hand; never thinned away by ``max_pairs``.
_TARGETED = ("threshold ladder", "restricted domain")


def _candidate_pairs(mech, relation, counts, pairs, domain_size, max_pairs, rng):
    from dpaudit.neighbours.pairs import default_pairs, explicit_pairs, threshold_offset

    if pairs is not None:
        return explicit_pairs(pairs, relation)
    d = domain_size or _default_domain(mech, counts)
    kbar = getattr(mech, "kbar", None)
    kbar = kbar if isinstance(kbar, int) else None
    offset = threshold_offset(mech, d) if kbar is not None and counts is None else None
    found = default_pairs(relation, d, kbar=kbar, counts=counts, rng=rng, threshold=offset)
    if len(found) > max_pairs:
        # Keep the targeted families, thin the generic ones at random (seeded).
        targeted = [p for p in found if p.family in _TARGETED]
        others = [p for p in found if p.family not in _TARGETED]
        room = max(max_pairs - len(targeted), max_pairs // 2)
        targeted = targeted[: max_pairs - min(room, len(others))]
        idx = rng.choice(len(others), size=min(room, len(others)), replace=False)
        found = targeted + [others[i] for i in sorted(idx)]
    return found


class _Sampler:
    """Owns the seed tree, the progress bar and the process pool of one audit."""

    def __init__(self, mech, seed, workers, chunk, progress, total):
        self.mech = mech
        self.root = np.random.SeedSequence(seed)
        self.chunk = chunk
        self.used = 0
        self.executor = None
        self.workers = 1
        if workers > 1:
            try:
                pickle.dumps(mech)
                self.executor = ProcessPoolExecutor(max_workers=workers)
                self.workers = workers
            except (pickle.PicklingError, AttributeError, TypeError):  # lambdas, closures, locks
                warnings.warn("mechanism cannot be pickled; sampling in one process", stacklevel=3)
        self.bar = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="sample", unit_scale=True, file=sys.stderr, leave=False)

    def seed_for(self, phase, index):
        # A fixed spawn key per (phase, histogram index): reproducible, independent streams.
        phase = phase if isinstance(phase, tuple) else (phase,)
        return np.random.SeedSequence(self.root.entropy, spawn_key=(*phase, index))

    def draw(self, phase, histograms, per_histogram):
        jobs = [
            SamplingJob(self.mech.sample, h, per_histogram, self.seed_for(phase, i), self.chunk)
            for i, h in enumerate(histograms)
        ]
        self.last_jobs = jobs
        try:
            run_jobs(jobs, self.workers, progress=self._tick, executor=self.executor)
        finally:
            self.used += sum(job.done for job in jobs)
        return jobs

    def _tick(self, n):
        if self.bar is not None:
            self.bar.update(n)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)


def _screen_rounds(n_pairs, keep):
    """Rounds of successive halving (keep a quarter each time) to get from n_pairs to keep."""
    rounds = 1
    while n_pairs > 4 * keep and rounds < 4:
        n_pairs //= 4
        rounds += 1
    return rounds


def _predicted(fp, fq, n_target, alpha_each, epsilon, delta):
    """Bounds events of frequencies ``fp``, ``fq`` would reach on ``n_target`` fresh samples."""
    sp = fp * n_target
    sq = fq * n_target
    _, _, eps_b, delta_b = event_bounds(np.round(sp), n_target, np.round(sq), n_target, alpha_each, epsilon, delta)
    return np.atleast_1d(eps_b), np.atleast_1d(delta_b)


def _event_table(pairs, pooled):
    """Every candidate event of every pair in both directions, with its hits and sample sizes."""
    owners, directions, events, hps, nps, hqs, nqs = [], [], [], [], [], [], []
    for index, pair in enumerate(pairs):
        cp, n_p = pooled[pair.counts]
        cq, n_q = pooled[pair.counts2]
        for (a, na, b, nb, direction) in ((cp, n_p, cq, n_q, 0), (cq, n_q, cp, n_p, 1)):
            evs, hp, hq = candidate_events(a, na, b, nb)
            owners += [index] * len(evs)
            directions += [direction] * len(evs)
            events += evs
            hps.append(hp)
            hqs.append(hq)
            nps.append(np.full(len(evs), max(na, 1), dtype=float))
            nqs.append(np.full(len(evs), max(nb, 1), dtype=float))
    if not events:
        return owners, directions, events, *(np.zeros(0) for _ in range(4))
    return (owners, directions, events, np.concatenate(hps), np.concatenate(nps),
            np.concatenate(hqs), np.concatenate(nqs))


def _predict_where(useful, fp, fq, n_target, alpha_each, claim):
    eps_b = np.zeros(fp.size)
    delta_b = np.zeros(fp.size)
    if useful.any():
        eps_b[useful], delta_b[useful] = _predicted(fp[useful], fq[useful], n_target, alpha_each,
                                                    claim.epsilon, claim.delta)
    return eps_b, delta_b


def _score_pairs(pairs, pooled, n_target, alpha_each, claim):
    """Predicted bounds of every candidate event of every pair, in both directions.

    Returns ``[[(ε bound, δ bound, direction, event), ...] per pair]``. All
    Clopper–Pearson intervals of all pairs are computed in one vectorized call.
    """
    owners, directions, events, hp, n_p, hq, n_q = _event_table(pairs, pooled)
    result = [[] for _ in pairs]
    if not events:
        return result
    fp = hp / n_p
    fq = hq / n_q
    # Only events more likely under P than under Q (and seen often enough to matter)
    # can give a positive bound; the others score 0 without the costly beta quantiles.
    useful = (fp > fq) & (fp * n_target >= 1)
    eps_b, delta_b = _predict_where(useful, fp, fq, n_target, alpha_each, claim)
    for owner, direction, event, e, dl in zip(owners, directions, events, eps_b, delta_b):
        result[owner].append((float(e), float(dl), direction, event))
    return result


def _screen_scores(pairs, pooled, n_target, alpha_each, claim, caution=SCREEN_CAUTION):
    """Three scores per pair for screening: ``[(cautious ε, plug-in ε, plug-in δ), ...]``.

    Each is the best over the pair's events (both directions) of a bound
    predicted on ``n_target`` fresh samples, from

    * cautious ε: the lower Clopper–Pearson bound (one-sided level
      ``caution``) of the frequency on P and the upper one on Q. On a few
      hundred samples an event seen a few times under P and never under Q has
      a plug-in Q of 0, so a huge predicted ε; hundreds of such flukes crowd
      out events whose ratio is real but whose Q is merely small (the
      fixed-threshold witness "every item of the top k̄ reported").
    * plug-in ε and plug-in δ: the frequencies themselves. They are what an
      event with Q exactly 0 (an item entering a strict domain: a δ-type
      witness) needs, since the cautious Q of an unseen outcome stays at the
      screening sample's scale.
    """
    owners, _, events, hp, n_p, hq, n_q = _event_table(pairs, pooled)
    scores = np.zeros((len(pairs), 3))
    if not events:
        return [tuple(row) for row in scores]
    fp = hp / n_p
    fq = hq / n_q
    useful = (fp > fq) & (fp * n_target >= 1)
    eps_plain, delta_plain = _predict_where(useful, fp, fq, n_target, alpha_each, claim)
    # The cautious P is below and the cautious Q above the plug-in ones, so only
    # the plug-in-useful events can score; bound just those.
    cp = np.zeros(fp.size)
    cq = np.ones(fq.size)
    if useful.any():
        cp[useful] = one_sided_lower(hp[useful], n_p[useful], caution)
        cq[useful] = one_sided_upper(hq[useful], n_q[useful], caution)
    careful = useful & (cp > cq) & (cp * n_target >= 1)
    eps_careful, _ = _predict_where(careful, cp, cq, n_target, alpha_each, claim)
    owners = np.asarray(owners)
    for column, values in enumerate((eps_careful, eps_plain, delta_plain)):
        np.maximum.at(scores[:, column], owners, values)
    return [tuple(float(v) for v in row) for row in scores]


def _survivors(pairs, scores, size):
    """``size`` pairs taken in turn from the three rankings of :func:`_screen_scores`.

    The cautious-ε ranking picks first (the final round, ``size = keep = 2``,
    takes its best and the plug-in ε ranking's best); ties break on the other
    scores, then on candidate order.
    """
    index = range(len(pairs))
    rankings = [
        sorted(index, key=lambda i: (-scores[i][0], -scores[i][2])),
        sorted(index, key=lambda i: (-scores[i][1], -scores[i][2])),
        sorted(index, key=lambda i: (-scores[i][2], -scores[i][1])),
    ]
    picked, seen = [], set()
    for group in zip(*rankings):
        for i in group:
            if len(picked) < size and i not in seen:
                seen.add(i)
                picked.append(pairs[i])
    return picked


def screen(mech, pairs, samples_per_pair=20_000, keep=3, seed=0, alpha=0.05, claim=None):
    """Score ``pairs`` on few samples each; return the ``keep`` best as ``[(pair, ε estimate)]``."""
    mech, declared, _ = as_auditable(mech, claim)
    sampler = _Sampler(mech, seed, 1, DEFAULT_CHUNK, False, 0)
    try:
        histograms, index = _histogram_index(pairs)
        jobs = sampler.draw(_PHASE_SCREEN, histograms, samples_per_pair)
    finally:
        sampler.close()
    pooled = {h: (jobs[i].result, jobs[i].done) for h, i in index.items()}
    scored = []
    for pair, cands in zip(pairs, _score_pairs(pairs, pooled, samples_per_pair, alpha / 6, declared)):
        best = max((c[0] for c in cands), default=0.0)
        scored.append((pair, best))
    scored.sort(key=lambda t: -t[1])
    return scored[:keep]


def _pool_into(pooled, index, jobs) -> None:
    """Add each histogram's sampled outcome counts to ``pooled[h] = (Counter, n)``."""
    for h, i in index.items():
        counter, n = pooled.get(h, (None, 0))
        if counter is None:
            pooled[h] = (jobs[i].result, jobs[i].done)
        else:
            counter.update(jobs[i].result)
            pooled[h] = (counter, n + jobs[i].done)


def _histogram_index(pairs):
    histograms, index = [], {}
    for pair in pairs:
        for h in (pair.counts, pair.counts2):
            if h not in index:
                index[h] = len(histograms)
                histograms.append(np.array(h, dtype=np.int64))
    return histograms, index


def audit(
    mechanism,
    *,
    claim=None,
    width=None,
    counts=None,
    pairs=None,
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
    progress=False,
    name=None,
):
    """Audit a mechanism as a black box; return an :class:`AuditResult`.

    Parameters
    ----------
    mechanism : a mechanism (``sample(counts, size, rng)`` and ``claim``) or a
        plain callable ``f(counts, rng) -> outcome tuple`` (then give ``claim``
        and ``width``).
    claim : ``(ε, δ)`` or ``(ε, δ, relation)`` to audit instead of ``mechanism.claim``.
    width : longest outcome of a plain callable.
    counts : a base histogram; candidate pairs are its neighbours.
    pairs : explicit ``[(counts, counts2), ...]`` (checked against the relation).
    neighbours : relation to audit under (default: the claim's).
    samples : total budget of mechanism samples, all phases and both sides (a
        target: each histogram gets at least 200 samples per phase, so a tiny
        budget over many pairs is exceeded; ``AuditResult.samples`` is exact).
    alpha : failure probability; the bounds hold with confidence ``1 − alpha``.
    seed : root seed (``numpy.random.SeedSequence``); same seed, same result,
        whatever ``workers`` is.
    workers : processes that sample chunks in parallel.
    keep : pairs carried from screening to selection and confirmation.
    max_pairs : cap on the candidate pairs screened.
    events_per_pair : events confirmed per kept pair (Bonferroni over all).
    chunk : rows per sampling call (memory is O(chunk · width)).
    domain_size : number of items of the default histograms.
    progress : show a tqdm bar on stderr.
    """
    started = time.perf_counter()
    if not (isinstance(samples, (int, np.integer)) and samples >= 1000):
        raise ValueError(f"samples must be an integer >= 1000, got {samples!r}")
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not (isinstance(workers, (int, np.integer)) and workers >= 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    mech, declared, label = as_auditable(mechanism, claim, width, name)
    relation = neighbours if neighbours is not None else declared.neighbours
    if not isinstance(relation, (AddRemoveUser, BoundedChange)):
        raise ValueError(f"neighbours must be AddRemoveUser or BoundedChange, got {relation!r}")
    pair_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(99,)))
    candidates = _candidate_pairs(mech, relation, counts, pairs, domain_size, max_pairs, pair_rng)

    n_events = max(1, min(keep, len(candidates))) * events_per_pair
    alpha_each = float(alpha) / (2 * n_events)
    single = len(candidates) <= keep
    screen_budget = 0 if single else int(0.25 * samples)
    select_budget = int((0.3 if single else 0.15) * samples)
    confirm_budget = samples - screen_budget - select_budget

    sampler = _Sampler(mech, seed, int(workers), int(chunk), progress, samples)
    interrupted = False
    witnesses: list[Witness] = []
    kept = candidates[:keep]
    pooled = {}
    confirming = False
    jobs = None
    chosen = []
    try:
        # 1. Screening by successive halving: each round samples the surviving
        # pairs' histograms afresh (pooled with earlier rounds) and keeps a
        # quarter, taken in turn from three rankings (cautious ε, plug-in ε,
        # plug-in δ: _screen_scores); all of it happens before confirmation.
        if not single:
            survivors = list(candidates)
            n_target = confirm_budget // (2 * keep)
            rounds = _screen_rounds(len(candidates), keep)
            for round_ in range(rounds):
                histograms, index = _histogram_index(survivors)
                per = max(screen_budget // rounds // len(histograms), 200)
                jobs = sampler.draw((_PHASE_SCREEN, round_), histograms, per)
                _pool_into(pooled, index, jobs)
                scores = _screen_scores(survivors, pooled, n_target, alpha_each, declared)
                size = keep if round_ == rounds - 1 else max(keep, len(survivors) // 4)
                survivors = _survivors(survivors, scores, size)
            kept = survivors
            pooled = {h: v for h, v in pooled.items() if any(h in (p.counts, p.counts2) for p in kept)}
        # 2. Selection on fresh samples (pooled with screening: all pre-confirmation).
        histograms, index = _histogram_index(kept)
        per = max(select_budget // len(histograms), 200)
        jobs = sampler.draw(_PHASE_SELECT, histograms, per)
        _pool_into(pooled, index, jobs)
        n_target = confirm_budget // (2 * len(kept))
        chosen = []  # (pair oriented P->Q, event)
        for pair, cands in zip(kept, _score_pairs(kept, pooled, n_target, alpha_each, declared)):
            picks = []
            by_eps = sorted(cands, key=lambda c: (-c[0], -c[1]))
            by_delta = sorted(cands, key=lambda c: (-c[1], -c[0]))
            n_eps = max(1, events_per_pair - 1)
            for c in by_eps[:n_eps] + by_delta[: events_per_pair - n_eps]:
                key = (c[2], c[3])
                if key not in [(p[2], p[3]) for p in picks]:
                    picks.append(c)
            for c in by_eps[n_eps:]:
                if len(picks) >= events_per_pair:
                    break
                if (c[2], c[3]) not in [(p[2], p[3]) for p in picks]:
                    picks.append(c)
            for c in picks:
                oriented = pair if c[2] == 0 else pair.swapped()
                chosen.append((pair, oriented, c[3]))
        # 3. Confirmation on fresh samples.
        histograms, index = _histogram_index(kept)
        per = max(confirm_budget // len(histograms), 200)
        jobs = None
        confirming = True
        jobs = sampler.draw(_PHASE_CONFIRM, histograms, per)
    except KeyboardInterrupt:
        interrupted = True
        if confirming:
            jobs = sampler.last_jobs  # report what the confirmation has so far
    finally:
        sampler.close()

    if confirming and jobs is not None and chosen and (
        not interrupted or all(j.done > 0 for j in jobs)
    ):
        conf_index = index
        for pair, oriented, event in chosen:
            jp = jobs[conf_index[oriented.counts]]
            jq = jobs[conf_index[oriented.counts2]]
            hp = int(events_hits([event], jp.result)[0])
            hq = int(events_hits([event], jq.result)[0])
            p_low, q_high, eps_b, delta_b = event_bounds(hp, jp.done, hq, jq.done, alpha_each,
                                                         declared.epsilon, declared.delta)
            witnesses.append(Witness(oriented.counts, oriented.counts2, event.describe(), hp, jp.done,
                                     hq, jq.done, float(p_low), float(q_high), float(eps_b),
                                     float(delta_b), pair.family))
    eps_w = max(witnesses, key=lambda w: (w.epsilon_lower, w.delta_lower), default=None)
    delta_w = max(witnesses, key=lambda w: (w.delta_lower, w.epsilon_lower), default=None)
    eps_lower = eps_w.epsilon_lower if eps_w else 0.0
    delta_lower = delta_w.delta_lower if delta_w else 0.0
    # (ε-bound > ε) and (δ-bound > δ) are the same condition on one event
    # (P_low − δ > e^ε Q_high); testing both guards against rounding.
    violation = any(
        w.delta_lower > declared.delta and w.epsilon_lower > declared.epsilon for w in witnesses
    )
    return AuditResult(
        mechanism=label,
        claim_epsilon=float(declared.epsilon),
        claim_delta=float(declared.delta),
        neighbours=str(relation),
        epsilon_lower=float(eps_lower),
        delta_lower=float(delta_lower),
        violation=bool(violation),
        alpha=float(alpha),
        epsilon_witness=eps_w,
        delta_witness=delta_w,
        samples=int(sampler.used),
        seconds=time.perf_counter() - started,
        pairs_screened=len(candidates),
        events_confirmed=len(witnesses) if witnesses else 0,
        seed=seed if isinstance(seed, (int, np.integer)) else None,
        interrupted=interrupted,
        witnesses=tuple(witnesses),
    )
