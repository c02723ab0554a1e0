"""Exact probabilities of value events: closed form vs quadrature, vs sampling, and ε = dε/2."""

import math

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits

import mechanisms as M
from dpaudit.auditor.values import (
    VIEW_BINS,
    OnItems,
    ValueEncoder,
    ValueRegion,
    ValueThreshold,
)
from dpaudit.auditor.values.outcome_events import ItemOutput
from dpaudit.catalog import NoisyCountsHalfNoise, ReportNoisyMaxFloatValue
from dpaudit.exact import output_law, working_precision
from dpaudit.exact.value_laws import (
    discrete_laplace_below,
    laplace_cdf,
    value_event_probability,
)


@pytest.mark.parametrize("x, loc, scale", [(-3.5, 0, 2), (0.25, 1, 0.5), (7, 7, 1), (10, -2, 3)])
def test_laplace_cdf_equals_quadrature(x, loc, scale):
    with working_precision():

        def density(t):
            return mpmath.exp(-abs(t - loc) / mpmath.mpf(scale)) / (2 * scale)

        quad = mpmath.quad(density, [-mpmath.inf, min(x, loc), x] if x > loc else [-mpmath.inf, x])
        assert abs(laplace_cdf(x, loc, scale) - quad) < mpmath.mpf(10) ** -40


def _all_cells(mech, encoder, counts):
    """Every key of the values view that can occur: items from the selector's law."""
    law = output_law(mech.selector, counts)
    w = encoder.width
    for items in law:
        row = list(items) + [M.PAD] * (w - len(items))
        grids = [
            [0] if j >= len(items) or items[j] < 0 else list(range(1, len(encoder.edges[j]) + 2))
            for j in range(w)
        ]
        for codes in np.array(np.meshgrid(*grids)).T.reshape(-1, w):
            yield (VIEW_BINS, *row, *map(int, codes))


def test_noisy_counts_cells_partition_the_outcome_space():
    counts = np.array([6, 5, 1])
    mech = M.NoisyCountsRelease(
        M.LimitDomain(k=2, kbar=2, epsilon=1.0, delta=0.05), epsilon_counts=1.0
    )
    encoder = ValueEncoder(2, 2, ((2.0, 5.5), (0.0, 4.0, 6.0)))
    with working_precision():
        cells = list(_all_cells(mech, encoder, counts))
        total = value_event_probability(
            mech, counts, ValueRegion(encoder, VIEW_BINS, frozenset(cells))
        )
        assert abs(total - 1) < mpmath.mpf(10) ** -30


def test_noisy_counts_exact_against_sampling():
    # Chi-square of 200,000 samples' cells against the exact law: false failure <= 1e-6.
    counts = np.array([6, 5, 1, 0])
    mech = M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=0.7), epsilon_counts=0.8)
    encoder = ValueEncoder(2, 2, ((1.0, 5.0), (3.0, 6.0)))
    with working_precision():
        cells = list(_all_cells(mech, encoder, counts))
        exact = np.array(
            [
                float(
                    value_event_probability(
                        mech, counts, ValueRegion(encoder, VIEW_BINS, frozenset([c]))
                    )
                )
                for c in cells
            ]
        )
    tally = encoder.count(mech.sample(counts, 200_000, np.random.default_rng(5)))
    assert sum(tally.get(c, 0) for c in cells) == 200_000
    assert_sampler_fits(dict(zip(cells, exact)), tally)


def test_threshold_and_item_events_are_sums_of_cells():
    counts = np.array([4, 3, 3, 0])
    mech = NoisyCountsHalfNoise(M.GumbelTopK(k=2, epsilon=0.5), epsilon_counts=1.0)
    encoder = ValueEncoder(2, 2, ((1.0, 3.5), (2.0,)))
    with working_precision():
        cells = list(_all_cells(mech, encoder, counts))
        above = ValueThreshold(encoder, 0, 3, True)  # value 1 >= 3.5
        as_cells = frozenset(c for c in cells if c[1 + 2] >= 3)
        assert (
            abs(
                value_event_probability(mech, counts, above)
                - value_event_probability(mech, counts, ValueRegion(encoder, VIEW_BINS, as_cells))
            )
            < mpmath.mpf(10) ** -40
        )
        item = OnItems(encoder, ItemOutput(2))
        law = output_law(mech.selector, counts)
        assert value_event_probability(mech, counts, item) == mpmath.fsum(
            p for o, p in law.items() if 2 in o
        )


def test_rnm_noisy_max_true_epsilon_is_d_epsilon_over_two():
    # Below every count, P(max < t) = Π r^{c_i - t'}/(1 + r): shifting all counts by 1
    # changes it by exactly r^{-d} = e^{5/2} (r = e^{-ε/2} up to its 53-bit rounding).
    mech = ReportNoisyMaxFloatValue(epsilon=1.0)
    encoder = ValueEncoder(0, 1, ((-1.0, 3.0),))
    below = ValueThreshold(encoder, 0, 2, False)  # max < -1
    with working_precision():
        p = value_event_probability(mech, np.array([1, 1, 1, 1, 1]), below)
        q = value_event_probability(mech, np.array([0, 0, 0, 0, 0]), below)
        r = mpmath.mpf(mech.noise_ratio) / mpmath.mpf(2) ** 53
        assert abs(mpmath.log(q / p) + 5 * mpmath.log(r)) < mpmath.mpf(10) ** -40
        assert abs(mpmath.log(q / p) - mpmath.mpf(5) / 2) < 1e-14
        # and the law of the max sums to one over its three bins
        bins = ValueRegion(encoder, VIEW_BINS, frozenset({(0, 1), (0, 2), (0, 3)}))
        assert abs(value_event_probability(mech, np.array([3, 0, 1, 1, 2]), bins) - 1) < 1e-40


def test_score_events_are_not_closed_form():
    mech = ReportNoisyMaxFloatValue(epsilon=1.0)
    encoder = ValueEncoder(0, 1, ((0.0,),))
    assert (
        value_event_probability(mech, np.array([1, 2]), ValueThreshold(encoder, -1, 2, True))
        is None
    )


@pytest.mark.parametrize(
    "x, loc, ratio", [(-3.5, 0, 0.3), (0.25, 1, 0.6), (7, 7, 0.9), (10, -2, 0.5)]
)
def test_discrete_laplace_below_equals_the_direct_sum(x, loc, ratio):
    with working_precision():
        r = mpmath.mpf(ratio)
        # the tail below -1500 is < 0.9^1500 < 1e-68
        top = math.ceil(x) - loc - 1
        direct = mpmath.fsum((1 - r) / (1 + r) * r ** abs(z) for z in range(-1500, top + 1))
        assert abs(discrete_laplace_below(x, loc, ratio) - direct) < mpmath.mpf(10) ** -40
