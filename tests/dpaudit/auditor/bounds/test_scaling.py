"""Weighted hits checked and scaled to [0, 1] (dpaudit.auditor.bounds.scaling), and back outwards."""

import numpy as np
import pytest

from dpaudit.auditor.bounds.scaling import (
    check_horizon,
    scalar_or_array,
    scaled,
    unscale_high,
    unscale_low,
)


def test_scaled_divides_by_the_bound():
    x, bound = scaled([0.0, 2.5, 10.0], 10)
    assert bound == 10.0
    np.testing.assert_array_equal(x, [0.0, 0.25, 1.0])


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ([1.0, 11.0], r"values\[1\] = 11.0 \(1 of 2 outside\)"),
        ([[0.0, np.nan]], r"values\[\(0, 1\)\] = nan"),
        ([], "at least one sample"),
    ],
)
def test_scaled_names_the_value_outside(values, match):
    with pytest.raises(ValueError, match=match):
        scaled(values, 10.0)


def test_unscaling_rounds_outwards_and_stays_in_range():
    low, high = np.array([0.1, 0.0]), np.array([0.3, 1.0])
    assert unscale_low(low, 3.0)[0] < low[0] * 3.0
    assert unscale_low(low, 3.0)[1] == 0.0
    assert unscale_high(high, 3.0)[0] > high[0] * 3.0
    assert unscale_high(high, 3.0)[1] == 3.0


def test_scalar_or_array_and_horizon():
    assert scalar_or_array(np.asarray(0.5)) == 0.5
    assert isinstance(scalar_or_array(np.zeros(2)), np.ndarray)
    assert check_horizon(None) is None
    assert check_horizon(7) == 7
    with pytest.raises(ValueError, match="horizon"):
        check_horizon(0)
