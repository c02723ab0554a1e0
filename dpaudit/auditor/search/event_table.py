"""Every candidate event of every pair in both directions, with its hits and sample sizes.

The table screening and selection score
([`screening.score_pairs`][dpaudit.auditor.search.screening.score_pairs]): outcome unions chosen
on one half of each histogram's samples ([`halves`][dpaudit.auditor.search.halves]) and counted on
the other.
"""

from __future__ import annotations

import numpy as np

from ..values import value_candidate_events
from ..values.outcome_candidates import candidate_events
from .halves import split_tally, split_value_tally

__all__ = ["event_table"]


def _integer_candidates(a, na, b, nb, focus, shift, halves):
    """Candidate events of one direction: ``[(events, hits P, n P, hits Q, n Q), ...]``.

    The likelihood-ratio unions and single outcomes are ranked on one half of the
    samples and counted on the other ([`split_tally`][dpaudit.auditor.search.halves.split_tally]), so
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


def event_table(pairs, pooled, encoder=None):
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
