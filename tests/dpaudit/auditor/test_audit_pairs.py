"""Pair families: every generated pair is a pair of neighbours under its relation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechanisms as M
from dpaudit.auditor import screen
from dpaudit.catalog import EMNonMonotoneClaimsEpsilon
from dpaudit.neighbours import is_neighbour
from dpaudit.neighbours.pairs import (
    NeighbourPair,
    add_remove_pairs,
    bounded_change_pairs,
    default_pairs,
    explicit_pairs,
    random_pairs,
    restricted_domain_pairs,
    threshold_ladder_pairs,
    threshold_offset,
)
from dpaudit.testing import histograms
from mechanisms import AddRemoveUser, BoundedChange

relations = st.sampled_from([AddRemoveUser(), AddRemoveUser(1), AddRemoveUser(2), BoundedChange(1)])


@settings(max_examples=60, deadline=None)
@given(histograms(max_items=7, max_count=5), relations)
def test_structured_families_are_neighbours(counts, relation):
    if isinstance(relation, BoundedChange):
        pairs = bounded_change_pairs(counts)
    else:
        pairs = add_remove_pairs(counts, relation.max_items)
    for pair in pairs:
        assert is_neighbour(pair.counts, pair.counts2, relation), pair


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 6), relations)
def test_default_and_restricted_families(kbar, relation):
    d = kbar + 2
    pairs = default_pairs(relation, d, kbar=kbar, rng=np.random.default_rng(0))
    assert pairs
    for pair in pairs + restricted_domain_pairs(d, kbar, relation):
        assert is_neighbour(pair.counts, pair.counts2, relation), pair
    keys = [frozenset([p.counts, p.counts2]) for p in pairs]
    assert len(keys) == len(set(keys))


def test_restricted_family_has_tie_across_the_cut():
    pairs = restricted_domain_pairs(6, 3)
    assert any(p.counts[2] == p.counts[3] and p.counts2[3] == p.counts[3] + 1 for p in pairs)


@settings(max_examples=30, deadline=None)
@given(relations, st.integers(1, 6), st.integers(0, 5), st.integers(0, 2**32))
def test_random_pairs(relation, d, max_count, seed):
    for pair in random_pairs(relation, d, max_count, 5, np.random.default_rng(seed)):
        assert is_neighbour(pair.counts, pair.counts2, relation)


def test_explicit_pairs_and_bad_input():
    pairs = explicit_pairs([((1, 2), (2, 2))], AddRemoveUser())
    assert pairs[0].counts == (1, 2) and pairs[0].swapped().counts == (2, 2)
    with pytest.raises(ValueError):
        explicit_pairs([((1, 2), (3, 2))], AddRemoveUser())
    with pytest.raises(ValueError):
        explicit_pairs([])
    with pytest.raises(ValueError):
        NeighbourPair((1, 2), (1, 2, 3))
    with pytest.raises(ValueError):
        NeighbourPair((-1, 2), (1, 2))


def test_screen_ranks_the_damning_pair_first():
    mech = EMNonMonotoneClaimsEpsilon(epsilon=1.0)
    good = NeighbourPair((0, 3, 3, 3, 3), (1, 2, 2, 2, 2))  # exact ε 1.92
    weak = NeighbourPair((3, 3, 3, 3, 3), (4, 3, 3, 3, 3))  # exact ε <= 1
    ranked = screen(mech, [weak, good], samples_per_pair=20_000, keep=2, seed=0)
    assert ranked[0][0] == good and ranked[0][1] > ranked[1][1]


@pytest.mark.parametrize(
    "relation", [AddRemoveUser(), AddRemoveUser(1), AddRemoveUser(2), BoundedChange(1)]
)
@pytest.mark.parametrize("kbar, offset", [(1, 3.2), (2, 6.9), (3, 8.31), (4, 0.5)])
def test_threshold_ladder_pairs_are_neighbours(relation, kbar, offset):
    pairs = threshold_ladder_pairs(kbar + 3, kbar, offset, relation)
    assert pairs and all(p.family == "threshold ladder" for p in pairs)
    assert len(pairs) <= 4  # two rungs, two moves: a handful, not a geometric ladder
    for pair in pairs:
        assert is_neighbour(pair.counts, pair.counts2, relation), pair
    with pytest.raises(ValueError):
        threshold_ladder_pairs(kbar, kbar, offset, relation)


def test_threshold_offset_read_from_the_mechanism():
    ft = M.FixedThreshold(kbar=3, epsilon=1.0, delta=1e-3)
    assert threshold_offset(ft, 6) == pytest.approx(ft.tau)
    # Noisy thresholds get no ladder (see threshold_offset), nor do mechanisms without one.
    assert threshold_offset(M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3), 6) is None
    assert threshold_offset(M.TopStable(k=2, kbar=4, epsilon=1.0, delta=1e-3), 7) is None
    assert threshold_offset(M.GumbelTopK(k=2, epsilon=1.0), 5) is None


def test_fixed_threshold_ladder_holds_the_exhaustive_worst_pair():
    # Exhaustive exact verification of FixedThreshold(3, 1, 1e-3) puts its worst ε (2.979)
    # on (8, 8, 8) vs (7, 7, 7): the top k̄ at ⌊τ⌋ = 8 above zeros, one user leaving the block.
    ft = M.FixedThreshold(kbar=3, epsilon=1.0, delta=1e-3)
    pairs = default_pairs(ft.claim.neighbours, 6, kbar=3, threshold=threshold_offset(ft, 6))
    keys = {frozenset([p.counts, p.counts2]) for p in pairs if p.family == "threshold ladder"}
    assert frozenset([(8, 8, 8, 0, 0, 0), (7, 7, 7, 0, 0, 0)]) in keys
