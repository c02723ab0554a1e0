"""Candidate pairs as composable families (dpaudit.neighbours.candidates).

Thinning is checked against its rule written out here: every pair of a targeted family
stays, the generic ones are sampled down to the cap, and the first family to propose a
pair names it.
"""

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.interfaces import PairSource
from dpaudit.neighbours import is_neighbour
from dpaudit.neighbours.candidates import (
    Families,
    Family,
    candidate_pairs,
    default_families,
    given_family,
)
from dpaudit.neighbours.pairs import NeighbourPair, add_remove_pairs, restricted_domain_pairs
from mechanisms import AddRemoveUser


def _family(name, pairs, targeted=False):
    return Family(name, lambda rng: list(pairs), targeted=targeted)


def _generic(n, d=4):
    return [NeighbourPair((i, 0, 0, 0)[:d], (i + 1, 0, 0, 0)[:d], "generic") for i in range(n)]


def test_thinning_keeps_every_targeted_pair_and_caps_the_rest():
    targeted = [NeighbourPair((9, i, 0, 0), (9, i, 1, 0), "mine") for i in range(5)]
    families = _family("generic", _generic(50)) | _family("mine", targeted, targeted=True)
    chosen = families.pairs(np.random.default_rng(0), max_pairs=20)
    assert len(chosen) == 20
    assert chosen[:5] == targeted
    assert set(chosen[5:]) <= set(_generic(50))
    assert len(set(chosen)) == 20


def test_the_first_family_to_propose_a_pair_names_it():
    shared = _generic(3)
    reversed_pair = shared[0].swapped()
    families = _family("generic", shared) | _family("mine", [reversed_pair], targeted=True)
    tagged = families.tagged(np.random.default_rng(0))
    assert tagged == [(p, False) for p in shared]


def test_families_compose_in_order_and_under_the_cap_nothing_is_dropped():
    a, b = _family("a", _generic(2)), _family("b", _generic(4)[2:], targeted=True)
    assert isinstance(a | b, Families) and (a | b).members == (a, b)
    assert ((a | b) | a).members == (a, b, a)
    assert (a | b).pairs(np.random.default_rng(1), max_pairs=10) == _generic(4)


def test_candidate_pairs_keep_the_restricted_domain_family_of_a_limited_domain():
    # A cap far below the defaults: every restricted-domain pair (targeted) survives,
    # except those the generic moves proposed first (they are named by that family).
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6)
    relation = mech.claim.neighbours
    found = candidate_pairs(mech, relation, max_pairs=200, rng=np.random.default_rng(3))
    assert len(found) == 200
    keys = {frozenset([p.counts, p.counts2]) for p in found}
    moves = default_families(relation, 6).members[0].pairs(np.random.default_rng(0))
    generic = {frozenset([p.counts, p.counts2]) for p in moves}
    targeted = [
        p
        for p in restricted_domain_pairs(6, 3, relation)
        if frozenset([p.counts, p.counts2]) not in generic
    ]
    assert 0 < len(targeted) <= 100  # room for all of them under the cap
    for pair in targeted:
        assert frozenset([pair.counts, pair.counts2]) in keys
    assert all(is_neighbour(p.counts, p.counts2, relation) for p in found)


def test_given_pairs_come_first_and_restrict_keeps_only_them():
    relation = AddRemoveUser()
    counts = [3, 1, 0]
    expected = add_remove_pairs(np.array(counts), None, family="given counts")
    rng = np.random.default_rng(0)
    only = candidate_pairs(None, relation, counts=counts, restrict=True, rng=rng)
    assert only == expected
    found = candidate_pairs(None, relation, counts=counts, domain_size=3, rng=rng)
    assert found[: len(expected)] == expected and len(found) > len(expected)
    with pytest.raises(ValueError, match="restrict=True needs counts= or pairs="):
        candidate_pairs(None, relation, restrict=True, rng=rng)


def test_default_families_say_which_are_targeted():
    families = default_families(AddRemoveUser(), 6, kbar=3, threshold=4.5)
    assert [(f.name, f.targeted) for f in families.members] == [
        ("moves on base histograms", False),
        ("restricted domain", True),
        ("threshold ladder", True),
        ("random", False),
    ]
    assert given_family([1, 0], None, AddRemoveUser()).targeted
    assert all(isinstance(f, PairSource) for f in families.members)
