"""NoisyCountsRelease: claim by composition, items from the selector, discrete Laplace counts."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import mechanisms as M
from mechanisms.noisy_counts import released_count_sensitivity


def test_claim_adds_the_count_epsilon_to_the_selector_claim():
    # Worked by hand: GumbelTopK(k=2, ε=0.1) is (0.2, 0)-DP (seed 003 Cor. 4.1); counts add 1.
    mech = M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=0.1), epsilon_counts=1.0)
    assert math.isclose(mech.claim.epsilon, 1.2) and mech.claim.delta == 0.0
    assert mech.claim.neighbours == M.AddRemoveUser()
    # LimitDomain keeps its δ and its relation.
    ld = M.LimitDomain(k=2, kbar=3, epsilon=0.5, delta=1e-3)
    both = M.NoisyCountsRelease(ld, epsilon_counts=0.25)
    assert math.isclose(both.claim.epsilon, ld.claim.epsilon + 0.25)
    assert both.claim.delta == ld.claim.delta and both.claim.neighbours == ld.claim.neighbours


@pytest.mark.parametrize(
    "relation, width, expected",
    [
        (M.AddRemoveUser(), 3, 3.0),  # a user moves all 3 released counts by 1
        (M.AddRemoveUser(max_items=1), 3, 1.0),  # ... or only one of them
        (M.AddRemoveUser(max_items=2), 5, 2.0),
        (M.BoundedChange(1), 3, 3.0),
        (M.BoundedChange(2), 2, 4.0),
        (M.Substitute(1), 3, 2.0),  # one released count down, another up
        (M.Substitute(2), 3, 3.0),
        (M.Substitute(None), 4, 4.0),
    ],
)
def test_sensitivity(relation, width, expected):
    assert released_count_sensitivity(width, relation) == expected


def test_noise_follows_the_selectors_relation():
    mech = M.NoisyCountsRelease(M.ReportNoisyMax(epsilon=1.0, monotonic=False), epsilon_counts=0.5)
    assert mech.sensitivity == 1.0 and mech.unit_epsilon == 0.5
    # r = e^{-0.5} rounded up to a multiple of 2^-53, by at most 3 units
    r = mech.noise_ratio / 2**53
    assert 0 <= r - math.exp(-0.5) <= 3 * 2**-53


@settings(max_examples=25)
@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))))
def test_bad_epsilon_counts_is_named(bad):
    with pytest.raises(ValueError, match="epsilon_counts"):
        M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=1.0), epsilon_counts=bad)


def test_selector_must_be_an_item_mechanism():
    with pytest.raises(ValueError, match="selector"):
        M.NoisyCountsRelease("GumbelTopK", epsilon_counts=1.0)
    inner = M.NoisyCountsRelease(M.GumbelTopK(k=1, epsilon=1.0), epsilon_counts=1.0)
    with pytest.raises(ValueError, match="item ids only"):
        M.NoisyCountsRelease(inner, epsilon_counts=1.0)


def test_items_are_the_selectors_and_values_are_nan_exactly_at_bottom():
    counts = np.array([9, 9, 8, 2, 0])
    selector = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    mech = M.NoisyCountsRelease(selector, epsilon_counts=1.0)
    batch = mech.sample(counts, 20_000, np.random.default_rng(3))
    # The selector draws first from the same generator: the same items.
    assert np.array_equal(batch.items, selector.sample(counts, 20_000, np.random.default_rng(3)))
    assert np.array_equal(np.isnan(batch.values), batch.items < 0)
    assert (batch.items == M.BOTTOM).any() and (batch.items >= 0).any()


def test_noise_is_discrete_laplace_with_the_stated_ratio():
    # Chi-square of the integer noise against (1 - r)/(1 + r) r^|z| (tails beyond ±12
    # pooled): fixed seed, false failure <= 1e-6.
    counts = np.array([50, 40, 30, 20, 10])
    mech = M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=1.0), epsilon_counts=1.0)
    batch = mech.sample(counts, 50_000, np.random.default_rng(11))
    noise = (batch.values - counts[batch.items]).ravel()
    assert np.array_equal(noise, np.round(noise))  # every value is an integer
    r = mech.noise_ratio / 2**53
    z = np.arange(-12, 13)
    pmf = (1 - r) / (1 + r) * r ** np.abs(z)
    tail = r**13 / (1 + r)  # P(Z >= 13) = P(Z <= -13)
    observed = [np.sum(noise <= -13)] + [np.sum(noise == v) for v in z] + [np.sum(noise >= 13)]
    expected = np.concatenate([[tail], pmf, [tail]]) * noise.size
    assert stats.chisquare(observed, expected).pvalue > 1e-6


def test_run_is_the_first_row_and_values_track_counts():
    mech = M.NoisyCountsRelease(M.GumbelTopK(k=3, epsilon=1.0), epsilon_counts=1e6)
    counts = np.array([5, 4, 0, 7])
    items, values = mech.run(counts, np.random.default_rng(0))
    assert len(items) == 3 and len(values) == 3
    # ε_counts huge: each value is its item's count to ~1e-5.
    assert np.allclose(values, counts[list(items)], atol=1e-3)
    first = mech.sample(counts, 1, np.random.default_rng(0))
    assert first.row(0)[0] == items
