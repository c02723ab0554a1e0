"""Integer noise of the partition-selection entries: two-sided geometric and discrete Gaussian.

The discrete Gaussian by rejection from the two-sided geometric (Canonne, Kamath, Steinke,
"The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Alg. 3), and its tail in mpmath.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

__all__ = ["discrete_gaussian", "discrete_gaussian_tail", "two_sided_geometric"]


def two_sided_geometric(rng, scale, shape):
    """P(Z = k) ∝ exp(−|k|/scale): the difference of two geometric counts of failures."""
    p = -math.expm1(-1.0 / scale)
    return rng.geometric(p, size=shape) - rng.geometric(p, size=shape)


def discrete_gaussian(rng, sigma, shape):
    """P(Z = k) ∝ exp(−k²/(2σ²)) by rejection from discrete Laplace (Canonne, Kamath,
    Steinke 2020, Alg. 3): Y with P ∝ e^{−|y|/t}, t = ⌊σ⌋ + 1, kept with probability
    exp(−(|Y| − σ²/t)²/(2σ²)); rounds repeat on the rejected draws only."""
    size = int(np.prod(shape))
    t = math.floor(sigma) + 1
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        y = two_sided_geometric(rng, t, todo.size)
        keep = rng.random(todo.size) < np.exp(-((np.abs(y) - sigma**2 / t) ** 2) / (2 * sigma**2))
        out[todo[keep]] = y[keep]
        todo = todo[~keep]
    return out.reshape(shape)


def discrete_gaussian_tail(m: int, sigma):
    """P(Z >= m) for the discrete Gaussian, by its series (mpmath)."""
    s = mpmath.mpf(sigma)

    def weight(k):
        return mpmath.exp(-(mpmath.mpf(k) ** 2) / (2 * s**2))

    return mpmath.nsum(weight, [m, mpmath.inf]) / mpmath.nsum(weight, [-mpmath.inf, mpmath.inf])
