"""The substitute relation (bounded DP): enumeration, pair families, CLI, evidence, audit."""

import itertools

import numpy as np
import pytest

import dpaudit
import mechanisms as M
from dpaudit.auditor.run.runner import candidate_pairs
from dpaudit.cli import UsageError
from dpaudit.cli.audit import parse_relation
from dpaudit.neighbours import (
    default_pairs,
    is_neighbour,
    neighbour_pairs,
    neighbours_of,
    random_pairs,
    restricted_domain_pairs,
    substitute_pairs,
)
from dpaudit.neighbours.pairs import threshold_ladder_pairs
from dpaudit.provenance import relation_from_dict, relation_to_dict


def _records(d, size):
    """Every record of exactly ``size`` items, as 0/1 vectors."""
    for items in itertools.combinations(range(d), size):
        s = np.zeros(d, dtype=np.int64)
        s[list(items)] = 1
        yield s


def _by_records(d, max_count, max_items):
    """Unordered pairs {c, c - s + s'} built from the definition: a record s the histogram
    holds is replaced by a record s' of the same size, s != s'."""
    limit = d if max_items is None else max_items
    pairs = set()
    for c in itertools.product(range(max_count + 1), repeat=d):
        c = np.array(c)
        for size in range(1, limit + 1):
            for s in _records(d, size):
                if np.any(c - s < 0):
                    continue
                for s2 in _records(d, size):
                    c2 = c - s + s2
                    if np.any(c2 != c):
                        pairs.add(frozenset((tuple(c), tuple(c2))))
    return pairs


@pytest.mark.parametrize("d,max_count,max_items", [(3, 2, 1), (4, 1, 2), (4, 1, None), (2, 3, 1)])
def test_enumeration_matches_the_definition(d, max_count, max_items):
    """neighbour_pairs lists every unordered pair with a family member on one side: by
    symmetry, exactly the record swaps starting from family members (the other side may
    leave the family, a count reaching max_count + 1)."""
    low, high = neighbour_pairs(d, max_count, M.Substitute(max_items))
    listed = {frozenset((tuple(a), tuple(b))) for a, b in zip(low, high, strict=True)}
    assert len(listed) == len(low), "every unordered pair once"
    assert listed == _by_records(d, max_count, max_items)
    for a, b in zip(low, high, strict=True):
        assert is_neighbour(a, b, M.Substitute(max_items))


def test_is_neighbour_and_neighbours_of():
    sub = M.Substitute(1)
    assert is_neighbour([2, 0, 1], [1, 1, 1], sub)
    assert not is_neighbour([2, 0, 1], [1, 0, 1], sub)  # a removal is not a substitution
    assert not is_neighbour([2, 0, 1], [0, 2, 1], sub)  # two records moved
    assert not is_neighbour([2, 1, 1], [1, 0, 2], sub)  # two down, one up
    assert not is_neighbour([2, 1, 1], [1, 0, 2], M.Substitute(2))
    assert not is_neighbour([2, 1, 0, 0], [1, 0, 1, 1], sub)  # a record of two items
    assert is_neighbour([2, 1, 0, 0], [1, 0, 1, 1], M.Substitute(2))
    found = neighbours_of([1, 0, 2], sub)
    assert {tuple(r) for r in found} == {(0, 1, 2), (0, 0, 3), (2, 0, 1), (1, 1, 1)}


def test_pair_families_are_substitutes():
    rng = np.random.default_rng(0)
    for relation in (M.Substitute(1), M.Substitute(2), M.Substitute(None)):
        families = (
            default_pairs(relation, 6, kbar=3, rng=rng, threshold=4.5)
            + restricted_domain_pairs(6, 3, relation)
            + threshold_ladder_pairs(6, 3, 4.5, relation)
            + random_pairs(relation, 6, 5, 30, rng)
            + substitute_pairs([3, 0, 2, 2, 1, 0], relation.max_items)
        )
        assert len(families) > 50
        for pair in families:
            assert is_neighbour(pair.counts, pair.counts2, relation), (pair, relation)
        kinds = {p.family for p in families}
        assert {"substitute", "restricted domain", "threshold ladder", "random"} <= kinds


def test_audit_candidates_under_substitute_are_substitutes():
    mech = M.ExponentialMechanism(epsilon=0.5, monotonic=False)
    pairs = candidate_pairs(mech, M.Substitute(1), rng=np.random.default_rng(1))
    assert pairs
    for pair in pairs:
        assert is_neighbour(pair.counts, pair.counts2, M.Substitute(1))
        diff = np.subtract(pair.counts2, pair.counts)
        assert sorted(diff[diff != 0].tolist()) == [-1, 1]


def test_cli_and_evidence_spell_substitute():
    assert parse_relation("substitute") == M.Substitute(1)
    assert parse_relation("substitute:3") == M.Substitute(3)
    for relation in (M.Substitute(1), M.Substitute(None), M.Substitute(4)):
        assert relation_from_dict(relation_to_dict(relation)) == relation
    assert relation_to_dict(M.Substitute(2)) == {"kind": "substitute", "max_items": 2}
    with pytest.raises(UsageError, match="substitute:DELTA"):
        parse_relation("substitute:0")
    with pytest.raises(ValueError, match="max_items"):
        M.Substitute(0)


def test_audit_under_substitute_runs_and_records_the_relation():
    mech = M.ExponentialMechanism(epsilon=0.5, monotonic=False)
    result = dpaudit.audit(mech, neighbours=M.Substitute(1), samples=20_000, seed=0)
    assert result.evidence["relation"] == {"kind": "substitute", "max_items": 1}
    assert result.verdict != "violated"
    assert result.witnesses, "the audit reports the pairs it confirmed on"
    for witness in result.witnesses:
        assert is_neighbour(witness.counts, witness.counts2, M.Substitute(1))
