"""``dpaudit.exact.law``: the dispatch point of exact laws and their working precision."""

from dataclasses import dataclass
from fractions import Fraction
from math import comb

import mpmath
import pytest

import mechanisms
from dpaudit.exact import output_law as exported
from dpaudit.exact.law import DEFAULT_DIGITS, output_law, working_precision


def test_the_package_exports_this_dispatch_point():
    assert exported is output_law


def test_an_unregistered_mechanism_is_refused_by_name():
    class Unknown:
        pass

    with pytest.raises(TypeError, match="no exact law is known for Unknown"):
        output_law(Unknown(), [1, 2])


def test_every_reference_mechanism_with_a_law_is_registered():
    for cls in (mechanisms.GumbelTopK, mechanisms.LimitDomain, mechanisms.ReportNoisyMax):
        assert output_law.dispatch(cls) is not output_law.dispatch(object), cls.__name__


def test_a_registered_law_is_found_for_subclasses_too():
    @dataclass(frozen=True)
    class Coin:
        """One fair coin per unit of the first count: outcome = the number of heads."""

        flips: int = 0

    @dataclass(frozen=True)
    class LoadedCoin(Coin):
        pass

    @output_law.register(Coin)
    def _coin_law(mech, counts):
        n = int(counts[0])
        return {(h,): mpmath.mpf(comb(n, h)) / 2**n for h in range(n + 1)}

    # (The registration stays: singledispatch has no unregister, and Coin is this test's own.)
    with working_precision():
        law = output_law(LoadedCoin(), [4])
    assert [Fraction(str(p)) for _, p in sorted(law.items())] == [
        Fraction(c, 16) for c in (1, 4, 6, 4, 1)
    ]


def test_working_precision_sets_and_restores_the_digits():
    assert DEFAULT_DIGITS >= 40
    before = mpmath.mp.dps
    with working_precision():
        assert mpmath.mp.dps == DEFAULT_DIGITS
        third = mpmath.mpf(1) / 3
    assert mpmath.mp.dps == before
    with working_precision(80):
        assert mpmath.mp.dps == 80
        # 1/3 at 50 digits differs from 1/3 at 80 digits by about 10^-50.
        assert 1e-52 < abs(third - mpmath.mpf(1) / 3) < 1e-48
    assert mpmath.mp.dps == before


def test_a_reference_law_sums_to_one_at_the_working_precision():
    law = output_law(mechanisms.ReportNoisyMax(epsilon=1.0), [3, 1, 0])
    with working_precision():
        assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** -30
