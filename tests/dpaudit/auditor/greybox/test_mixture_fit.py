"""dpaudit.auditor.greybox.mixture_fit: the mixture's components chosen on a pilot.

The toy mechanism releases 1 when a Laplace gap noise minus a Laplace threshold noise exceeds
``t``; the event needs the sum to be large, which either draw can carry. Seeds are fixed.
"""

import numpy as np
import pytest

from dpaudit.auditor.greybox.mixture_fit import SHARE_FLOOR, mixture_cross_entropy
from dpaudit.auditor.greybox.tilt_mixture import tilt_for_mean


class _Crossing:
    def __init__(self, t):
        self.t = t

    def sample(self, counts, size, rng):
        threshold = rng.laplace(0.0, 1.5, size)  # draw #0
        gap = rng.laplace(0.0, 2.0, size)  # draw #1
        return (gap - threshold > self.t).astype(np.int64)[:, None]


def _crossed(outcomes):
    return np.asarray(outcomes)[:, 0] == 1


def _fit(seed, rounds=3, samples=2_000):
    return mixture_cross_entropy(
        _Crossing(20.0).sample,
        None,
        _crossed,
        initial=[{1: tilt_for_mean(5.0)}, {0: -tilt_for_mean(5.0)}],
        mixture=0.1,
        samples=samples,
        seed=seed,
        rounds=rounds,
    )


def test_the_fit_moves_both_draws_toward_the_event_and_keeps_every_share():
    fit = _fit(0)
    assert fit.pilot_samples == 3 * 2_000 and fit.hits > 0 and fit.estimate > 0
    assert sum(fit.shares) == pytest.approx(1.0)
    assert min(fit.shares) >= SHARE_FLOOR / (1 + SHARE_FLOOR * len(fit.shares))
    # Every key is fitted in every component: each pushes the gap up and the threshold down.
    for component in fit.components:
        assert set(component) == {0, 1}
        assert component[1] > 0 and component[0] < 0


def test_the_fit_is_a_function_of_its_seed():
    first, again, other = _fit(3, rounds=1), _fit(3, rounds=1), _fit(4, rounds=1)
    assert first.shares == again.shares and first.hits == again.hits
    assert (first.shares, first.hits) != (other.shares, other.hits)


def test_a_pilot_without_hits_keeps_its_starting_components():
    fit = mixture_cross_entropy(
        _Crossing(1e6).sample,  # never crossed
        None,
        _crossed,
        initial=[{1: 0.5}],
        mixture=0.1,
        samples=500,
        seed=0,
    )
    assert fit.hits == 0 and fit.estimate == 0.0 and fit.pilot_samples == 500
    assert float(fit.components[0][1]) == 0.5 and fit.shares == (1.0,)
