import math

import pytest

from mechanisms.accounting import basic_composition, limit_domain_epsilon


def test_limit_domain_epsilon_without_delta_prime_is_basic_composition():
    assert limit_domain_epsilon(0.5, 4) == pytest.approx(2.0)
    assert basic_composition(0.5, 1e-6, 4) == pytest.approx((2.0, 4e-6))


def test_limit_domain_epsilon_matches_a_hand_computation():
    # seed 003 Thm 1 eq. 2 at eps=0.1, k=100, delta'=1e-6, worked by hand:
    # kε = 10; kε·tanh(ε/2) = 10·0.0499584 = 0.499584; ε√(2k ln 1e6) = 0.1·√(2763.1021) = 5.256526
    # kε²/2 = 0.5; ε√(k ln(1e6)/2) = 0.1·√690.7755 = 2.628261
    value = limit_domain_epsilon(0.1, 100, 1e-6)
    assert value == pytest.approx(0.5 + 2.628261, abs=1e-6)
    assert value < 10


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"epsilon": 0, "k": 1}, "epsilon"),
        ({"epsilon": 1, "k": 0}, "k must"),
        ({"epsilon": 1, "k": 1, "delta_prime": 1.0}, "delta_prime"),
        ({"epsilon": math.inf, "k": 1}, "epsilon"),
    ],
)
def test_limit_domain_epsilon_rejects_bad_parameters(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        limit_domain_epsilon(**kwargs)


def test_limit_domain_epsilon_is_basic_composition_for_huge_epsilon_without_overflow():
    assert limit_domain_epsilon(1e200, 3, 1e-6) == pytest.approx(3e200)
    assert limit_domain_epsilon(1e200, 3) == pytest.approx(3e200)
