"""One-sided Clopper–Pearson bounds and the ε/δ lower bounds built on them."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit.auditor.bounds.statistics import (
    delta_lower_bound,
    epsilon_lower_bound,
    event_bounds,
    hits_needed,
    one_sided_lower,
    one_sided_upper,
)


def test_one_sided_bounds_are_beta_quantiles():
    # Definition of the exact one-sided Clopper–Pearson bounds (independent of statsmodels).
    hits, n, alpha = 37, 200, 0.01
    assert one_sided_lower(hits, n, alpha) == pytest.approx(
        stats.beta.ppf(alpha, hits, n - hits + 1), rel=1e-9
    )
    assert one_sided_upper(hits, n, alpha) == pytest.approx(
        stats.beta.isf(alpha, hits + 1, n - hits), rel=1e-9
    )


@pytest.mark.parametrize("seed", range(3))
def test_bounds_of_many_events_equal_each_event_alone(seed):
    # Arrays of events with repeated counts (computed once per distinct pair) give, bit for
    # bit, each event's own bound; n = 0 keeps its trivial bounds.
    rng = np.random.default_rng(seed)
    n = rng.choice([0, 50, 1_000], size=300)
    hits = np.minimum(rng.choice([0, 1, 7, 40], size=300), n)
    for bound in (one_sided_lower, one_sided_upper):
        together = bound(hits, n, 0.01)
        assert together.shape == (300,)
        assert [float(v) for v in together] == [bound(h, m, 0.01) for h, m in zip(hits, n)]
    grid = one_sided_lower(hits.reshape(30, 10), 1_000, 0.01)
    assert grid.shape == (30, 10) and grid[3, 4] == one_sided_lower(hits[34], 1_000, 0.01)


def test_edge_cases():
    assert one_sided_lower(0, 100, 0.05) == 0.0
    assert one_sided_upper(100, 100, 0.05) == 1.0
    # Upper bound with no hits: 1 - alpha^(1/n) (the "rule of three" family).
    assert one_sided_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)
    assert one_sided_lower(5, 0, 0.05) == 0.0 and one_sided_upper(0, 0, 0.05) == 1.0


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10_000), frac=st.floats(0, 1), alpha=st.floats(1e-9, 0.4))
def test_bounds_bracket_the_estimate(n, frac, alpha):
    hits = round(frac * n)
    low, high = one_sided_lower(hits, n, alpha), one_sided_upper(hits, n, alpha)
    assert 0.0 <= low <= hits / n + 1e-12
    assert hits / n - 1e-12 <= high <= 1.0
    # A smaller alpha (more confidence) gives wider bounds.
    assert one_sided_lower(hits, n, alpha / 10) <= low + 1e-12
    assert one_sided_upper(hits, n, alpha / 10) >= high - 1e-12


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 2.0])
def test_bad_alpha_rejected(alpha):
    with pytest.raises(ValueError, match="alpha"):
        one_sided_lower(1, 10, alpha)


def test_coverage_of_lower_bound():
    # 4000 binomial draws with p = 0.3: the 5% lower bound exceeds p in ~5% of them.
    # Exact CP is conservative, so the miss count is Binomial(4000, <= 0.05); the test
    # fails only if it exceeds the 1 - 1e-6 quantile: false failure <= 1e-6.
    rng = np.random.default_rng(12)
    hits = rng.binomial(500, 0.3, size=4000)
    misses = int(np.sum(one_sided_lower(hits, np.full(4000, 500), 0.05) > 0.3))
    assert misses <= stats.binom.ppf(1 - 1e-6, 4000, 0.05)


@settings(max_examples=200, deadline=None)
@given(p=st.floats(1e-6, 1), q=st.floats(1e-9, 1), eps=st.floats(0, 5), delta=st.floats(0, 0.5))
def test_violation_conditions_agree(p, q, eps, delta):
    # ε-bound > ε  <=>  δ-bound > δ: both say P_low > e^ε Q_high + δ.
    by_eps = epsilon_lower_bound(p, q, delta) > eps
    by_delta = delta_lower_bound(p, q, eps) > delta
    margin = abs(p - math.exp(eps) * q - delta)
    if margin > 1e-9 * max(1.0, p):
        assert by_eps == by_delta


def test_epsilon_bound_values():
    assert epsilon_lower_bound(0.5, 0.1, 0.0) == pytest.approx(math.log(5))
    assert epsilon_lower_bound(0.5, 0.1, 0.2) == pytest.approx(math.log(3))
    assert epsilon_lower_bound(0.1, 0.5, 0.0) == 0.0  # no evidence is reported as 0
    assert epsilon_lower_bound(0.1, 0.0, 0.0) == math.inf
    assert delta_lower_bound(0.5, 0.1, 1.0) == pytest.approx(0.5 - math.e * 0.1)
    p_low, q_high, e, d = event_bounds(900, 1000, 100, 1000, 0.01, 1.0, 0.0)
    assert p_low < 0.9 and q_high > 0.1 and d == pytest.approx(max(0.0, p_low - math.e * q_high))
    assert e == pytest.approx(math.log(p_low / q_high))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400),
    alpha=st.sampled_from([1e-9, 1e-4, 0.01, 0.2]),
    targets=st.lists(st.floats(1e-12, 1 - 1e-9), min_size=1, max_size=6),
)
def test_hits_needed_is_the_first_count_whose_bound_clears_the_target(n, alpha, targets):
    # Independent route: every count 0..n scanned; the quantile guess of hits_needed must
    # land on the same integer (None when even n hits do not clear).
    bounds = np.asarray(one_sided_lower(np.arange(n + 1), np.full(n + 1, n), alpha))
    for target in targets:
        clearing = np.flatnonzero(bounds > target)
        expected = int(clearing[0]) if clearing.size else None
        assert hits_needed(target, n, alpha) == expected
