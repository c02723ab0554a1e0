"""Neighbour relations, histogram families and pair families (dpaudit.neighbours.relations).

The enumerations are checked against definitions written independently here:
brute force over every candidate offset with itertools, and the predicates of
DESIGN.md ("Neighbours") / mechanisms/claims.py.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.neighbours import (
    count_histograms,
    histograms,
    is_neighbour,
    neighbour_pairs,
    neighbours_of,
    offsets,
    pair_count_add_remove,
)
from mechanisms import AddRemoveUser, BoundedChange

small_counts = st.lists(st.integers(0, 3), min_size=1, max_size=5)
relations = st.one_of(
    st.just(AddRemoveUser()),
    st.integers(1, 5).map(AddRemoveUser),
    st.integers(1, 2).map(BoundedChange),
)


def brute_neighbours(counts, relation):
    """Neighbours by definition: every candidate in a box around c, kept by the predicate."""
    c = np.asarray(counts)
    reach = relation.max_change if isinstance(relation, BoundedChange) else 1
    found = set()
    for step in itertools.product(range(-reach, reach + 1), repeat=c.size):
        step = np.array(step)
        other = c + step
        if np.any(other < 0) or not np.any(step):
            continue
        if isinstance(relation, BoundedChange):
            found.add(tuple(other))
            continue
        # add/remove: c' = c ± s, s in {0,1}^d, 1 <= |s| <= Δ
        limit = c.size if relation.max_items is None else relation.max_items
        for sign in (1, -1):
            s = sign * step
            if np.all((s == 0) | (s == 1)) and 1 <= s.sum() <= limit:
                found.add(tuple(other))
    return found


@settings(max_examples=60, deadline=None)
@given(small_counts, relations)
def test_neighbours_match_definition(counts, relation):
    got = neighbours_of(counts, relation)
    as_set = {tuple(row) for row in got}
    assert len(as_set) == got.shape[0], "duplicate neighbours"
    assert as_set == brute_neighbours(counts, relation)
    assert got.dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(small_counts, st.one_of(st.none(), st.integers(1, 5)))
def test_add_remove_neighbours_are_one_signed_unit_steps(counts, max_items):
    relation = AddRemoveUser(max_items)
    c = np.asarray(counts)
    limit = c.size if max_items is None else min(max_items, c.size)
    got = neighbours_of(counts, relation)
    diff = got - c
    assert np.all(np.abs(diff) <= 1)
    assert np.all(np.all(diff >= 0, axis=1) | np.all(diff <= 0, axis=1))
    touched = np.count_nonzero(diff, axis=1)
    assert np.all((touched >= 1) & (touched <= limit))
    assert np.all(got >= 0)
    # Count: additions on any subset, removals only on items with c_i >= 1.
    support = int(np.count_nonzero(c))
    expected = sum(math.comb(c.size, j) for j in range(1, limit + 1)) + sum(
        math.comb(support, j) for j in range(1, min(limit, support) + 1)
    )
    assert got.shape[0] == expected


def test_removal_needs_positive_counts():
    got = {tuple(r) for r in neighbours_of([0, 2], AddRemoveUser())}
    assert got == {(1, 2), (0, 3), (1, 3), (0, 1)}


def test_bounded_change_count():
    # 3^d - 1 offsets, minus those that push a zero count negative.
    got = neighbours_of([0, 1, 2], BoundedChange(1))
    assert got.shape[0] == 2 * 3 * 3 - 1


@settings(max_examples=60, deadline=None)
@given(small_counts, small_counts, relations)
def test_is_neighbour_agrees_with_enumeration(a, b, relation):
    if len(a) != len(b):
        with pytest.raises(ValueError, match="differ in length"):
            is_neighbour(a, b, relation)
        return
    enumerated = tuple(b) in {tuple(r) for r in neighbours_of(a, relation)}
    assert is_neighbour(a, b, relation) == enumerated
    assert is_neighbour(b, a, relation) == enumerated  # symmetric


@pytest.mark.parametrize("d,max_count", [(1, 0), (1, 4), (2, 2), (3, 1), (3, 3)])
def test_histograms_are_the_whole_box(d, max_count):
    got = histograms(d, max_count)
    expected = list(itertools.product(range(max_count + 1), repeat=d))
    assert [tuple(r) for r in got] == expected  # lexicographic, no repeats
    assert got.shape == (count_histograms(d, max_count), d)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(0, 2), relations)
def test_pairs_cover_every_neighbour_exactly_once(d, max_count, relation):
    low, high = neighbour_pairs(d, max_count, relation)
    pairs = [(tuple(a), tuple(b)) for a, b in zip(low, high)]
    unordered = {frozenset(p) for p in pairs}
    assert len(unordered) == len(pairs), "an unordered pair is listed twice"
    expected = set()
    for c in itertools.product(range(max_count + 1), repeat=d):
        for other in brute_neighbours(c, relation):
            expected.add(frozenset((c, other)))
    assert unordered == expected
    for a, b in pairs:
        assert is_neighbour(a, b, relation)
    # grouped by the low side (lexicographic order)
    assert pairs == sorted(pairs)


@pytest.mark.parametrize("d,max_count,max_items", [(5, 3, None), (4, 2, 2), (3, 0, 1)])
def test_add_remove_pair_count_closed_form(d, max_count, max_items):
    low, _ = neighbour_pairs(d, max_count, AddRemoveUser(max_items))
    assert low.shape[0] == pair_count_add_remove(d, max_count, max_items)


def test_offsets_shapes():
    assert offsets(3, AddRemoveUser()).shape == (14, 3)
    assert offsets(3, AddRemoveUser(1)).shape == (6, 3)
    assert offsets(2, BoundedChange(2)).shape == (24, 2)


@pytest.mark.parametrize("bad", [[], [[1, 2]], [-1, 0], [0.5], ["a"], [True, False]])
def test_bad_counts_are_rejected(bad):
    with pytest.raises(ValueError, match="counts"):
        neighbours_of(bad, AddRemoveUser())


@pytest.mark.parametrize("relation", [None, "add/remove", 1, (1,)])
def test_bad_relation_is_rejected(relation):
    with pytest.raises(TypeError, match="relation"):
        neighbours_of([1, 2], relation)
    with pytest.raises(TypeError, match="relation"):
        neighbour_pairs(2, 1, relation)


@pytest.mark.parametrize(
    "d,max_count,name",
    [(0, 1, "d"), (-1, 1, "d"), (2, -1, "max_count"), (1.5, 1, "d"), (2, True, "max_count")],
)
def test_bad_family_is_rejected(d, max_count, name):
    with pytest.raises(ValueError, match=name):
        histograms(d, max_count)


def test_family_too_large_is_rejected():
    with pytest.raises(ValueError, match="smaller family"):
        histograms(30, 9)
