"""dpaudit.exact.certify.hockey_stick: δ(ε) and ε(δ) of point laws and of a region's bounds."""

import math

import pytest

from dpaudit.exact.certify.bounds import LawBounds
from dpaudit.exact.certify.hockey_stick import (
    Direction,
    delta_upper,
    epsilon_upper,
    pair_delta,
    pair_epsilon,
)

P = {(0,): 0.6, (1,): 0.4}
Q = {(0,): 0.3, (1,): 0.7}


def test_pair_delta_is_the_larger_hockey_stick_of_the_two_directions():
    # P‖Q at ε = ln 1.5: 0.6 − 1.5·0.3 = 0.15; Q‖P: 0.7 − 1.5·0.4 = 0.1
    assert pair_delta(P, Q, math.log(1.5)) == pytest.approx(0.15)
    assert pair_delta(P, Q, math.log(2.0)) == pytest.approx(0.0)


def test_pair_epsilon_inverts_pair_delta():
    epsilon = pair_epsilon(P, Q, 0.05)
    assert pair_delta(P, Q, epsilon) == pytest.approx(0.05)
    assert pair_epsilon(P, {(0,): 1.0}, 0.3) == math.inf  # 0.4 of P has no Q mass


def _direction(a: dict, b: dict) -> Direction:
    bounds_a = LawBounds({o: (p, p) for o, p in a.items()}, {})
    bounds_b = LawBounds({o: (p, p) for o, p in b.items()}, {})
    ratio = {o: math.log(a[o] / b[o]) for o in a}
    return Direction.build(bounds_a, bounds_b, ratio)


def test_bounds_of_point_laws_are_just_above_the_pair_values():
    forward, backward = _direction(P, Q), _direction(Q, P)
    at = math.log(1.5)
    assert 0.15 <= delta_upper(forward, backward, at) <= 0.15 + 1e-12
    epsilon = epsilon_upper(forward, backward, 0.05)
    assert pair_epsilon(P, Q, 0.05) <= epsilon <= pair_epsilon(P, Q, 0.05) + 1e-9
    assert delta_upper(forward, backward, epsilon) <= 0.05
