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
each drawn by inversion, ``G = #{g >= 1 : U < r^g}``, with every comparison of the uniform
U against ``r^g`` made exactly in integers — possible because ``r`` is a multiple of
``2^{−53}``: [`discrete_laplace_ratio`][mechanisms.discrete_laplace.discrete_laplace_ratio] rounds
``e^{−ε/Δ}`` UP to one, so the noise is at least as wide as ε asks (the release is
``Δ · ln(2^53 / numerator)``-DP, which is <= ε). A draw reads one 64-bit word almost always,
whatever ``r`` (counting Bernoulli(r) trials would read ``1/(1 − r)``: 40 at ``ε/Δ = 0.025``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from .validation import require_positive_float

__all__ = ["RATIO_BITS", "discrete_laplace", "discrete_laplace_ratio", "geometric_draws"]

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

#: The table holds thresholds for ``g = 1..L`` with ``L`` the first ``g`` where ``r^g < 2^-11``
#: (a draw then needs a second word with probability below 2^-11), capped here: for ``r``
#: near 1 the cap trades a longer tail loop for a table that stays small and quick to build.
_TABLE_CAP = 4096
_TAIL_BITS = 11


def _words(rng: np.random.Generator) -> Callable[[int], np.ndarray]:
    """``size -> size`` uniform 64-bit words: ``rng.integers(0, 2^64, size, dtype=uint64)``.

    On a 64-bit bit generator that draw is the raw word (numpy's bounded integers, Lemire,
    ACM TOMACS 29(1), 2019, take the raw word unchanged on the full range), so the raw
    output is read directly: the same words and stream, without the per-call cost.
    """
    bits = rng.bit_generator
    if type(bits) in _RAW_64:
        return bits.random_raw
    return lambda size: rng.integers(0, 2**64, size=size, dtype=np.uint64)


@functools.lru_cache(maxsize=64)
def _thresholds(numerator: int) -> np.ndarray:
    """``T_g = floor(r^g · 2^64)`` for ``g = L, …, 1`` (ascending) as uint64, exactly.

    ``r^g = numerator^g / 2^{53 g}`` is a dyadic rational, so ``T_g`` is an integer shift of
    ``numerator^g``: no rounding anywhere.
    """
    r = numerator / 2**RATIO_BITS
    reach = math.ceil(_TAIL_BITS * math.log(2) / -math.log(r))
    length = min(_TABLE_CAP, max(1, reach))
    power, thresholds = 1, []
    for g in range(1, length + 1):
        power *= numerator
        thresholds.append((power << 64) >> (RATIO_BITS * g))
    ascending = np.array(thresholds[::-1], dtype=np.uint64)
    # Consecutive thresholds differ by r^g (1 − r) 2^64 >= 2^-11 · 2^-53 · 2^64 = 1 while
    # r^{g-1} >= 2^-11, so at most one can tie with a word (what geometric_draws relies on).
    if not np.all(ascending[1:] > ascending[:-1]):
        raise AssertionError(f"thresholds for numerator={numerator} are not strictly ordered")
    ascending.flags.writeable = False  # cached and shared by every caller
    return ascending


def _below_power(word: int, g: int, numerator: int, words: Callable[[int], np.ndarray]) -> bool:
    """Whether ``U < r^g`` for ``U = (word + V) / 2^64``, V uniform on [0, 1) from ``words``.

    Only reached when ``word == floor(r^g · 2^64)`` (a tie, probability below 2^-52 a draw);
    V's bits are drawn 64 at a time until they decide, against the exact (dyadic) fraction.
    """
    denominator_bits = RATIO_BITS * g
    remainder = (numerator**g << 64) - (word << denominator_bits)  # (r^g·2^64 − word)·2^{53g}
    while remainder > 0:
        # Compare the next 64 bits of V with those of remainder / 2^{53g}.
        remainder <<= 64
        digit, remainder = divmod(remainder, 1 << denominator_bits)
        drawn = int(words(1)[0])
        if drawn != digit:
            return drawn < digit
    return False  # V >= the fraction once its expansion has ended


def geometric_draws(numerator: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of G, ``P(G = g) = (1 − r) r^g``, ``r = numerator / 2^53``, exactly.

    Inversion with exact comparisons: for U uniform on [0, 1), ``G = #{g >= 1 : U < r^g}``
    has ``P(G >= g) = r^g``. U's first 64 bits (one word) decide every comparison with the
    integer thresholds of ``_thresholds`` except a tie, which ``_below_power``
    settles with further bits. A draw that clears all ``L`` thresholds (``U < r^L``) is
    ``L`` plus a fresh draw of G (memorylessness), so the table's cap never truncates.
    """
    ascending = _thresholds(numerator)
    words = _words(rng)
    out = _cleared(ascending, words(size), numerator, words)
    pending = np.flatnonzero(out == ascending.size)
    while pending.size:  # U < r^L: L plus a fresh draw (probability below 2^-11 unless capped)
        more = _cleared(ascending, words(pending.size), numerator, words)
        out[pending] += more
        pending = pending[more == ascending.size]
    return out


def _cleared(
    ascending: np.ndarray, word: np.ndarray, numerator: int, words: Callable[[int], np.ndarray]
) -> np.ndarray:
    """For each word, ``#{g in 1..L : U < r^g}`` with U's first 64 bits ``word`` (exact)."""
    at_or_below = np.searchsorted(ascending, word, side="right")  # thresholds <= word
    cleared = ascending.size - at_or_below  # the g with word < T_g: U < r^g for sure
    tied = np.flatnonzero(ascending[np.maximum(at_or_below - 1, 0)] == word)
    for i in tied:  # word == T_{g+1}, g = cleared: U < r^{g+1} is up to the next bits
        cleared[i] += _below_power(int(word[i]), int(cleared[i]) + 1, numerator, words)
    return cleared


def discrete_laplace(
    numerator: int, shape: int | tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    """Discrete Laplace noise with ``r = numerator / 2^53``, as int64 of ``shape`` (exact)."""
    size = int(np.prod(shape))
    draws = geometric_draws(numerator, size, rng) - geometric_draws(numerator, size, rng)
    return draws.reshape(shape)
