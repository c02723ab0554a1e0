"""Local search over neighbouring histograms: moves stay in the space, the search climbs,
respects its budget and seed, and (from samples alone) reaches TopStable's staircases."""

from collections import Counter

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.sources.sampling import count_batch
from dpaudit.exact import epsilon_at
from dpaudit.exact.worst_case import ExactEpsilonScore
from dpaudit.neighbours import is_neighbour
from dpaudit.neighbours.local_pairs import local_search_pairs, sampled_epsilon, successive_halving
from dpaudit.neighbours.local_search import MOVES, ScoredPair, SearchSpace, local_search, propose
from mechanisms import AddRemoveUser, BoundedChange

RELATIONS = [AddRemoveUser(), AddRemoveUser(2), BoundedChange(1)]


@pytest.mark.parametrize("relation", RELATIONS, ids=str)
def test_every_move_stays_in_the_space(relation):
    space = SearchSpace(4, 30, relation)
    rng = np.random.default_rng(0)
    counts, step = np.array([30, 0, 7, 7]), 0
    seen = Counter()
    for _ in range(3_000):
        counts, step, move = propose(counts, step, space, rng)
        seen[move] += 1
        assert counts.min() >= 0 and counts.max() <= 30
        assert 0 <= step < space.steps.shape[0]
    assert set(seen) == set(MOVES)


def test_add_remove_steps_are_the_additions_within_the_item_limit():
    steps = SearchSpace(4, 5, AddRemoveUser(2)).steps
    assert steps.min() == 0 and set(steps.sum(axis=1)) == {1, 2}
    assert len(steps) == 4 + 6


def _distance_score(target, calls):
    """Score that peaks (at 0) on one known pair: a search must climb to it."""
    target_low, target_high = np.array(target[0]), np.array(target[1])

    def score(low, high):
        calls.append(len(low))
        return -np.abs(low - target_low).sum(axis=1) - np.abs(high - target_high).sum(axis=1)

    return score


def test_climbs_to_a_known_peak_within_budget_and_scores_each_pair_once():
    calls = []
    target = ((60, 36, 4, 4, 0), (61, 36, 4, 5, 0))
    result = local_search(
        _distance_score(target, calls),
        SearchSpace(5, 100, AddRemoveUser()),
        seed=1,
        budget=6_000,
        temperature=0.0,
    )
    assert result.pairs[0].score == 0
    assert (result.pairs[0].counts, result.pairs[0].counts2) == target
    assert sum(calls) == result.scored <= 6_000
    assert len({(p.counts, p.counts2) for p in result.pairs}) == len(result.pairs)


def test_same_seed_same_pairs_other_seed_other_walk():
    space = SearchSpace(4, 20, AddRemoveUser())
    target = ((9, 3, 3, 0), (10, 3, 4, 0))
    first = local_search(_distance_score(target, []), space, seed=5, budget=300)
    again = local_search(_distance_score(target, []), space, seed=5, budget=300)
    other = local_search(_distance_score(target, []), space, seed=6, budget=300)
    assert first == again
    assert first.pairs != other.pairs


@pytest.mark.parametrize("relation", RELATIONS, ids=str)
def test_pair_source_proposes_neighbours(relation):
    mechanism = M.LimitDomain(k=1, kbar=2, epsilon=1.0, delta=1e-3)
    pairs = local_search_pairs(
        ExactEpsilonScore(mechanism, 1e-3), 4, 12, relation, seed=0, budget=200, top=10
    )
    assert len(pairs) == 10
    assert {p.family for p in pairs} == {"local search"}
    assert all(is_neighbour(p.counts, p.counts2, relation) for p in pairs)


def _drawer(mechanism, seed):
    rng = np.random.default_rng(seed)
    used = []

    def draw(histograms, n):
        used.append(n * len(histograms))
        return [(count_batch(mechanism.sample(np.asarray(h), n, rng)), n) for h in histograms]

    return draw, used


def test_sampled_epsilon_is_near_the_exact_value_and_shrinks_towards_zero():
    mechanism = M.StabilityRelease(k=1, epsilon=1.0, delta=1e-3)
    draw, used = _drawer(mechanism, 0)
    low = np.array([[9, 0, 0], [30, 0, 0], [0, 0, 0]])
    high = np.array([[10, 0, 0], [31, 0, 0], [0, 0, 1]])
    scores = sampled_epsilon(draw, 1e-3, 200_000)(low, high)
    assert sum(used) == 6 * 200_000  # six distinct histograms, each drawn once
    exact = np.array([float(epsilon_at(mechanism, a, b, 1e-3)) for a, b in zip(low, high)])
    # 200k draws: one standard error of shrinkage is about 1 % on outcomes of mass >= 0.1.
    assert exact[0] > 0.5 and scores[0] == pytest.approx(exact[0], abs=0.05)
    assert scores[0] <= exact[0] + 0.01
    assert scores[1] == exact[1] == 0  # far above the threshold: the output never moves
    assert scores[2] <= exact[2] + 0.01


def test_sampled_epsilon_pools_the_draws_of_a_pair_scored_again():
    mechanism = M.StabilityRelease(k=1, epsilon=1.0, delta=1e-3)
    draw, used = _drawer(mechanism, 1)
    score = sampled_epsilon(draw, 1e-3, 1_000)
    low, high = np.array([[9, 0, 0]]), np.array([[10, 0, 0]])
    score(low, high)
    score(low, high, 5_000)
    assert used == [2_000, 10_000] and score.drawn == 12_000
    assert all(n == 6_000 for _, n in score.tallies.values())
    assert all(sum(c.values()) == 6_000 for c, _ in score.tallies.values())


def test_successive_halving_keeps_the_truly_best_and_respects_its_draws():
    # StabilityRelease(k=1): pairs at the threshold have exact ε near 1, pairs far above
    # it exactly 0; a first look on 50 draws cannot tell them apart, the halving can.
    mechanism = M.StabilityRelease(k=1, epsilon=1.0, delta=1e-3)
    draw, used = _drawer(mechanism, 2)
    score = sampled_epsilon(draw, 1e-3, 50)
    lows = [(9, 0, 0), (8, 1, 0), (40, 0, 0), (45, 2, 0), (50, 0, 3), (60, 1, 1), (70, 0, 0)]
    low = np.array(lows)
    high = low + np.array([1, 0, 0])
    first = score(low, high)
    # The pairs far above the threshold come first: the first look is no help.
    pairs = [
        ScoredPair(tuple(a), tuple(b), float(v))
        for a, b, v in sorted(zip(low.tolist(), high.tolist(), first), key=lambda t: -t[0][0])
    ]
    before = sum(used)
    kept = successive_halving(score, pairs, 200_000, keep=2)
    assert sum(used) - before <= 200_000
    exact = [float(epsilon_at(mechanism, p.counts, p.counts2, 1e-3)) for p in kept]
    assert len(kept) == 2 and min(exact) > 0.5, (kept, exact)
    assert all(p.score <= e + 0.01 for p, e in zip(kept, exact))


@pytest.mark.slow
def test_from_samples_alone_it_reaches_topstable_staircases():
    # Block-shaped probes reach 0.26 on TopStable(k=2, k̄=3, ε=1, δ=1e-3);
    # its worst case is a staircase (0.5742). From samples only (1000 pairs, 2000 draws per
    # histogram, 4M draws), the pairs found include one with exact ε >= 0.40 on 4 of 5 seeds.
    mechanism = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    reached = []
    for seed in range(5):
        draw, used = _drawer(mechanism, 100 + seed)
        pairs = local_search_pairs(
            sampled_epsilon(draw, 1e-3, 2_000), 5, 100, AddRemoveUser(), seed=seed
        )
        assert sum(used) <= 4_000_000
        reached.append(max(float(epsilon_at(mechanism, *p.arrays, 1e-3)) for p in pairs))
    assert sum(r >= 0.40 for r in reached) >= 4, reached
