"""Exact fixed-point arithmetic: the hot loop of verify, against mpmath."""

import mpmath

from dpaudit.exact.fixed_point import FIXED_BITS, excess, fixed_law, from_fixed2, to_fixed


def test_to_fixed_is_the_floor_of_the_scaled_value():
    with mpmath.workdps(50):
        for value in (mpmath.mpf(1) / 3, mpmath.mpf("1e-30"), mpmath.mpf(1)):
            fixed = to_fixed(value)
            scaled = value * mpmath.mpf(2) ** FIXED_BITS
            assert fixed <= scaled < fixed + 1


def test_excess_is_the_hockey_stick_divergence():
    with mpmath.workdps(50):
        p = {(0,): mpmath.mpf("0.7"), (1,): mpmath.mpf("0.3")}
        q = {(0,): mpmath.mpf("0.2"), (1,): mpmath.mpf("0.8")}
        scale = mpmath.exp(mpmath.mpf("0.5"))
        exact = sum(max(mpmath.mpf(0), p[o] - scale * q[o]) for o in p)
        got = from_fixed2(excess(fixed_law(p), fixed_law(q), to_fixed(scale)))
        assert abs(got - exact) < mpmath.mpf(2) ** (-FIXED_BITS + 4)
