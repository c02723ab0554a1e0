"""Screening: rank candidate pairs from pre-confirmation samples by the bounds their events predict.

The tester role of DESIGN.md's auditor, first half: everything here looks only at
samples drawn BEFORE confirmation (search, screening, selection), and turns outcome
counts into predicted bounds — which pairs to keep. The events to confirm are chosen by
[`selection`][dpaudit.auditor.search.selection], the slots of the kept pairs adjusted by
[`slots`][dpaudit.auditor.search.slots]; the second half,
[`confirmation`][dpaudit.auditor.confirm.confirmation], bounds the chosen events on fresh
samples.
"""

from __future__ import annotations

import numpy as np

from ..bounds.statistics import event_bounds, one_sided_lower, one_sided_upper
from .event_table import event_table

__all__ = [
    "SCREEN_CAUTION",
    "score_pairs",
    "screen_rounds",
    "screen_scores",
    "survivors",
]

#: One-sided level of the cautious frequencies of the screening's first ranking.
SCREEN_CAUTION = 0.1


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
    owners, directions, events, hp, n_p, hq, n_q = event_table(pairs, pooled, encoder)
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
    ([`split_tally`][dpaudit.auditor.search.halves.split_tally],
    [`split_value_tally`][dpaudit.auditor.search.halves.split_value_tally]): screening compares hundreds
    of pairs on a few hundred samples each, where a union ranked and counted on the same samples
    looks violating on any pair with many outcomes.
    """
    owners, _, events, hp, n_p, hq, n_q = event_table(pairs, pooled, encoder)
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
