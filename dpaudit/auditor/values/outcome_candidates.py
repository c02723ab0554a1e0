"""Candidate outcome events of a pair, with their hits, from selection samples only.

Unions of outcomes ranked by their estimated likelihood ratio and structural predicates
([`outcome_events`][dpaudit.auditor.values.outcome_events]): the events screening and selection
score before confirmation bounds the chosen ones on fresh samples.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from mechanisms import BOTTOM

from .outcome_events import (
    BottomAt,
    Event,
    ItemAt,
    ItemOutput,
    ItemsFromAtLeast,
    LengthAtLeast,
    OutcomeSet,
    SignedCountAtLeast,
    outcome_matrix,
)

__all__ = ["candidate_events", "structural_events"]


def structural_events(outcomes, focus=(), shift=None) -> list[Event]:
    """Structural events over the items and lengths seen in ``outcomes``.

    ``focus``: the items whose counts differ between the pair's histograms; "at least m of
    them output" is added for every m (a user moving many counts moves this most).
    ``shift``: P's counts minus Q's per item; where it moves some counts up and others
    down, "at least s more of the up items than of the down items output" is added for
    every s from 1 to the most the outputs allow
    ([`SignedCountAtLeast`][dpaudit.auditor.values.outcome_events.SignedCountAtLeast]).
    """
    items = sorted({v for o in outcomes for v in o if v != BOTTOM})
    positions = max((len(o) for o in outcomes), default=0)
    events: list[Event] = [ItemOutput(j) for j in items]
    focus = tuple(sorted(int(i) for i in focus))
    if len(focus) > 1:
        events.extend(ItemsFromAtLeast(focus, m) for m in range(1, min(len(focus), positions) + 1))
    if shift is not None:
        shift = np.asarray(shift)
        up = tuple(int(i) for i in np.flatnonzero(shift > 0))
        down = tuple(int(i) for i in np.flatnonzero(shift < 0))
        if up and down:
            top = min(len(up), positions)
            events.extend(SignedCountAtLeast(up, down, s) for s in range(1, top + 1))
    for position in range(positions):
        events.extend(ItemAt(j, position) for j in items)
        events.append(BottomAt(position))
        events.append(LengthAtLeast(position + 1))
    return events


def _looked_up(counter, outcomes) -> np.ndarray:
    """``counter[o]`` (0 when absent) for each of ``outcomes``, as floats."""
    return np.fromiter(map(counter.get, outcomes, repeat(0)), dtype=float, count=len(outcomes))


def candidate_events(
    counter_p,
    n_p,
    counter_q,
    n_q,
    max_union=64,
    structural=True,
    focus=(),
    shift=None,
    ranked=True,
    rank_by=None,
):
    """Candidate events for "P large, Q small" with their hits, from selection samples only.

    Returns ``(events, hits_p, hits_q)``. Candidates: single outcomes and
    unions of the top-``r`` outcomes ranked by the estimated likelihood ratio
    ``(hits_p + ½)/n_p ÷ (hits_q + ½)/n_q``, ``r`` on a geometric grid (when
    ``ranked``); plus the structural events (``focus``, ``shift``:
    [`structural_events`][dpaudit.auditor.values.outcome_candidates.structural_events]).

    ``rank_by``: ``(counter_p, n_p, counter_q, n_q)`` of other samples on which the
    outcomes are ranked, so that the hits of the ranked events on the given counters are
    honest estimates of their probabilities (on the samples that ranked them, a union of
    the outcomes that happened to fall on P's side looks far better than it is).
    """
    if rank_by is None:
        rank_by = (counter_p, n_p, counter_q, n_q)
    rank_p, m_p, rank_q, m_q = rank_by
    seen_p, seen_q = set(counter_p), set(counter_q)
    # The same sets when ranking on the counted samples: no key hashed twice.
    rank_seen_p = seen_p if rank_p is counter_p else set(rank_p)
    rank_seen_q = seen_q if rank_q is counter_q else set(rank_q)
    outcomes = list(seen_p | seen_q | rank_seen_p | rank_seen_q)
    if not outcomes:
        return [], np.zeros(0), np.zeros(0)
    hp = _looked_up(counter_p, outcomes)
    hq = _looked_up(counter_q, outcomes)
    events: list[Event] = []
    ep: list[float] = []
    eq: list[float] = []
    if ranked:
        rp = hp if rank_p is counter_p else _looked_up(rank_p, outcomes)
        rq = hq if rank_q is counter_q else _looked_up(rank_q, outcomes)
        # The +½ keeps outcomes unseen on Q finite while still favouring them.
        ratio = ((rp + 0.5) / max(m_p, 1)) / ((rq + 0.5) / max(m_q, 1))
        _add_ranked(outcomes, (hp, hq), rp, ratio, max_union, (events, ep, eq))
    if structural:
        matrix = outcome_matrix(outcomes)
        for event in structural_events(outcomes, focus, shift):
            m = event.mask(outcomes, matrix)
            events.append(event)
            ep.append(hp[m].sum())
            eq.append(hq[m].sum())
    return events, np.asarray(ep), np.asarray(eq)


def _add_ranked(outcomes, hits, rp, ratio, max_union, found) -> None:
    """Append to ``found = (events, hits P, hits Q)`` the unions of the top outcomes by
    ``ratio`` (sizes on a geometric grid up to ``max_union``, and all of them) and the single
    outcomes of highest ratio and of most hits ``rp`` on the ranking samples."""
    hp, hq = hits
    events, ep, eq = found
    order = np.lexsort((-rp, -ratio))
    order = order[rp[order] > 0]
    cum_p = np.cumsum(hp[order])
    cum_q = np.cumsum(hq[order])
    n = len(order)
    sizes = {1, 2, 3, n}
    r = 4.0
    while r < min(n, max_union):
        sizes.add(int(r))
        r *= 1.5
    for r in sorted(s for s in sizes if 1 <= s <= n):
        events.append(OutcomeSet(frozenset(map(outcomes.__getitem__, order[:r].tolist()))))
        ep.append(cum_p[r - 1])
        eq.append(cum_q[r - 1])
    # Single outcomes: the high-ratio ones and the most likely ones. Hits tie often, and
    # numpy's default argsort breaks ties by its SIMD path (AVX-512 another way than AVX2):
    # a stable sort keeps an audit the same for a seed on every CPU.
    singles = list(order[:16]) + list(np.argsort(-rp, kind="stable")[:8])
    for i in dict.fromkeys(int(i) for i in singles):
        if rp[i] > 0:
            events.append(OutcomeSet(frozenset([outcomes[i]])))
            ep.append(hp[i])
            eq.append(hq[i])
