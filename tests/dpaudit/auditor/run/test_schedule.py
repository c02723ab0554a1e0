"""What each phase draws (dpaudit.auditor.run.schedule)."""

import dataclasses

import pytest

from dpaudit.auditor.bounds.sequential import LookSchedule
from dpaudit.auditor.run.live import LiveSchedule
from dpaudit.auditor.run.schedule import Looks, Schedule, histograms_of
from dpaudit.neighbours.pairs import NeighbourPair


def test_histograms_of_lists_each_histogram_once_in_order_of_appearance():
    pairs = [NeighbourPair((1, 0), (0, 0), "x"), NeighbourPair((0, 0), (0, 1), "x")]
    assert histograms_of(pairs) == [(1, 0), (0, 0), (0, 1)]
    assert histograms_of([]) == []


def test_looks_are_frozen_and_a_live_schedule_has_every_member_of_the_protocol():
    looks = Looks(LookSchedule(100, 2.0, 4), 1_000, 1.25, False, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        looks.budget = 2  # type: ignore[misc]
    members = [m for m in vars(Schedule) if not m.startswith("_")]
    assert members and all(hasattr(LiveSchedule, m) for m in members)
