"""mechanisms.optimal_composition: seed 003 Lemma 4.5, float and mpmath, and its inverse.

The wider checks (against dp_accounting's PLD, the hand table) are in
tests/mechanisms/test_accounting_composition.py, through the accounting re-export.
"""

import math

import pytest

from mechanisms import accounting, optimal_composition
from mechanisms.optimal_composition import (
    optimal_composition_delta,
    optimal_composition_delta_mp,
    optimal_composition_epsilon,
    optimal_composition_points,
)


def test_accounting_re_exports_the_same_functions():
    for name in optimal_composition.__all__:
        assert getattr(accounting, name) is getattr(optimal_composition, name)
        assert name in accounting.__all__


def test_two_mechanisms_by_hand():
    # k = 2, ε = 1, ε_g = 0: only ℓ = 0 counts, (e^2 − 1)/(1 + e)^2 = 6.3890561/13.8256197
    assert optimal_composition_delta(1.0, 2, 0.0) == pytest.approx(0.4621172, rel=1e-6)
    assert float(optimal_composition_delta_mp(1.0, 2, 0)) == pytest.approx(0.4621172, rel=1e-6)
    assert optimal_composition_points(1.0, 2) == [(2.0, 0.0), (0.0, pytest.approx(0.4621172))]


def test_the_inverse_meets_its_delta():
    g = optimal_composition_epsilon(0.5, 4, 1e-3)
    assert 0.0 < g < 2.0
    assert optimal_composition_delta(0.5, 4, g) <= 1e-3
    assert optimal_composition_delta(0.5, 4, math.nextafter(g, 0.0) * (1 - 1e-9)) > 1e-3
