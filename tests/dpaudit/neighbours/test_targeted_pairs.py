"""dpaudit.neighbours.targeted_pairs: pairs at the cut of top-k̄ mechanisms.

Property tests over every relation are in tests/dpaudit/auditor/test_audit_pairs.py.
"""

import pytest

from dpaudit.neighbours import is_neighbour
from dpaudit.neighbours.targeted_pairs import (
    restricted_domain_pairs,
    threshold_ladder_pairs,
    threshold_offset,
)
from mechanisms import AddRemoveUser, BoundedChange, FixedThreshold, GumbelTopK


def test_restricted_domain_pairs_are_neighbours_touching_the_cut():
    pairs = restricted_domain_pairs(4, 2, BoundedChange(1))
    assert pairs and {p.family for p in pairs} == {"restricted domain"}
    for pair in pairs:
        assert is_neighbour(pair.counts, pair.counts2, BoundedChange(1))
        assert pair.counts[1:3] != pair.counts2[1:3]  # the k̄-th item or the one at the cut


def test_both_families_need_an_item_below_the_cut():
    with pytest.raises(ValueError, match="d >= kbar \\+ 1 = 3, got d=2"):
        restricted_domain_pairs(2, 2)
    with pytest.raises(ValueError, match="d >= kbar \\+ 1 = 3, got d=2"):
        threshold_ladder_pairs(2, 2, 1.0)


def test_the_ladder_stands_the_block_at_the_threshold_and_one_above():
    pairs = threshold_ladder_pairs(4, 2, 2.5, AddRemoveUser())
    assert [(p.counts, p.counts2) for p in pairs] == [
        ((2, 2, 0, 0), (1, 1, 0, 0)),
        ((2, 2, 0, 0), (2, 2, 1, 0)),
        ((3, 3, 0, 0), (2, 2, 0, 0)),
        ((3, 3, 0, 0), (3, 3, 1, 0)),
    ]


def test_only_a_fixed_threshold_has_an_offset():
    fixed = FixedThreshold(kbar=3, epsilon=1.0, delta=1e-3)
    assert threshold_offset(fixed, 5) == pytest.approx(fixed.tau)
    assert threshold_offset(GumbelTopK(k=2, epsilon=1.0), 5) is None
