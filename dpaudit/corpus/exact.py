"""mpmath building blocks for the corpus's true guarantees: Laplace laws and 1-D integrals.

Every function returns ``mpmath.mpf``; callers work inside ``working_precision``. Integrals over the threshold noise of a sparse vector are split at
every kink of the integrand (mpmath.quad then converges to full precision).
"""

from __future__ import annotations

import mpmath

from ..exact.law import working_precision as _digits

#: Digits of the corpus's integrals: far beyond the 4 significant digits an entry states.
DIGITS = 20

__all__ = [
    "discrete_laplace_tail",
    "integrate",
    "laplace_cdf",
    "laplace_pdf",
    "log_ratio",
    "working_precision",
]


def working_precision():
    """mpmath at ``DIGITS`` significant digits (restored on exit)."""
    return _digits(DIGITS)


def laplace_pdf(x, scale):
    """Density of Laplace(0, scale) at ``x``."""
    x, b = mpmath.mpf(x), mpmath.mpf(scale)
    return mpmath.exp(-abs(x) / b) / (2 * b)


def laplace_cdf(x, scale):
    """P(L <= x) for L ~ Laplace(0, scale)."""
    x, b = mpmath.mpf(x), mpmath.mpf(scale)
    if x < 0:
        return mpmath.exp(x / b) / 2
    return 1 - mpmath.exp(-x / b) / 2


def discrete_laplace_tail(m: int, scale):
    """P(Z >= m) for the discrete Laplace law P(Z = k) ∝ exp(−|k|/scale), by its series.

    Summed term by term (not the geometric closed form, which the tests use as the
    independent route): Σ_{k >= m} e^{−|k|/s} / Σ_k e^{−|k|/s}.
    """
    s = mpmath.mpf(scale)
    norm = (1 + mpmath.exp(-1 / s)) / (1 - mpmath.exp(-1 / s))
    if m >= 0:
        tail = mpmath.nsum(lambda k: mpmath.exp(-k / s), [m, mpmath.inf])
    else:
        tail = norm - mpmath.nsum(lambda k: mpmath.exp(-abs(k) / s), [-mpmath.inf, m - 1])
    return tail / norm


def integrate(function, kinks):
    """∫ function over the real line, split at the sorted ``kinks``."""
    points = sorted({mpmath.mpf(k) for k in kinks})
    return mpmath.quad(function, [-mpmath.inf, *points, mpmath.inf])


def log_ratio(p, q) -> float:
    """|ln(p/q)| as a float (inf when exactly one of them is 0)."""
    if p == 0 and q == 0:
        return 0.0
    if p == 0 or q == 0:
        return float("inf")
    return float(abs(mpmath.log(p / q)))
