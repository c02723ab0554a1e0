"""Chi-square goodness of fit of a sampler against an exact law, shared by the test suite.

Importable as ``goodness_of_fit`` (tests/conftest.py puts this directory on
``sys.path``). Every caller fixes its seed and states its false-failure
probability, which is the ``p_reject`` it passes (default 1e-6).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from mechanisms import count_outcomes

__all__ = ["assert_sampler_fits", "chi_square_pvalue"]


def chi_square_pvalue(law, observed, *, min_expected: float = 5.0) -> float:
    """p-value of Pearson's chi-square test of ``observed`` against ``law``.

    ``law`` maps outcomes to probabilities (floats or mpmath numbers);
    ``observed`` is a batch (int64 rows) or a mapping outcome -> count. Any
    observed outcome outside the law's support fails at once (AssertionError).
    Cells with expected count < ``min_expected`` are pooled into one, and the
    pool joins the smallest remaining cell when it is itself too small, so the
    chi-square approximation holds. Returns 1.0 when fewer than two cells remain.
    """
    if isinstance(observed, np.ndarray):
        observed = count_outcomes(observed)
    support = {o for o, p in law.items() if p > 0}
    unexpected = set(observed) - support
    assert not unexpected, f"outcomes of probability 0 were sampled: {sorted(unexpected)[:5]}"
    keys = sorted(support, key=lambda o: float(law[o]))  # ascending: small cells first
    n = sum(observed.values())
    expected = np.array([float(law[o]) for o in keys]) * n
    counts = np.array([observed.get(o, 0) for o in keys], dtype=float)
    small = expected < min_expected
    if small.any():
        pooled_e, pooled_o = expected[small].sum(), counts[small].sum()
        expected, counts = expected[~small], counts[~small]
        if pooled_e >= min_expected or expected.size == 0:
            expected, counts = np.append(expected, pooled_e), np.append(counts, pooled_o)
        else:
            expected[0] += pooled_e
            counts[0] += pooled_o
    if expected.size < 2:
        return 1.0
    expected *= counts.sum() / expected.sum()  # float rounding of the total only
    return float(stats.chisquare(counts, expected).pvalue)


def assert_sampler_fits(law, observed, p_reject: float = 1e-6, **kwargs) -> None:
    """Fail when the chi-square p-value is below ``p_reject`` (the false-failure probability)."""
    p_value = chi_square_pvalue(law, observed, **kwargs)
    assert p_value > p_reject, f"chi-square p = {p_value:.3g} <= {p_reject:g}"
