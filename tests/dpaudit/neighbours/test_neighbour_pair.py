"""dpaudit.neighbours.neighbour_pair: the pair value, the user's pairs, and de-duplication."""

import numpy as np
import pytest

from dpaudit.neighbours.neighbour_pair import (
    NAMED,
    NeighbourPair,
    array_pair,
    explicit_pairs,
    unique_pairs,
)
from mechanisms import AddRemoveUser


def test_a_pair_holds_int_tuples_and_swaps():
    pair = array_pair(np.array([3, 1]), np.array([2, 1]), "family")
    assert pair == NeighbourPair((3, 1), (2, 1), "family")
    assert pair.swapped() == NeighbourPair((2, 1), (3, 1), "family")
    assert str(pair) == "[3, 1] vs [2, 1]"


def test_pairs_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="differ in length"):
        NeighbourPair((1, 2), (1,))


def test_unique_pairs_drop_repeats_either_way_round_and_equal_histograms():
    a = NeighbourPair((1, 0), (0, 0))
    pairs = [a, a.swapped(), NeighbourPair((1, 1), (1, 1)), NeighbourPair((2, 0), (1, 0))]
    assert unique_pairs(pairs) == [a, pairs[3]]


def test_explicit_pairs_are_named_and_checked_against_the_relation():
    assert explicit_pairs([((1, 0), (0, 0))]) == [NeighbourPair((1, 0), (0, 0), NAMED)]
    with pytest.raises(ValueError, match="is not a pair of neighbours"):
        explicit_pairs([((2, 0), (0, 0))], AddRemoveUser())
    with pytest.raises(ValueError, match="at least one"):
        explicit_pairs([])
