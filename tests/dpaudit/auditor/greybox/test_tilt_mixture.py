"""dpaudit.auditor.greybox.tilt_mixture: exponential tilts of Laplace draws, mixed.

The toy mechanism releases 1 when a Laplace gap noise minus a Laplace threshold noise of another
scale exceeds ``t``; ``P = (b² e^{−t/b} − c² e^{−t/c}) / (2 (b² − c²))`` exactly (``t >= 0``). The
seeds are fixed, so a pass is a pass on every run.
"""

import math

import numpy as np
import pytest

from dpaudit.auditor.bounds.weighted_bounds import betting_lower_bound
from dpaudit.auditor.greybox.mixture_fit import mixture_cross_entropy
from dpaudit.auditor.greybox.tilt_mixture import (
    TILT_LIMIT,
    MixtureTiltedGenerator,
    mixture_runs,
    tilt_for_mean,
)

GAP, THRESHOLD = 2.0, 1.5  # the scales b and c


class _Crossing:
    """Releases (1,) when ``Lap(GAP) − Lap(THRESHOLD) > t``, else (0,)."""

    def __init__(self, t):
        self.t = t

    def sample(self, counts, size, rng):
        threshold = rng.laplace(0.0, THRESHOLD, size)  # draw #0
        gap = rng.laplace(0.0, GAP, size)  # draw #1
        return (gap - threshold > self.t).astype(np.int64)[:, None]


def _exact(t):
    b, c = GAP, THRESHOLD
    return (b * b * math.exp(-t / b) - c * c * math.exp(-t / c)) / (2 * (b * b - c * c))


def _crossed(outcomes):
    return np.asarray(outcomes)[:, 0] == 1


def test_tilt_for_mean_inverts_the_tilted_mean_and_stays_inside_the_limit():
    means = np.array([-40.0, -1.0, 0.0, 0.5, 24.0])
    theta = tilt_for_mean(means)
    assert np.allclose(2 * theta / (1 - theta**2), means)
    assert tilt_for_mean(1e9) == TILT_LIMIT and tilt_for_mean(-1e9) == -TILT_LIMIT


def test_zero_tilts_leave_numpy_draws_and_unit_weights():
    rng = MixtureTiltedGenerator(
        np.random.PCG64(5),
        size=1000,
        components=[{1: 0.0}, {0: 0.0}],
        shares=[0.5, 0.5],
        mixture=0.1,
        components_stream=np.random.PCG64(6),
    )
    drawn = _Crossing(3.0).sample(None, 1000, rng)
    plain = _Crossing(3.0).sample(None, 1000, np.random.Generator(np.random.PCG64(5)))
    assert np.array_equal(drawn, plain)
    assert np.allclose(rng.weights(), 1.0)
    assert rng.unmatched == ()


def test_a_tilted_component_has_the_tilted_law_and_weights_below_one_over_lambda():
    rng = MixtureTiltedGenerator(
        np.random.PCG64(1),
        size=200_000,
        components=[{0: 0.8}],
        shares=[1.0],
        mixture=0.2,
        components_stream=np.random.PCG64(2),
        keep_noise=True,
    )
    rng.laplace(0.0, 3.0, 200_000)
    z = rng.noise(0)[rng.row_component == 1]
    assert z.mean() == pytest.approx(2 * 0.8 / (1 - 0.8**2), rel=0.02)
    assert (z < 0).mean() == pytest.approx((1 - 0.8) / 2, abs=0.005)
    assert rng.weights().max() <= 1 / 0.2
    with pytest.raises(ValueError, match=r"\(-1, 1\)"):
        MixtureTiltedGenerator(
            np.random.PCG64(1),
            size=10,
            components=[{0: 1.0}],
            shares=[1.0],
            mixture=0.2,
            components_stream=np.random.PCG64(2),
        )


@pytest.mark.parametrize("t", [30.0, 60.0])
def test_a_sum_of_laplace_draws_is_bounded_near_its_exact_tail(t):
    # Both ways in (the gap's noise up, the threshold's down), fitted on a pilot, then main runs
    # on other streams: unbiased (within four standard errors, each under 6 %), and the betting bound below the exact P but close to it.
    mechanism, exact = _Crossing(t), _exact(t)
    fit = mixture_cross_entropy(
        mechanism.sample,
        None,
        _crossed,
        initial=[{1: tilt_for_mean(t / GAP)}, {0: -tilt_for_mean(t / THRESHOLD)}],
        mixture=0.1,
        samples=2_000,
        seed=0,
    )
    runs = mixture_runs(
        mechanism.sample,
        None,
        _crossed,
        components=fit.components,
        shares=fit.shares,
        mixture=0.1,
        samples=20_000,
        seed=1,
    )
    assert runs.weights.max() <= 10.0
    error = runs.values.std() / math.sqrt(runs.values.size)
    assert abs(runs.values.mean() - exact) < 4 * error < 0.25 * exact
    scale = fit.estimate * 2_000 / fit.hits
    lower = betting_lower_bound(runs.values, scale=scale, alpha=1e-3, horizon=20_000)
    assert 0.8 * exact < lower <= exact
