"""The corpus's shared exact helpers (dpaudit.corpus.exact) against closed forms."""

import mpmath
import pytest

from dpaudit.corpus import exact as X


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("m", [-3, 0, 1, 5, 10])
def test_discrete_laplace_tail_series_against_closed_form(m, scale):
    with X.working_precision():
        r = mpmath.exp(-1 / mpmath.mpf(scale))
        # P(Z >= m) = r^m / (1 + r) for m >= 1; 1 − P(Z <= m − 1) = 1 − r^{1−m}/(1 + r) otherwise.
        closed = r**m / (1 + r) if m >= 1 else 1 - r ** (1 - m) / (1 + r)
        # Agreement to all but the last few of the working digits.
        assert abs(X.discrete_laplace_tail(m, scale) / closed - 1) < mpmath.mpf(10) ** (
            3 - X.DIGITS
        )
