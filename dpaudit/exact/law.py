"""The dispatch point for exact output laws.

``output_law(mech, counts)`` returns ``{outcome tuple: mpmath.mpf}``: the exact
probability of every outcome with non-zero probability. Each mechanism family
registers its evaluator with ``@output_law.register(MechanismClass)`` in its
own module of [`dpaudit.exact`][dpaudit.exact]; importing [`dpaudit.exact`][dpaudit.exact] imports
them all.
"""

from __future__ import annotations

import functools

import mpmath

__all__ = ["DEFAULT_DIGITS", "output_law", "working_precision"]

#: Significant decimal digits every exact law is computed with (>= 40).
DEFAULT_DIGITS = 50


def working_precision(digits: int = DEFAULT_DIGITS):
    """Context manager setting mpmath to ``digits`` significant digits (restored on exit)."""
    return mpmath.workdps(digits)


@functools.singledispatch
def output_law(mech, counts) -> dict[tuple[int, ...], mpmath.mpf]:
    """Exact law of ``mech`` on histogram ``counts`` as ``{outcome: probability}``.

    Computed at ``DEFAULT_DIGITS`` significant digits; the probabilities
    sum to 1 within 1e-30.
    """
    raise TypeError(f"no exact law is known for {type(mech).__name__}")
