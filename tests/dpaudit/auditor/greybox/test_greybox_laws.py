"""dpaudit.auditor.greybox.laws: the privacy cost of a draw whose location moves."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.auditor.greybox.laws import draw_cost
from dpaudit.auditor.greybox.recording import RecordingGenerator


def _draw(call):
    rng = RecordingGenerator(np.random.PCG64(0))
    call(rng)
    return rng.draws[0]


def _cost(call, call2):
    return draw_cost(_draw(call), _draw(call2), run=3)


def test_equal_laws_cost_nothing():
    assert _cost(lambda g: g.laplace([1.0, 2.0], 1.0), lambda g: g.laplace([1.0, 2.0], 1.0)) is None
    assert _cost(lambda g: g.random(3), lambda g: g.random(3)) is None


def test_laplace_shift_costs_the_l1_distance_over_the_scale():
    cost = _cost(
        lambda g: g.laplace([3.0, 0.0, 2.0], 2.0), lambda g: g.laplace([3.0, 1.0, 1.0], 2.0)
    )
    assert cost.epsilon == pytest.approx(1.0) and cost.exact and cost.mu is None
    assert (cost.run, cost.index, cost.method, cost.parameter) == (3, 0, "laplace", "loc")


def test_laplace_shift_is_the_supremum_of_the_log_density_ratio():
    # One element: |ln f(x)/f'(x)| over a grid reaches |Δ|/b outside [loc, loc'].
    cost = _cost(lambda g: g.laplace(0.0, 0.5), lambda g: g.laplace(0.3, 0.5))
    grid = np.linspace(-5.0, 5.0, 2001)
    ratio = stats.laplace.logpdf(grid, 0.0, 0.5) - stats.laplace.logpdf(grid, 0.3, 0.5)
    assert cost.epsilon == pytest.approx(np.abs(ratio).max())


def test_a_location_broadcast_over_a_batch_counts_every_element():
    cost = _cost(
        lambda g: g.laplace(0.0, 1.0, size=(2, 3)), lambda g: g.laplace(0.5, 1.0, size=(2, 3))
    )
    assert cost.epsilon == pytest.approx(3.0)  # 6 independent elements, each 0.5


def test_logistic_shift_costs_the_same_as_laplace():
    cost = _cost(lambda g: g.logistic(0.0, 2.0), lambda g: g.logistic(1.0, 2.0))
    grid = np.linspace(-60.0, 60.0, 4001)
    ratio = stats.logistic.logpdf(grid, 0.0, 2.0) - stats.logistic.logpdf(grid, 1.0, 2.0)
    assert cost.epsilon == pytest.approx(0.5) and cost.epsilon >= np.abs(ratio).max()
    assert np.abs(ratio).max() == pytest.approx(0.5, rel=1e-6)


def test_gaussian_shift_is_mu_gaussian_dp_with_no_pure_epsilon():
    cost = _cost(lambda g: g.normal([0.0, 0.0], 2.0), lambda g: g.normal([3.0, 4.0], 2.0))
    assert cost.mu == pytest.approx(2.5) and math.isinf(cost.epsilon)


def test_gumbel_shift_has_no_finite_pure_epsilon():
    cost = _cost(lambda g: g.gumbel(0.0, 1.0), lambda g: g.gumbel(1.0, 1.0))
    assert math.isinf(cost.epsilon) and "unbounded in the lower tail" in cost.law
    # ln f/f' = t − e^{−z'}(e^t − 1), t = (loc − loc')/b: at most |t| one way, unbounded the other.
    grid = np.linspace(-4.0, 30.0, 3001)
    ratio = stats.gumbel_r.logpdf(grid, 1.0, 1.0) - stats.gumbel_r.logpdf(grid, 0.0, 1.0)
    assert ratio.max() <= 1.0 + 1e-12 and ratio.min() < -40


def test_a_location_that_is_nan_on_one_side_costs_infinity():
    cost = _cost(lambda g: g.laplace(np.nan, 1.0), lambda g: g.laplace(1.0, 1.0))
    assert math.isinf(cost.epsilon)
    assert _cost(lambda g: g.laplace(np.nan, 1.0), lambda g: g.laplace(np.nan, 1.0)) is None


def test_categorical_probabilities_cost_the_largest_log_ratio():
    p, p2 = [0.5, 0.3, 0.2], [0.4, 0.3, 0.3]
    one = max(abs(math.log(a / b)) for a, b in zip(p, p2))
    cost = _cost(lambda g: g.choice(3, p=p), lambda g: g.choice(3, p=p2))
    assert cost.epsilon == pytest.approx(one) and cost.exact and cost.parameter == "p"
    repeated = _cost(lambda g: g.choice(3, size=4, p=p), lambda g: g.choice(3, size=4, p=p2))
    assert repeated.epsilon == pytest.approx(4 * one) and repeated.exact
    without = _cost(
        lambda g: g.choice(3, size=2, replace=False, p=p),
        lambda g: g.choice(3, size=2, replace=False, p=p2),
    )
    assert without.epsilon == pytest.approx(3 * one) and not without.exact


def test_no_probabilities_is_uniform_and_a_zero_on_one_side_is_infinite():
    cost = _cost(lambda g: g.choice(2), lambda g: g.choice(2, p=[0.25, 0.75]))
    assert cost.epsilon == pytest.approx(math.log(2))
    assert math.isinf(_cost(lambda g: g.choice(2, p=[0.0, 1.0]), lambda g: g.choice(2)).epsilon)
