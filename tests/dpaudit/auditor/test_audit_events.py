"""Events: vectorized masks agree with per-outcome membership; candidate hits are right."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.auditor.events import (
    BottomAt,
    ItemAt,
    ItemOutput,
    LengthAtLeast,
    OutcomeSet,
    candidate_events,
    event_hits,
    outcome_matrix,
)

outcome = st.lists(st.integers(0, 5), max_size=3, unique=True).flatmap(
    lambda items: st.sampled_from([tuple(items), tuple(items) + (-1,)])
)
counters = st.dictionaries(outcome, st.integers(1, 50), min_size=1, max_size=15).map(Counter)


@settings(max_examples=100, deadline=None)
@given(counters)
def test_masks_agree_with_contains(counter):
    outcomes = list(counter)
    matrix = outcome_matrix(outcomes)
    events = [
        ItemOutput(1),
        ItemAt(2, 0),
        ItemAt(-1, 1),
        LengthAtLeast(2),
        BottomAt(1),
        BottomAt(0),
        OutcomeSet(frozenset(outcomes[:2])),
    ]
    for event in events:
        mask = event.mask(outcomes, matrix)
        assert list(mask) == [event.contains(o) for o in outcomes], event


@settings(max_examples=60, deadline=None)
@given(counters, counters)
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
