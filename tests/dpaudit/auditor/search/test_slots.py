"""The slots of the kept pairs (dpaudit.auditor.search.slots): named pairs, one for δ, one for ε.

The named-pair rules are tested with the budget in tests/dpaudit/auditor/test_budget_and_power.py.
"""

import mechanisms as M
from dpaudit.auditor.search.slots import support_changes, with_delta_slot, with_epsilon_slot
from dpaudit.neighbours.pairs import NeighbourPair

WITH_DELTA = M.PrivacyClaim(1.0, 1e-5, M.AddRemoveUser())
PURE = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())
STAYS_A = NeighbourPair((3, 3, 3), (4, 3, 3), "add/remove")
STAYS_B = NeighbourPair((3, 2, 3), (4, 2, 3), "add/remove")
ADDED_A = NeighbourPair((1, 3, 3), (0, 3, 3), "add/remove")
ADDED_B = NeighbourPair((0, 1, 3), (0, 0, 3), "add/remove")


def test_support_changes_when_an_item_appears():
    assert support_changes(ADDED_A)
    assert not support_changes(STAYS_A)


def test_the_last_slot_goes_to_the_best_pair_for_delta_only_when_none_has_it():
    scored = {
        STAYS_A: (2.0, 2.0, 2.0, 0.0),
        STAYS_B: (1.0, 1.0, 1.0, 0.0),
        ADDED_A: (0.0, 0.0, 0.0, 0.1),
        ADDED_B: (0.0, 0.0, 0.0, 0.3),
    }
    assert with_delta_slot([STAYS_A, STAYS_B], scored, WITH_DELTA) == [STAYS_A, ADDED_B]
    assert with_delta_slot([STAYS_A, ADDED_A], scored, WITH_DELTA) == [STAYS_A, ADDED_A]
    assert with_delta_slot([STAYS_A, STAYS_B], scored, PURE) == [STAYS_A, STAYS_B]


def test_the_last_slot_goes_to_the_best_pair_for_epsilon_when_every_pair_chases_delta():
    scored = {
        ADDED_A: (0.0, 0.0, 0.0, 0.1),
        ADDED_B: (0.0, 0.0, 0.0, 0.3),
        STAYS_A: (1.0, 1.0, 1.0, 0.0),
        STAYS_B: (2.0, 2.0, 2.0, 0.0),
    }
    assert with_epsilon_slot([ADDED_A, ADDED_B], scored, WITH_DELTA) == [ADDED_A, STAYS_B]
    assert with_epsilon_slot([ADDED_A], scored, WITH_DELTA) == [ADDED_A]
    assert with_epsilon_slot([ADDED_A, STAYS_A], scored, WITH_DELTA) == [ADDED_A, STAYS_A]
