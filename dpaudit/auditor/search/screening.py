"""Screening and selection: rank candidate pairs and choose events from pre-confirmation samples.

The tester role of DESIGN.md's auditor, first half: everything here looks only at
samples drawn BEFORE confirmation (search, screening, selection), and turns outcome
counts into predicted bounds — which pairs to keep, which events to confirm. The
second half, [`confirmation`][dpaudit.auditor.confirm.confirmation], bounds the chosen events on fresh
samples.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from dpaudit.neighbours.pairs import NAMED

from ..bounds.statistics import detectable_epsilon, event_bounds, one_sided_lower, one_sided_upper
from ..interfaces import ChosenEvent
from ..values import value_candidate_events
from ..values.outcome_events import candidate_events

__all__ = [
    "NAMED",
    "POWER_CANDIDATES",
    "SCREEN_CAUTION",
    "SELECT_CAUTION",
    "choose_events",
    "score_pairs",
    "screen_rounds",
    "screen_scores",
    "split_tally",
    "split_value_tally",
    "support_changes",
    "survivors",
    "with_delta_slot",
    "with_epsilon_slot",
    "with_named_pairs",
]

#: One-sided level of the cautious frequencies of the screening's first ranking.
SCREEN_CAUTION = 0.1
#: One-sided level of the cautious frequencies that rank a value release's events.
SELECT_CAUTION = 0.1


def screen_rounds(n_pairs, keep):
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
    _, _, eps_b, delta_b = event_bounds(
        np.round(sp), n_target, np.round(sq), n_target, alpha_each, epsilon, delta
    )
    return np.atleast_1d(eps_b), np.atleast_1d(delta_b)


def split_tally(counter, n):
    """Two independent halves of the samples ``{outcome: count}`` (``n`` in all).

    Each sample goes to the first half with probability ½ (binomial thinning): given
    the halves' sizes, the two are independent draws of the same law. The split is a
    function of the tallies alone (a generator seeded by their content), so an audit
    stays the same for a seed in one process, a pool or a cluster.

    Returns ``(first, n_first, second, n_second)``.
    """
    outcomes, counts, rng = _seeded_by(counter, n)
    first = rng.binomial(counts, 0.5)
    return _halves(outcomes, counts, first, int(first.sum()), n)


def _seeded_by(counter, n):
    """``(outcomes sorted, their counts, a generator seeded by the tally's content)``."""
    outcomes = sorted(counter)
    counts = np.fromiter((counter[o] for o in outcomes), dtype=np.int64, count=len(outcomes))
    digest = hashlib.blake2b(repr((int(n), outcomes, counts.tolist())).encode(), digest_size=16)
    return outcomes, counts, np.random.default_rng(int.from_bytes(digest.digest(), "little"))


def _halves(outcomes, counts, first, n_first, n):
    """``(first, n_first, second, n − n_first)`` as tallies, from the first half's counts."""
    second = counts - first
    return (
        {o: int(c) for o, c in zip(outcomes, first) if c},
        n_first,
        {o: int(c) for o, c in zip(outcomes, second) if c},
        int(n) - n_first,
    )


def split_value_tally(counter, n):
    """Two independent halves of a value release's samples ``{key: count}`` (``n`` in all).

    A value tally has one key per sample in each view of its encoder (the key leads with
    the view), so its counts sum to ``n`` times the number of views and a key-by-key
    thinning would give every view halves of its own size. Here each view's samples are
    split into exactly ``n // 2`` and ``n − n // 2`` at random (a multivariate
    hypergeometric draw over the view's keys): a uniformly random part of fixed size of
    i.i.d. samples is itself i.i.d. and independent of the rest, and every event, which
    lives in one view, is counted on halves of the same two sizes. Seeded by the tally's
    content, as [`split_tally`][dpaudit.auditor.search.screening.split_tally].

    Returns ``(first, n // 2, second, n − n // 2)``.
    """
    outcomes, counts, rng = _seeded_by(counter, n)
    half = int(n) // 2
    if int(counts.sum()) == int(n):  # one key per sample (a release of items only)
        views = np.zeros(len(outcomes), dtype=np.int64)
    else:
        views = np.fromiter((o[0] for o in outcomes), dtype=np.int64, count=len(outcomes))
    first = np.zeros_like(counts)
    for view in np.unique(views):
        rows = np.flatnonzero(views == view)
        if int(counts[rows].sum()) != int(n):
            raise ValueError(
                f"a value tally of {n} samples has view {view} with "
                f"{int(counts[rows].sum())} keys: expected one key per sample"
            )
        first[rows] = rng.multivariate_hypergeometric(counts[rows], half, method="marginals")
    return _halves(outcomes, counts, first, half, n)


def _integer_candidates(a, na, b, nb, focus, shift, halves):
    """Candidate events of one direction: ``[(events, hits P, n P, hits Q, n Q), ...]``.

    The likelihood-ratio unions and single outcomes are ranked on one half of the
    samples and counted on the other ([`split_tally`][dpaudit.auditor.search.screening.split_tally]), so
    that their frequencies predict what fresh samples will show: ranked and counted on the same
    samples, the union of the outcomes that fell on P's side by chance looks ε-violating on any pair
    with many outcomes (a 10-query sparse vector has 1024) and crowds out the pairs
    where the mechanism really leaks. The structural events are fixed before looking
    at the samples and are counted on all of them.
    """
    rank_a, m_a, eval_a, k_a = _halves_of(a, na, halves)
    rank_b, m_b, eval_b, k_b = _halves_of(b, nb, halves)
    ranked = candidate_events(
        eval_a, k_a, eval_b, k_b, structural=False, rank_by=(rank_a, m_a, rank_b, m_b)
    )
    fixed = candidate_events(a, na, b, nb, focus=focus, shift=shift, ranked=False)
    return [(ranked[0], ranked[1], k_a, ranked[2], k_b), (fixed[0], fixed[1], na, fixed[2], nb)]


def _halves_of(counter, n, halves, split=split_tally):
    """``split(counter, n)``, memoised in ``halves`` (a histogram's tally is shared by
    many pairs; the memo keeps the counter, so that its id stays unique)."""
    if id(counter) not in halves:
        halves[id(counter)] = (counter, split(counter, n))
    return halves[id(counter)][1]


def _value_candidates(encoder, a, na, b, nb, focus, cache, halves):
    """A value release's candidate events of one direction: ``(events, hits P, n P, hits Q,
    n Q)``, unions chosen on one half of the samples and every event counted on the other
    (``_integer_candidates``' reason,
    [`values.candidates.value_candidate_events`][dpaudit.auditor.values.candidates.value_candidate_events])."""
    rank_a, m_a, eval_a, k_a = _halves_of(a, na, halves, split_value_tally)
    rank_b, m_b, eval_b, k_b = _halves_of(b, nb, halves, split_value_tally)
    evs, hp, hq = value_candidate_events(
        encoder,
        eval_a,
        k_a,
        eval_b,
        k_b,
        focus=focus,
        cache=cache,
        rank_by=(rank_a, m_a, rank_b, m_b),
    )
    return evs, hp, k_a, hq, k_b


def _event_table(pairs, pooled, encoder=None):
    """Every candidate event of every pair in both directions, with its hits and sample sizes.

    The outcome unions (of items, or of a value release's cells) are chosen on one half
    of each histogram's samples and every event is counted on the other
    (``_integer_candidates``, ``_value_candidates``).

    ``encoder``: the samples are keys of a
    [`value_encoding.ValueEncoder`][dpaudit.auditor.values.encoders.ValueEncoder] (a mechanism
    releasing real values), whose own candidate events are used.
    """
    owners, directions, events, hps, nps, hqs, nqs = [], [], [], [], [], [], []
    cache: dict = {}
    halves: dict = {}
    for index, pair in enumerate(pairs):
        shift = np.asarray(pair.counts) - np.asarray(pair.counts2)
        focus = np.flatnonzero(shift)
        cp, n_p = pooled[pair.counts]
        cq, n_q = pooled[pair.counts2]
        for a, na, b, nb, direction in ((cp, n_p, cq, n_q, 0), (cq, n_q, cp, n_p, 1)):
            if encoder is None:
                oriented = shift if direction == 0 else -shift
                parts = _integer_candidates(a, na, b, nb, focus, oriented, halves)
            else:
                parts = [_value_candidates(encoder, a, na, b, nb, focus, cache, halves)]
            for evs, hp, na_, hq, nb_ in parts:
                owners += [index] * len(evs)
                directions += [direction] * len(evs)
                events += evs
                hps.append(hp)
                hqs.append(hq)
                nps.append(np.full(len(evs), max(na_, 1), dtype=float))
                nqs.append(np.full(len(evs), max(nb_, 1), dtype=float))
    if not events:
        return owners, directions, events, *(np.zeros(0) for _ in range(4))
    return (
        owners,
        directions,
        events,
        np.concatenate(hps),
        np.concatenate(nps),
        np.concatenate(hqs),
        np.concatenate(nqs),
    )


def _predict_where(useful, fp, fq, n_target, alpha_each, claim):
    eps_b = np.zeros(fp.size)
    delta_b = np.zeros(fp.size)
    if useful.any():
        eps_b[useful], delta_b[useful] = _predicted(
            fp[useful], fq[useful], n_target, alpha_each, claim.epsilon, claim.delta
        )
    return eps_b, delta_b


def score_pairs(pairs, pooled, n_target, alpha_each, claim, encoder=None, caution=None):
    """Predicted bounds of every candidate event of every pair, in both directions.

    Returns ``[[(ε bound, δ bound, direction, event, P̂, Q̂), ...] per pair]``. All
    Clopper–Pearson intervals of all pairs are computed in one vectorized call. The
    outcome unions (of items, or of a value release's cells) are ranked on one half of
    the samples and counted on the other (``_integer_candidates``,
    ``_value_candidates``), so that a union is not picked for the chance excess of
    the samples that built it.

    ``caution``: predict from the cautious frequencies (lower Clopper–Pearson bound of
    ``P̂``, upper of ``Q̂``, each one-sided at level ``caution``) instead of the plug-in
    ones, so that an event seen a few tens of times does not win on its sampling noise.
    ``P̂`` and ``Q̂`` in the result stay the plug-in frequencies.
    """
    owners, directions, events, hp, n_p, hq, n_q = _event_table(pairs, pooled, encoder)
    result: list[list] = [[] for _ in pairs]
    if not events:
        return result
    fp = hp / n_p
    fq = hq / n_q
    # Only events more likely under P than under Q (and seen often enough to matter)
    # can give a positive bound; the others score 0 without the costly beta quantiles.
    useful = (fp > fq) & (fp * n_target >= 1)
    if caution is None:
        eps_b, delta_b = _predict_where(useful, fp, fq, n_target, alpha_each, claim)
    else:
        cp, cq = np.zeros(fp.size), np.ones(fq.size)
        if useful.any():
            cp[useful] = one_sided_lower(hp[useful], n_p[useful], caution)
            cq[useful] = one_sided_upper(hq[useful], n_q[useful], caution)
        careful = useful & (cp > cq) & (cp * n_target >= 1)
        eps_b, delta_b = _predict_where(careful, cp, cq, n_target, alpha_each, claim)
    for owner, direction, event, e, dl, p, q in zip(
        owners, directions, events, eps_b, delta_b, fp, fq
    ):
        result[owner].append((float(e), float(dl), direction, event, float(p), float(q)))
    return result


def screen_scores(pairs, pooled, n_target, alpha_each, claim, caution=SCREEN_CAUTION, encoder=None):
    """Four scores per pair: ``[(beyond the claim, cautious ε, plug-in ε, plug-in δ), ...]``.

    Each is the best over the pair's events (both directions) of a bound
    predicted on ``n_target`` fresh samples, from

    * beyond the claim: how far the cautious predicted bounds go past the claim, the
      larger of ``ε bound / ε`` and ``δ bound / δ`` — the hockey-stick divergence
      ``P − e^ε Q`` at the claimed ε (lower-bounded, as the confirmation will) measured
      in claimed δs, beside the ε estimate in claimed εs. A pair is ranked by what can
      violate the claim: an event with ``P`` about 1.3 % and ``Q = 0`` is worth 2.7 claims
      of δ = 0.0049 and ranks high, though its ε estimate says little. (A claim of δ = 0
      is measured by ε alone.)

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

    The likelihood-ratio unions of outcomes (or of value cells) are ranked on one half of
    each histogram's samples and counted on the other
    ([`split_tally`][dpaudit.auditor.search.screening.split_tally],
    [`split_value_tally`][dpaudit.auditor.search.screening.split_value_tally]): screening compares hundreds
    of pairs on a few hundred samples each, where a union ranked and counted on the same samples
    looks violating on any pair with many outcomes.
    """
    owners, _, events, hp, n_p, hq, n_q = _event_table(pairs, pooled, encoder)
    scores = np.zeros((len(pairs), 4))
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
    eps_careful, delta_careful = _predict_where(careful, cp, cq, n_target, alpha_each, claim)
    beyond = eps_careful / max(float(claim.epsilon), 1e-12)
    if float(claim.delta) > 0:
        beyond = np.maximum(beyond, delta_careful / float(claim.delta))
    owners = np.asarray(owners)
    for column, values in enumerate((beyond, eps_careful, eps_plain, delta_plain)):
        np.maximum.at(scores[:, column], owners, values)
    return [tuple(float(v) for v in row) for row in scores]


def survivors(pairs, scores, size):
    """``size`` pairs taken in turn from the four rankings of [`screen_scores`][dpaudit.auditor.search.screening.screen_scores].

    The beyond-the-claim ranking picks first, then cautious ε, plug-in ε and plug-in δ
    (the final round, ``size = keep = 3``, takes the best of the first three); ties break
    on the other scores, then on candidate order.
    """
    index = range(len(pairs))
    rankings = [
        sorted(index, key=lambda i: (-scores[i][0], -scores[i][1])),
        sorted(index, key=lambda i: (-scores[i][1], -scores[i][3])),
        sorted(index, key=lambda i: (-scores[i][2], -scores[i][3])),
        sorted(index, key=lambda i: (-scores[i][3], -scores[i][2])),
    ]
    picked: list = []
    seen: set = set()
    for group in zip(*rankings):
        for i in group:
            if len(picked) < size and i not in seen:
                seen.add(i)
                picked.append(pairs[i])
    return picked


def support_changes(pair) -> bool:
    """Some item is present (count > 0) on one histogram of ``pair`` and absent on the other.

    ``pair``: anything with ``counts`` and ``counts2`` (a pair, a witness).
    """
    return bool(np.any((np.asarray(pair.counts) == 0) != (np.asarray(pair.counts2) == 0)))


def with_named_pairs(kept, scored, keep):
    """``kept``, with the pairs the user named (``pairs=``) confirmed first, up to ``keep``.

    A pair the user names is the one they suspect: confirming it costs one slot and
    answers their question, whereas screening it against hundreds of candidates on a
    few hundred samples can drop it (a sparse vector's leak at ε = 0.1 needs millions
    of samples to show). The named pairs come first, those screening kept, then the
    others best first by [`survivors`][dpaudit.auditor.search.screening.survivors]' rankings, in the slots
    of the worst screened pairs. When screening kept ``keep`` named pairs already (the user named
    that many or more), its choice stands, as with ``restrict=True``. The choice looks only at what
    the user gave and at screening's samples, so the bounds stay valid.

    Parameters
    ----------
    kept : the pairs screening kept, best first.
    scored : ``{pair: scores}`` ([`screen_scores`][dpaudit.auditor.search.screening.screen_scores]) of
        every screened pair.
    keep : pairs carried to selection and confirmation.
    """
    named_kept = [p for p in kept if p.family == NAMED]
    missing = [p for p in scored if p.family == NAMED and p not in kept]
    room = keep - len(named_kept)
    if not missing or room <= 0:
        return kept
    extra = survivors(missing, [scored[p] for p in missing], min(room, len(missing)))
    return [*named_kept, *extra, *(p for p in kept if p.family != NAMED)][:keep]


def with_delta_slot(kept, scored, claim):
    """``kept``, its last pair given to the best pair whose support changes, if none has.

    Where δ is spent — a key present with a small count against the same histogram
    without it, released with a small probability that is 0 without it — an event has
    ``Q = 0`` and ``P`` of the order of δ: screening's few hundred samples per histogram
    never see it. When the claim has ``δ > 0``, one confirmed pair is such a pair, so that
    the audit can flag a δ violation and resolve the claimed δ
    ([`statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta]): the best one by
    screening's δ score, then by its beyond-the-claim score, then in candidate order.

    Parameters
    ----------
    kept : the pairs screening kept.
    scored : ``{pair: scores}`` ([`screen_scores`][dpaudit.auditor.search.screening.screen_scores]) of
        every screened pair, in candidate order (a pair's latest round).
    claim : the claim audited.
    """
    if float(claim.delta) <= 0 or not kept or any(support_changes(p) for p in kept):
        return kept
    return _last_slot_to(kept, scored, support_changes, lambda s: (-s[3], -s[0]))


def with_epsilon_slot(kept, scored, claim):
    """``kept``, its last pair given to the best pair whose support stays, if every one changes.

    The mirror of [`with_delta_slot`][dpaudit.auditor.search.screening.with_delta_slot]. A pair whose
    support changes is where δ is spent, but its events have ``Q = 0`` (or ``Q`` of the order of δ):
    they resolve δ and tell nothing of ε, so an audit that keeps only such pairs cannot reach power
    on ε ([`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon] of a
    ``Q = 0`` event is several times the claim) and ends INCONCLUSIVE on a correct mechanism. When
    the claim has ``δ > 0`` and more than one pair is kept, one confirmed pair keeps its support:
    the best one by screening's cautious ε score, then its plug-in ε score, then in candidate order.
    The other kept pairs still chase δ.

    Parameters
    ----------
    kept : the pairs screening kept (after
        [`with_delta_slot`][dpaudit.auditor.search.screening.with_delta_slot]).
    scored : ``{pair: scores}`` ([`screen_scores`][dpaudit.auditor.search.screening.screen_scores]) of
        every screened pair, in candidate order (a pair's latest round).
    claim : the claim audited.
    """
    if float(claim.delta) <= 0 or len(kept) < 2:
        return kept
    if not all(support_changes(p) for p in kept):
        return kept
    return _last_slot_to(kept, scored, lambda p: not support_changes(p), lambda s: (-s[1], -s[2]))


def _last_slot_to(kept, scored, eligible, rank):
    """``kept`` with its last pair replaced by the eligible screened pair not kept that
    ranks first (``rank(scores)`` ascending, then candidate order); unchanged if none."""
    options = [(pair, s) for pair, s in scored.items() if eligible(pair) and pair not in kept]
    # A pair the user named keeps its slot (``with_named_pairs``).
    if not options or kept[-1].family == NAMED:
        return kept
    best = min(range(len(options)), key=lambda i: (*rank(options[i][1]), i))
    return [*kept[:-1], options[best][0]]


#: Events per pair and direction whose detectable ε ``_by_power`` computes (the likeliest).
POWER_CANDIDATES = 12


def _by_power(cands, n_target, alpha_each, claim):
    """``cands`` best first by the detectable ε they would give on ``n_target`` samples.

    Under a claim with δ = 0 an event whose ``Q`` is 0 is an ε violation, which the ε
    ranking finds; the pick left for δ gives the audit its power instead. On a correct
    mechanism the events nearest the claim are rare, and a true ε of 1.25 times the claim
    on them is beyond reach; a likely event (``Q`` of a few tens of percent) resolves it
    ([`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon]). Only the
    ``POWER_CANDIDATES`` likeliest events of each direction are bounded, the rest follow in the δ
    order.
    """
    likely = sorted((c for c in cands if c[4] > 0 and c[5] > 0), key=lambda c: -min(c[4], c[5]))
    heads: dict = {}
    for c in likely:
        if len(heads.setdefault(c[2], [])) < POWER_CANDIDATES:
            heads[c[2]].append(c)
    power = {
        id(c): detectable_epsilon(
            round(c[5] * n_target), n_target, n_target, alpha_each, claim.epsilon, claim.delta
        )
        for group in heads.values()
        for c in group
    }
    return sorted(
        cands,
        key=lambda c: (power.get(id(c), math.inf), -c[1], c[4] <= 0, c[5], -c[4], -c[0]),
    )


def choose_events(kept, pooled, n_target, alpha_each, claim, events_per_pair, encoder=None):
    """The events to confirm: ``[ChosenEvent(pair, pair oriented P -> Q, event), ...]``.

    Per kept pair, the best events by predicted ε bound at the claimed δ, then by
    predicted δ bound at the claimed ε, in both directions, on the pooled
    pre-confirmation samples ``pooled[histogram] = (Counter, n)``. Among events whose
    predicted δ bounds tie (all 0 on a correct mechanism), the δ pick is the one with
    the smallest ``Q̂`` and then the largest ``P̂``: an event near ``Q = 0`` is where
    the audit can resolve the smallest δ
    ([`statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta]). Under a claim
    with δ = 0 that pick is the event with the smallest predicted detectable ε (``_by_power``).
    """
    chosen = []
    # A value release's candidates include hundreds of small learned regions: ranked by
    # plug-in frequencies, one seen a few tens of times wins on its noise (SELECT_CAUTION).
    caution = None if encoder is None else SELECT_CAUTION
    scored = score_pairs(kept, pooled, n_target, alpha_each, claim, encoder, caution=caution)
    for pair, cands in zip(kept, scored):
        picks: list = []
        by_eps = sorted(cands, key=lambda c: (-c[0], -c[1]))
        if float(claim.delta) > 0:
            by_delta = sorted(cands, key=lambda c: (-c[1], c[4] <= 0, c[5], -c[4], -c[0]))
        else:
            by_delta = _by_power(cands, n_target, alpha_each, claim)
        n_eps = max(1, events_per_pair - 1)
        for c in by_eps[:n_eps] + by_delta[: events_per_pair - n_eps]:
            if (c[2], c[3]) not in [(p[2], p[3]) for p in picks]:
                picks.append(c)
        for c in by_eps[n_eps:]:
            if len(picks) >= events_per_pair:
                break
            if (c[2], c[3]) not in [(p[2], p[3]) for p in picks]:
                picks.append(c)
        for c in picks:
            oriented = pair if c[2] == 0 else pair.swapped()
            chosen.append(ChosenEvent(pair, oriented, c[3]))
    return chosen
