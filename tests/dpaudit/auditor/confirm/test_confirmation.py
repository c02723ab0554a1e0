"""Confirmation (dpaudit.auditor.confirm.confirmation): bounds on fresh samples, in looks.

The looks' budget, reserve and focus rules are tested in
tests/dpaudit/auditor/test_budget_and_power.py.
"""

from collections import Counter

import pytest

import mechanisms as M
from dpaudit.auditor.bounds.sequential import LookSchedule
from dpaudit.auditor.bounds.statistics import event_bounds
from dpaudit.auditor.confirm.confirmation import (
    affordable,
    confirm_events,
    confirm_sequentially,
    next_looks,
    summarise,
)
from dpaudit.auditor.values.outcome_events import ItemOutput
from dpaudit.neighbours.pairs import NeighbourPair

CLAIM = M.PrivacyClaim(0.5, 1e-6, M.AddRemoveUser())
PAIR = NeighbourPair((1, 0), (0, 0), "x")


def test_confirm_events_bounds_each_event_on_its_oriented_pair():
    samples = {
        PAIR.counts: (Counter({(0,): 900, (1,): 100}), 1_000),
        PAIR.counts2: (Counter({(1,): 1_000}), 1_000),
    }
    [w] = confirm_events([(PAIR, PAIR, ItemOutput(0))], samples, 0.01, CLAIM)
    assert (w.hits_p, w.samples_p, w.hits_q, w.samples_q) == (900, 1_000, 0, 1_000)
    p_low, q_high, eps_b, _ = event_bounds(900, 1_000, 0, 1_000, 0.01, 0.5, 1e-6)
    assert (w.p_low, w.q_high, w.epsilon_lower) == (p_low, q_high, eps_b)
    summary = summarise([w], CLAIM)
    assert summary["violation"] and summary["epsilon_witness"] is w


def test_next_looks_lift_a_shared_histogram_to_the_later_look():
    a = NeighbourPair((1, 0), (0, 0), "x")
    b = NeighbourPair((0, 0), (0, 1), "x")
    assert next_looks([a, b], {(1, 0): 2, (0, 0): 0, (0, 1): 0}, 3) == {
        (1, 0): 3,
        (0, 0): 3,
        (0, 1): 3,
    }
    assert next_looks([a], {(1, 0): 3}, 3) == {}
    assert affordable([a, b], [b], lambda group: 10 if group == [a] else 5, 6) == [b]


@pytest.mark.parametrize("enough_at", [0, 2])
def test_looks_go_on_until_enough(enough_at):
    steps = []

    def draw(step, moves, active):
        steps.append((step, sorted(set(moves.values()))))
        return {}

    def tester(mine, samples, level, claim):
        return [len(steps)]

    witnesses, last_look, stopped = confirm_sequentially(
        [(PAIR, PAIR, None)],
        draw,
        LookSchedule(100, 2.0, 4),
        0.01,
        CLAIM,
        enough=lambda found: found[0] > enough_at,
        budget=10_000,
        focus=lambda latest, going_on: list(latest),
        tester=tester,
    )
    assert steps == [(k, [(k - 1, k)]) for k in range(enough_at + 1)]
    assert witnesses == [enough_at + 1] and last_look == {0: enough_at} and stopped is None
