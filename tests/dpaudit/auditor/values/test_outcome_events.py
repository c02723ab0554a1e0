"""Events: vectorized masks agree with per-outcome membership."""

from helpers import outcome_counters
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.auditor.values.outcome_events import (
    BottomAt,
    ItemAt,
    ItemOutput,
    LengthAtLeast,
    OutcomeSet,
    SignedCountAtLeast,
    event_from_dict,
    outcome_matrix,
)


@settings(max_examples=100, deadline=None)
@given(outcome_counters)
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


@settings(max_examples=100, deadline=None)
@given(outcome_counters, st.integers(-2, 3))
def test_signed_count_mask_agrees_with_contains(counter, score):
    outcomes = list(counter)
    matrix = outcome_matrix(outcomes)
    event = SignedCountAtLeast((0, 2, 4), (1, 3), score)
    mask = event.mask(outcomes, matrix)
    assert list(mask) == [event.contains(o) for o in outcomes]
    assert event_from_dict(event.to_dict()) == event


def test_signed_count_scores_up_items_against_down_items():
    event = SignedCountAtLeast((0, 1, 2), (3, 4), 2)
    assert event.contains((0, 1)) and event.contains((0, 1, 2, 3))
    assert not event.contains((0, 1, 3)) and not event.contains(())
    assert "at least 2 more of items [0, 1, 2] than of items [3, 4]" in event.describe()
