"""The threshold search finds from samples alone where a mechanism's output law changes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit.exact as E
import mechanisms as M
from dpaudit.auditor.sources.sampling import count_batch
from dpaudit.catalog.sessions import free_bottom_transcript
from dpaudit.neighbours import is_neighbour, offsets
from dpaudit.neighbours.threshold_search import (
    output_statistic,
    threshold_search_pairs,
    transition_heights,
)
from mechanisms import BOTTOM, AddRemoveUser, BoundedChange


def drawer(mech, seed=0):
    rng = np.random.default_rng(seed)
    calls = []

    def draw(histograms, n):
        calls.append(n * len(histograms))
        return [(count_batch(mech.sample(np.asarray(h), n, rng)), n) for h in histograms]

    return draw, calls


def test_transition_found_where_the_exact_law_moves():
    # LimitDomain(k=1, k̄=1, ε=1, δ=1e-6) on (s, 0, 0): ⊥ has score h_(2) + 1 + ln(1/δ) ≈ 14.8,
    # so P(⊥) = 1/(1 + e^{s − 14.8}) crosses 1/2 between s = 14 and s = 15 (exact, closed form).
    mech = M.LimitDomain(k=1, kbar=1, epsilon=1.0, delta=1e-6)
    draw, _ = drawer(mech)
    heights = transition_heights(lambda h: draw([[h, 0, 0]], 4000)[0], levels=(0.5,))
    assert heights and 14 <= heights[0] <= 16
    p_bottom = float(E.output_law(mech, [heights[0], 0, 0]).get((BOTTOM,), 0))
    assert 0.2 < p_bottom < 0.8


def test_a_mechanism_whose_output_never_moves_gets_no_pairs():
    class Constant(M.TopKMechanism):
        width = 1
        claim = M.PrivacyClaim(1.0, 0.0, AddRemoveUser())

        def sample(self, counts, size, rng):
            return np.zeros((size, 1), dtype=np.int64)

    draw, calls = drawer(Constant())
    pairs = threshold_search_pairs(
        draw, AddRemoveUser(), domain_size=5, kbar=3, rng=np.random.default_rng(0), samples=100_000
    )
    assert pairs == [] and sum(calls) <= 100_000


@pytest.mark.parametrize("relation", [AddRemoveUser(), AddRemoveUser(1), BoundedChange(1)])
def test_search_pairs_are_neighbours_within_budget(relation):
    mech = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    draw, calls = drawer(mech)
    pairs = threshold_search_pairs(
        draw, relation, domain_size=6, kbar=3, k=2, rng=np.random.default_rng(1), samples=150_000
    )
    assert pairs and sum(calls) <= 150_000
    assert all(is_neighbour(p.counts, p.counts2, relation) for p in pairs)
    assert {p.family for p in pairs} == {"threshold search"}


def _block_family_worst(mech, d: int, heights, blocks) -> float:
    """Exact worst ε at δ = 1e-3 over the block shapes the threshold search proposes.

    Bases: a top block of ``m`` items at height ``s`` over zeros; pairs: every one-user
    addition. Ranked with float64 laws, the winner recomputed in mpmath.
    """
    steps = offsets(d, AddRemoveUser())
    steps = steps[np.all(steps >= 0, axis=1)]
    best, pair = -1.0, None
    for m in blocks:
        for s in heights:
            base = np.zeros(d, dtype=np.int64)
            base[:m] = s
            law = E.float_law(mech, base)
            for step in steps:
                value = E.float_epsilon(law, E.float_law(mech, base + step), 1e-3)
                if value > best:
                    best, pair = value, (base, base + step)
    return float(E.epsilon_at(mech, *pair, delta=1e-3))


def test_search_pairs_hold_a_near_worst_block_pair_of_topstable():
    # The search proposes block shapes (m items at one height over zeros) where the output
    # moves; some pair it proposes (from samples only) is within 20 % of the exact worst over
    # those shapes. (TopStable's worst case is a staircase outside them, 0.5742 on
    # (60, 36, 4, 4, 0) vs (61, 36, 4, 5, 0): dpaudit.exact.worst_case.)
    mech = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    draw, _ = drawer(mech, seed=3)
    pairs = threshold_search_pairs(
        draw,
        AddRemoveUser(),
        domain_size=5,
        kbar=3,
        k=2,
        rng=np.random.default_rng(3),
        samples=200_000,
    )
    best = max(float(E.epsilon_at(mech, p.counts, p.counts2, delta=1e-3)) for p in pairs[::3])
    assert best >= 0.8 * _block_family_worst(mech, 5, range(5, 51), (1, 2, 3))


def test_session_transcripts_are_searched_too():
    # The free-⊥ session (catalog pwyg-free-bottom) on d = 2: the search, seeing only transcripts, puts pairs
    # around the first query's threshold h⊥ ≈ 14.8, where the exact counterexample lives.
    draw, _ = drawer(free_bottom_transcript())
    pairs = threshold_search_pairs(
        draw,
        AddRemoveUser(),
        domain_size=2,
        kbar=None,
        k=None,
        rng=np.random.default_rng(0),
        samples=100_000,
    )
    heights = {max(p.counts) for p in pairs}
    assert pairs and min(heights) >= 10 and max(heights) <= 20
    assert any(frozenset([p.counts, p.counts2]) == frozenset([(15, 0), (16, 0)]) for p in pairs)


@given(
    hits=st.lists(
        st.tuples(st.sampled_from([(0,), (1, 0), (BOTTOM,), (0, BOTTOM)]), st.integers(1, 50)),
        min_size=1,
        max_size=4,
    )
)
@settings(max_examples=50, deadline=None)
def test_output_statistics_are_shares(hits):
    from collections import Counter

    counter = Counter()
    for outcome, count in hits:
        counter[outcome] += count
    n = sum(counter.values())
    for kind in ("bottom", "full"):
        assert 0.0 <= output_statistic(counter, n, kind) <= 1.0
    assert 0.0 <= output_statistic(counter, n, "length") <= 2.0
