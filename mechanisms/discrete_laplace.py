"""Discrete Laplace noise on the integers, sampled exactly from uniform integers.

``P(Z = z) = (1 − r)/(1 + r) · r^{|z|}`` on the integers: the discrete Laplace (two-sided
geometric) distribution of Ghosh, Roughgarden, Sundararajan (STOC 2009, "universally
utility-maximizing privacy mechanisms") and Canonne, Kamath, Steinke (NeurIPS 2020,
"The discrete Gaussian for differential privacy", Sec. 2.2 and Alg. 2). Added to an
integer vector of L1 sensitivity Δ with ``r = e^{−ε/Δ}`` it is (ε, 0)-DP: the
probability of every output moves by at most ``r^{−Δ} = e^{ε}``.

Floating point cannot make a real-valued release ε-DP by adding a double-precision
Laplace sample (Mironov, CCS 2012, "On significance of the least significant bits for
differential privacy": the sets of doubles reachable from neighbouring inputs differ).
Here every output is an integer, so every count reaches every output, and the law is
exact: ``Z = G₁ − G₂`` with independent geometric ``G`` (``P(G = g) = (1 − r) r^g``),
each counted in Bernoulli(r) trials that compare a uniform 53-bit integer with
``r · 2^53`` — exact because ``r`` is a multiple of ``2^{−53}``:
:func:`discrete_laplace_ratio` rounds ``e^{−ε/Δ}`` UP to one, so the noise is at least as
wide as ε asks (the release is ``Δ · ln(2^53 / numerator)``-DP, which is <= ε).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .validation import require_positive_float

__all__ = ["RATIO_BITS", "discrete_laplace", "discrete_laplace_ratio"]

#: ``r = numerator / 2**RATIO_BITS``: the resolution of the noise parameter.
RATIO_BITS = 53


def discrete_laplace_ratio(epsilon_per_unit: float) -> int:
    """``numerator`` with ``numerator / 2^53 >= e^{−ε}`` and within 3 · 2^{−53} of it.

    ``math.exp`` is within one ulp (<= 2^{−53} below 1) of ``e^{−ε}``, and ``ε`` itself is
    the double given, so two extra units make the ratio an upper bound.
    """
    epsilon = require_positive_float("epsilon_per_unit", epsilon_per_unit)
    numerator = math.ceil(math.exp(-epsilon) * 2.0**RATIO_BITS) + 2
    if numerator >= 2**RATIO_BITS:
        raise ValueError(
            f"epsilon_per_unit={epsilon!r} is too small for 53-bit noise parameters; "
            "use epsilon_per_unit >= 1e-14"
        )
    return numerator


#: Bit generators whose raw output is the one 64-bit word ``Generator.integers`` takes per draw.
_RAW_64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)


def _trials(numerator: int, rng: np.random.Generator) -> Callable[[int], np.ndarray]:
    """``size -> size`` Bernoulli(r) trials: ``rng.integers(0, 2^53, size) < numerator``.

    On a 64-bit bit generator that draw is the raw word's top 53 bits (numpy's bounded
    integers, Lemire, ACM TOMACS 29(1), 2019, never reject at a power-of-two range), so
    the trial compares the raw word with ``numerator · 2^11`` directly: the same outcomes
    and stream, without the per-call cost of ``integers`` (called once per round below).
    """
    bits = rng.bit_generator
    if type(bits) in _RAW_64:
        raw, below = bits.random_raw, np.uint64(numerator << (64 - RATIO_BITS))
        return lambda size: raw(size) < below
    return lambda size: rng.integers(0, 2**RATIO_BITS, size=size) < numerator


def _geometric(numerator: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of G, ``P(G = g) = (1 − r) r^g``, ``r = numerator / 2^53``, exactly."""
    out = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    trials = _trials(numerator, rng)
    successes = 0
    while active.size:
        success = trials(active.size)
        if successes:  # G is the number of successes before the first failure
            out[active[~success]] = successes
        active = active[success]
        successes += 1
    return out


def discrete_laplace(
    numerator: int, shape: int | tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    """Discrete Laplace noise with ``r = numerator / 2^53``, as int64 of ``shape`` (exact)."""
    size = int(np.prod(shape))
    draws = _geometric(numerator, size, rng) - _geometric(numerator, size, rng)
    return draws.reshape(shape)
