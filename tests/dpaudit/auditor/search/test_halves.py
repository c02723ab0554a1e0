"""Two independent halves of a tally (dpaudit.auditor.search.halves), a function of the tally."""

from collections import Counter

import numpy as np
import pytest
from helpers import screening_encoder, value_tally
from scipy.stats import binom

from dpaudit.auditor.search.halves import split_tally, split_value_tally


def test_split_tally_halves_add_up_and_are_a_function_of_the_tallies():
    counter = Counter({(0,): 10_000, (1,): 3, (0, 1): 1})
    first, n_first, second, n_second = split_tally(counter, 10_004)
    assert n_first + n_second == 10_004
    assert n_first == sum(first.values()) and n_second == sum(second.values())
    assert Counter(first) + Counter(second) == counter
    assert split_tally(counter, 10_004) == (first, n_first, second, n_second)
    # each sample goes to the first half with probability ½: the 99.9999 % binomial range
    low, high = binom.interval(1 - 1e-6, 10_000, 0.5)
    assert low <= first[(0,)] <= high


def test_split_value_tally_splits_every_view_into_the_same_two_sizes():
    rng = np.random.default_rng(3)
    encoder = screening_encoder(rng)
    counter = value_tally(encoder, rng, 2_001, 0.0)
    views = {key[0] for key in counter}
    assert len(views) > 1  # one key per sample in each view: the counts sum to 2001 × views
    first, n_first, second, n_second = split_value_tally(counter, 2_001)
    assert (n_first, n_second) == (1_000, 1_001)
    assert Counter(first) + Counter(second) == counter
    for view in views:
        assert sum(c for k, c in first.items() if k[0] == view) == 1_000
        assert sum(c for k, c in second.items() if k[0] == view) == 1_001
    assert split_value_tally(counter, 2_001) == (first, n_first, second, n_second)
    with pytest.raises(ValueError, match="one key per sample"):
        split_value_tally(counter, 2_000)
