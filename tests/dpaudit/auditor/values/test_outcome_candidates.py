"""Candidate outcome events (dpaudit.auditor.values.outcome_candidates): hits and rankings."""

from collections import Counter

import numpy as np
from helpers import outcome_counters
from hypothesis import given, settings

from dpaudit.auditor.values.outcome_candidates import candidate_events, structural_events
from dpaudit.auditor.values.outcome_events import (
    BottomAt,
    ItemAt,
    OutcomeSet,
    SignedCountAtLeast,
    event_hits,
)


@settings(max_examples=60, deadline=None)
@given(outcome_counters, outcome_counters)
def test_candidate_hits_are_exact(p, q):
    events, hp, hq = candidate_events(p, sum(p.values()), q, sum(q.values()))
    assert events
    for event, a, b in zip(events, hp, hq):
        assert a == event_hits(event, p) and b == event_hits(event, q)


def test_best_ratio_outcome_ranked_first():
    p = Counter({(0,): 500, (1,): 400, (2,): 100})
    q = Counter({(0,): 100, (1,): 400, (2,): 500})
    events, _, _ = candidate_events(p, 1000, q, 1000)
    assert events[0] == OutcomeSet(frozenset({(0,)}))
    assert "item 0" in ItemAt(0, 0).describe() and "⊥" in BottomAt(1).describe()


def test_structural_events_lean_towards_the_items_a_pair_moves_up():
    outcomes = [(0, 1, 2), (3,), ()]
    shift = np.array([1, 1, -1, -1, 0])
    signed = [
        e for e in structural_events(outcomes, shift=shift) if isinstance(e, SignedCountAtLeast)
    ]
    # one event per score from 1 to min(#up items, longest output)
    assert signed == [SignedCountAtLeast((0, 1), (2, 3), s) for s in (1, 2)]
    # a pair moving every count the same way has no signed events (ItemsFromAtLeast covers it)
    same_way = structural_events(outcomes, focus=(0, 1), shift=np.array([1, 1, 0, 0, 0]))
    assert not [e for e in same_way if isinstance(e, SignedCountAtLeast)]


def test_ranked_events_are_ranked_on_other_samples_and_counted_on_these():
    rank_p = Counter({(0,): 90, (1,): 10})
    rank_q = Counter({(0,): 10, (1,): 90})
    p = Counter({(0,): 30, (1,): 70})
    q = Counter({(0,): 60, (1,): 40})
    events, hp, hq = candidate_events(p, 100, q, 100, rank_by=(rank_p, 100, rank_q, 100))
    # (0,) has the best ratio on the ranking samples, though not on the counted ones
    assert events[0] == OutcomeSet(frozenset({(0,)}))
    for event, a, b in zip(events, hp, hq):
        assert a == event_hits(event, p) and b == event_hits(event, q)
