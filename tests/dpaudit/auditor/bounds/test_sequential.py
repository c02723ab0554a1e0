"""The confidence sequence of dpaudit.auditor.bounds.sequential against exact crossing probabilities."""

import numpy as np
import pytest
from scipy import stats

from dpaudit.auditor.bounds.sequential import (
    LookSchedule,
    crossing_probability,
    sequence_lower,
    sequence_upper,
)
from dpaudit.auditor.bounds.statistics import one_sided_lower


def _levels(schedule, alpha):
    return [schedule.alpha_at(alpha, j) for j in range(schedule.looks)]


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("p", [0.002, 0.01, 0.05, 0.2, 0.5, 0.83, 0.99])
def test_exact_probability_of_ever_crossing_is_at_most_alpha(p, upper):
    schedule = LookSchedule(first=25, growth=2.0, looks=5)  # looks at 25 .. 400
    alpha = 0.1
    crossed = crossing_probability(p, schedule.sizes(), _levels(schedule, alpha), upper)
    assert 0.0 <= crossed <= alpha


def test_naive_repeated_looks_cross_more_often_than_alpha():
    # The reason for spending: the full α at every look crosses more often than α. At
    # p = 0.3 over 8 doubling looks from 20 (exact DP), it is well above 0.05.
    schedule = LookSchedule(first=20, growth=1.5, looks=8)
    naive = crossing_probability(0.3, schedule.sizes(), [0.05] * 8)
    spent = crossing_probability(0.3, schedule.sizes(), _levels(schedule, 0.05))
    assert naive > 0.05 >= spent


def test_crossing_probability_is_the_single_look_tail_for_one_look():
    # One look: the crossing probability is P(lower bound(S) > p), S ~ Bin(n, p), computed
    # here directly from the binomial law (an independent route).
    n, p, a = 300, 0.12, 0.05
    hits = np.arange(n + 1)
    wrong = one_sided_lower(hits, np.full(n + 1, n), a) > p
    direct = float(stats.binom.pmf(hits[wrong], n, p).sum())
    assert crossing_probability(p, [n], [a]) == pytest.approx(direct, rel=1e-12, abs=1e-15)


def test_crossing_probability_matches_monte_carlo_paths():
    # 20 000 simulated binomial paths (seeded): the empirical crossing frequency lies within
    # the binomial 99.9 % two-sided band around the exact DP value.
    schedule = LookSchedule(first=30, growth=2.0, looks=4)
    alpha, p = 0.2, 0.07
    levels = _levels(schedule, alpha)
    exact = crossing_probability(p, schedule.sizes(), levels)
    rng = np.random.default_rng(20)
    paths = 20_000
    sizes = schedule.sizes()
    steps = np.diff([0, *sizes])
    hits = np.cumsum(rng.binomial(steps, p, size=(paths, len(steps))), axis=1)
    crossed = np.zeros(paths, dtype=bool)
    for j, n in enumerate(sizes):
        crossed |= one_sided_lower(hits[:, j], np.full(paths, n), levels[j]) > p
    low, high = stats.binom.ppf([0.0005, 0.9995], paths, exact)
    assert low <= crossed.sum() <= high


def test_sequence_bounds_use_the_spent_level():
    schedule = LookSchedule(first=100, looks=4)
    assert sequence_lower(10, 100, 0.08, schedule, 0) == pytest.approx(
        one_sided_lower(10, 100, 0.02)
    )
    assert sequence_upper(3, 800, 0.08, schedule, 3) >= 3 / 800


def test_schedule_sizes_and_validation():
    assert LookSchedule(first=10, growth=2.0, looks=4).sizes() == [10, 20, 40, 80]
    assert LookSchedule.ending_at(1000, growth=2.0, looks=4).sizes()[-1] <= 1000
    assert LookSchedule(first=1, growth=1.1, looks=5).sizes() == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="growth"):
        LookSchedule(first=10, growth=1.0)
    with pytest.raises(ValueError, match="look must be"):
        LookSchedule(first=10).alpha_at(0.05, 4)
