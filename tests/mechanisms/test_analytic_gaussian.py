"""mechanisms.analytic_gaussian: Balle & Wang (2018) Thm 8's δ and its inverse σ.

The comparisons with mpmath and dp_accounting are in tests/mechanisms/test_tail_bounds.py.
"""

import pytest

from mechanisms import accounting, analytic_gaussian, tail_bounds
from mechanisms.analytic_gaussian import analytic_gaussian_sigma, gaussian_delta


def test_re_exported_from_tail_bounds_and_accounting():
    for name in analytic_gaussian.__all__:
        assert getattr(tail_bounds, name) is getattr(analytic_gaussian, name)
        assert getattr(accounting, name) is getattr(analytic_gaussian, name)


def test_delta_by_hand():
    # σ = Δ = ε = 1: Φ(−0.5) − e·Φ(−1.5) = 0.30853754 − 0.18160080 = 0.12693674
    assert gaussian_delta(1.0, 1.0) == pytest.approx(0.12693674, rel=1e-7)


def test_sigma_is_the_inverse_and_scales_with_the_sensitivity():
    sigma = analytic_gaussian_sigma(1.0, 0.05)
    assert gaussian_delta(sigma, 1.0) == pytest.approx(0.05, rel=1e-9)
    assert gaussian_delta(sigma * (1 - 1e-6), 1.0) > 0.05
    assert analytic_gaussian_sigma(1.0, 1e-5, 3.0) == pytest.approx(
        3.0 * analytic_gaussian_sigma(1.0, 1e-5), rel=1e-9
    )


def test_sigma_rejects_a_delta_of_one():
    with pytest.raises(ValueError, match="delta"):
        analytic_gaussian_sigma(1.0, 1.0)
