"""Independent noisy values ``X = mean + noise`` whose orderings the exact laws integrate.

[`Laplace`][dpaudit.exact.noise_variables.Laplace] (closed form or quadrature; ``scale = 0`` is
the constant ``mean``) and [`Gaussian`][dpaudit.exact.noise_variables.Gaussian] (quadrature
only). Means and scales are kept as exact rationals (``fractions.Fraction`` of the float
inputs), so that a rate which cancels to zero is exactly zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

__all__ = ["Gaussian", "Laplace", "as_fraction", "as_mpf", "noisy_variables"]


def as_mpf(value) -> mpmath.mpf:
    """An mpmath number from an exact rational (or anything mpmath accepts)."""
    if isinstance(value, Fraction):
        return mpmath.mpf(value.numerator) / value.denominator
    return mpmath.mpf(value)


def as_fraction(value, name: str) -> Fraction:
    try:
        number = Fraction(value)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a finite real number, got {value!r}") from error
    return number


@dataclass(frozen=True)
class Laplace:
    """``mean + Lap(scale)``; ``scale = 0`` is the constant ``mean``."""

    mean: Fraction
    scale: Fraction

    def __init__(self, mean, scale):
        mean = as_fraction(mean, "mean")
        scale = as_fraction(scale, "scale")
        if scale < 0:
            raise ValueError(f"scale must be >= 0, got {scale}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "scale", scale)

    @property
    def deterministic(self) -> bool:
        return self.scale == 0

    def pdf(self, x):
        b = as_mpf(self.scale)
        return mpmath.exp(-abs(x - as_mpf(self.mean)) / b) / (2 * b)

    def cdf(self, x):
        m = as_mpf(self.mean)
        if self.scale == 0:
            return as_mpf(1) if x > m else as_mpf(0)
        b = as_mpf(self.scale)
        if x < m:
            return mpmath.exp((x - m) / b) / 2
        return 1 - mpmath.exp(-(x - m) / b) / 2

    def sf(self, x):
        m = as_mpf(self.mean)
        if self.scale == 0:
            return as_mpf(1) if x < m else as_mpf(0)
        b = as_mpf(self.scale)
        if x < m:
            return 1 - mpmath.exp((x - m) / b) / 2
        return mpmath.exp(-(x - m) / b) / 2


@dataclass(frozen=True)
class Gaussian:
    """``mean + N(0, sigma^2)`` (quadrature only)."""

    mean: Fraction
    scale: Fraction  # the standard deviation sigma

    def __init__(self, mean, scale):
        mean = as_fraction(mean, "mean")
        scale = as_fraction(scale, "scale")
        if scale <= 0:
            raise ValueError(f"Gaussian scale (sigma) must be > 0, got {scale}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "scale", scale)

    deterministic = False

    def pdf(self, x):
        return mpmath.npdf(x, as_mpf(self.mean), as_mpf(self.scale))

    def cdf(self, x):
        z = (x - as_mpf(self.mean)) / as_mpf(self.scale)
        return mpmath.erfc(-z / mpmath.sqrt(2)) / 2

    def sf(self, x):
        z = (x - as_mpf(self.mean)) / as_mpf(self.scale)
        return mpmath.erfc(z / mpmath.sqrt(2)) / 2


def noisy_variables(means, scales, noise: str):
    means = list(means)
    if isinstance(scales, (int, float, Fraction)):
        scales = [scales] * len(means)
    scales = list(scales)
    if len(scales) != len(means):
        raise ValueError(f"means and scales differ in length ({len(means)} vs {len(scales)})")
    if noise == "laplace":
        return [Laplace(m, s) for m, s in zip(means, scales)]
    if noise == "gaussian":
        return [Gaussian(m, s) for m, s in zip(means, scales)]
    raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
