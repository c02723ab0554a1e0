"""The table of candidate events (dpaudit.auditor.search.event_table): every pair, both ways."""

from collections import Counter

import numpy as np

from dpaudit.auditor.search.event_table import event_table
from dpaudit.neighbours.pairs import NeighbourPair


def test_every_event_has_its_pair_direction_hits_and_sizes():
    n = 1_000
    pairs = [NeighbourPair((1, 0), (0, 0), "x"), NeighbourPair((0, 1), (0, 0), "x")]
    pooled = {
        (1, 0): (Counter({(0,): 600, (1,): 300, (): 100}), n),
        (0, 1): (Counter({(0,): 300, (1,): 600, (): 100}), n),
        (0, 0): (Counter({(0,): 450, (1,): 450, (): 100}), n),
    }
    owners, directions, events, hp, n_p, hq, n_q = event_table(pairs, pooled)
    assert len(owners) == len(directions) == len(events) == hp.size == n_p.size
    assert hq.size == n_q.size == len(events) > 0
    assert set(owners) == {0, 1} and set(directions) == {0, 1}
    assert np.all((hp >= 0) & (hp <= n_p)) and np.all((hq >= 0) & (hq <= n_q))
    # ranked unions are counted on one half of the samples (binomial thinning), structural
    # events on all of them
    assert n in set(n_p) and all(400 < size < 600 for size in set(n_p) - {n})


def test_no_pairs_give_an_empty_table():
    owners, directions, events, *arrays = event_table([], {})
    assert owners == directions == events == []
    assert all(a.size == 0 for a in arrays)
