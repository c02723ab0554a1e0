"""``mechanisms.validation``: each check names the argument, the allowed range and the value."""

import math
from fractions import Fraction

import numpy as np
import pytest

from mechanisms.validation import (
    require_bool,
    require_choice,
    require_nonnegative_float,
    require_nonnegative_int,
    require_positive_float,
    require_positive_int,
    require_probability,
)


@pytest.mark.parametrize("value", [1, 7, np.int64(3), np.uint8(200)])
def test_positive_int_returns_a_python_int(value):
    got = require_positive_int("k", value)
    assert type(got) is int and got == int(value)


@pytest.mark.parametrize("value", [0, -1, 1.0, 2.5, True, "3", None, np.float64(2)])
def test_positive_int_refuses_naming_the_argument_and_the_value(value):
    with pytest.raises(ValueError) as caught:
        require_positive_int("k", value)
    assert str(caught.value) == f"k must be an integer >= 1, got {value!r}"


def test_positive_int_range_ends_are_inclusive():
    assert require_positive_int("k", 3, minimum=3, maximum=5) == 3
    assert require_positive_int("k", 5, minimum=3, maximum=5) == 5
    with pytest.raises(ValueError, match=r"^k must be an integer >= 3 and <= 5, got 6$"):
        require_positive_int("k", 6, minimum=3, maximum=5)
    with pytest.raises(ValueError, match=r"^k must be an integer >= 3 and <= 5, got 2$"):
        require_positive_int("k", 2, minimum=3, maximum=5)


def test_nonnegative_int_takes_zero():
    assert require_nonnegative_int("seed", 0) == 0
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1$"):
        require_nonnegative_int("seed", -1)
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0 and <= 9, got 10$"):
        require_nonnegative_int("seed", 10, maximum=9)


@pytest.mark.parametrize("value", [1, 0.5, 1e-300, Fraction(1, 3), np.float32(0.25)])
def test_positive_float_returns_a_python_float(value):
    got = require_positive_float("epsilon", value)
    assert type(got) is float and got == float(value)


@pytest.mark.parametrize("value", [0, -1.0, math.inf, math.nan, True, "1", None, 1j])
def test_positive_float_refuses_naming_the_argument(value):
    with pytest.raises(ValueError) as caught:
        require_positive_float("epsilon", value)
    assert str(caught.value) == f"epsilon must be a finite number > 0, got {value!r}"


def test_nonnegative_float_takes_zero_and_refuses_negative_and_infinite():
    assert require_nonnegative_float("delta_prime", 0) == 0.0
    for bad in (-1e-12, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^delta_prime must be a finite number >= 0, got "):
            require_nonnegative_float("delta_prime", bad)


@pytest.mark.parametrize(
    "allow_zero, allow_one, accepted, refused, rule",
    [
        (False, False, [0.5, 1e-12], [0, 1], "(0, 1)"),
        (True, False, [0, 0.5], [1], "[0, 1)"),
        (False, True, [1, 0.5], [0], "(0, 1]"),
        (True, True, [0, 1], [-0.1, 1.1], "[0, 1]"),
    ],
)
def test_probability_includes_an_end_only_on_request(
    allow_zero, allow_one, accepted, refused, rule
):
    for value in accepted:
        got = require_probability("delta", value, allow_zero=allow_zero, allow_one=allow_one)
        assert got == float(value)
    for value in [*refused, -0.5, 2, math.nan]:
        with pytest.raises(ValueError) as caught:
            require_probability("delta", value, allow_zero=allow_zero, allow_one=allow_one)
        assert str(caught.value) == f"delta must be a finite number in {rule}, got {value!r}"


def test_choice_lists_every_choice_quoted():
    assert require_choice("calibration", "paper", ("paper", "exact")) == "paper"
    with pytest.raises(ValueError) as caught:
        require_choice("calibration", "Paper", iter(["paper", "exact"]))  # any iterable
    assert str(caught.value) == "calibration must be one of 'paper', 'exact', got 'Paper'"
    with pytest.raises(ValueError, match=r"got 1$"):
        require_choice("calibration", 1, ("1",))


def test_bool_takes_python_and_numpy_booleans_only():
    assert require_bool("monotonic", True) is True
    assert require_bool("monotonic", np.bool_(False)) is False
    for bad in (1, 0, "true", None):
        with pytest.raises(ValueError) as caught:
            require_bool("monotonic", bad)
        assert str(caught.value) == f"monotonic must be True or False, got {bad!r}"
