"""Screening: honest predictions from split samples, and pairs ranked by what they leak."""

from collections import Counter

import numpy as np
from helpers import screening_encoder, value_tally

import mechanisms as M
from dpaudit.auditor.search.screening import screen_scores, survivors
from dpaudit.neighbours.pairs import NeighbourPair


def _patterns(rng, lean, n):
    """``n`` answers of 10 yes/no queries, the first five "yes" w.p. ½ + lean, the rest ½ − lean."""
    p = np.r_[np.full(5, 0.5 + lean), np.full(5, 0.5 - lean)]
    answers = rng.random((n, 10)) < p
    return Counter(tuple(int(j) for j in np.flatnonzero(row)) for row in answers)


def test_screening_ranks_a_pair_that_leaks_above_one_whose_outcomes_merely_vary():
    # 1024 outcomes on 400 samples each: ranked and counted on the same samples, the union
    # of the outcomes that fell on P's side makes a pair with two identical laws look
    # violating. Ranked on one half and counted on the other, the pair whose answers
    # really lean (a sparse vector without cutoff, +1 on five queries and −1 on five)
    # is ranked first by the cautious ε.
    rng = np.random.default_rng(7)
    n = 400
    same = NeighbourPair((2,) * 10, (3,) * 5 + (1,) * 5, "x")
    leaks = NeighbourPair((1,) * 5 + (0,) * 5, (0,) * 5 + (1,) * 5, "x")
    pooled = {
        same.counts: (_patterns(rng, 0.0, n), n),
        same.counts2: (_patterns(rng, 0.0, n), n),
        leaks.counts: (_patterns(rng, 0.15, n), n),
        leaks.counts2: (_patterns(rng, -0.15, n), n),
    }
    claim = M.PrivacyClaim(0.1, 0.0, M.BoundedChange(1))
    scores = screen_scores([same, leaks], pooled, 1_000_000, 0.05 / 18, claim)
    # two identical laws predict no ε beyond the claim (the same samples predict 3.5)
    assert scores[0][1] < claim.epsilon < scores[1][1]
    assert survivors([same, leaks], scores, 1) == [leaks]


def test_value_screening_predicts_no_leak_for_two_identical_laws():
    # A value release's cells chosen and counted on the same samples: the union of the cells
    # that fell on P's side predicts several claims for two identical laws. Chosen on one
    # half and counted on the other, the identical pair predicts less than the claim and the
    # pair whose values really shift (by 2 at scale 1: ε = 2, four claims) ranks first.
    # False-failure probability: the identical pair's prediction exceeds the claim for about
    # 1 % of seeds at this size (4 of seeds 0-299), the ranking for none; the seed is fixed.
    rng = np.random.default_rng(5)
    encoder = screening_encoder(rng)
    n = 8_000
    same = NeighbourPair((1, 1, 1), (1, 1, 2), "x")
    leaks = NeighbourPair((0, 0, 0), (0, 0, 1), "x")
    pooled = {
        same.counts: (value_tally(encoder, rng, n, 0.0), n),
        same.counts2: (value_tally(encoder, rng, n, 0.0), n),
        leaks.counts: (value_tally(encoder, rng, n, 2.0), n),
        leaks.counts2: (value_tally(encoder, rng, n, 0.0), n),
    }
    claim = M.PrivacyClaim(0.5, 0.0, M.BoundedChange(1))
    scores = screen_scores([same, leaks], pooled, 1_000_000, 0.05 / 18, claim, encoder=encoder)
    assert scores[0][1] < claim.epsilon < scores[1][1]
    assert survivors([same, leaks], scores, 1) == [leaks]
