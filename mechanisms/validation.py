"""Parameter checks shared by every mechanism constructor.

Each check names the offending argument and the allowed range, so a user who
passes ``epsilon=-1`` reads ``epsilon must be a finite number > 0, got -1``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import TypeGuard

import numpy as np

__all__ = [
    "require_choice",
    "require_nonnegative_float",
    "require_nonnegative_int",
    "require_positive_float",
    "require_positive_int",
    "require_probability",
]


def _is_int(value: object) -> TypeGuard[numbers.Integral]:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def require_positive_int(
    name: str, value: object, *, minimum: int = 1, maximum: int | None = None
) -> int:
    """Return ``value`` as ``int`` if it is an integer in ``[minimum, maximum]``."""
    upper = "" if maximum is None else f" and <= {maximum}"
    number = int(value) if _is_int(value) else None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        raise ValueError(f"{name} must be an integer >= {minimum}{upper}, got {value!r}")
    return number


def require_nonnegative_int(name: str, value: object, *, maximum: int | None = None) -> int:
    """Return ``value`` as ``int`` if it is an integer in ``[0, maximum]``."""
    return require_positive_int(name, value, minimum=0, maximum=maximum)


def _as_finite_float(name: str, value: object, rule: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number {rule}, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number {rule}, got {value!r}")
    return number


def require_positive_float(name: str, value: object) -> float:
    """Return ``value`` as ``float`` if it is finite and > 0."""
    number = _as_finite_float(name, value, "> 0")
    if number <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def require_nonnegative_float(name: str, value: object) -> float:
    """Return ``value`` as ``float`` if it is finite and >= 0."""
    number = _as_finite_float(name, value, ">= 0")
    if number < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def require_probability(
    name: str, value: object, *, allow_zero: bool = False, allow_one: bool = False
) -> float:
    """Return ``value`` as ``float`` if it lies in (0, 1), ends included on request."""
    low = "[0" if allow_zero else "(0"
    high = "1]" if allow_one else "1)"
    rule = f"in {low}, {high}"
    number = _as_finite_float(name, value, rule)
    too_low = number < 0 or (number == 0 and not allow_zero)
    too_high = number > 1 or (number == 1 and not allow_one)
    if too_low or too_high:
        raise ValueError(f"{name} must be a finite number {rule}, got {value!r}")
    return number


def require_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``."""
    allowed = tuple(choices)
    if not isinstance(value, str) or value not in allowed:
        listed = ", ".join(repr(c) for c in allowed)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def require_bool(name: str, value: object) -> bool:
    """Return ``value`` as ``bool`` if it is a Python or numpy boolean."""
    if not isinstance(value, (bool, np.bool_)):
        # ValueError, not TypeError: DESIGN.md asks every bad parameter to raise ValueError
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)
