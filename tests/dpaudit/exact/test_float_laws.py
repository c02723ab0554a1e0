"""float64 laws steer the worst-case search: they must match the exact mpmath laws."""

import mpmath
import numpy as np
import pytest

import mechanisms as M
from dpaudit.catalog import TopStableThresholdNoHalf
from dpaudit.exact import epsilon_from_laws, float_epsilon, float_law, output_law

TOP_STABLE = [
    M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3),
    M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3, epsilon_em=0.5),
    M.TopStable(k=1, kbar=2, epsilon=0.5, delta=1e-6, calibration="exact"),
    TopStableThresholdNoHalf(k=2, kbar=3, epsilon=1.0, delta=1e-3),
]


def _histograms(seed: int, n: int, d: int, high: int):
    rng = np.random.default_rng(seed)
    rows = [rng.integers(0, high, size=d) for _ in range(n)]
    return rows + [np.array([60, 36, 4, 4, 0][:d]), np.zeros(d, dtype=np.int64)]


@pytest.mark.parametrize("mechanism", TOP_STABLE, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("d", [2, 5])
def test_top_stable_float_law_matches_the_exact_law(mechanism, d):
    for counts in _histograms(d, 15, d, 70):
        exact = output_law(mechanism, counts)
        fast = float_law(mechanism, counts)
        assert set(fast) == {o for o, p in exact.items() if p > 0}
        for outcome, p in exact.items():
            # Quadrature to float64 rounding; the truncated tails hold < 3e-20.
            assert fast[outcome] == pytest.approx(float(p), rel=1e-11, abs=1e-19), (
                counts,
                outcome,
            )


@pytest.mark.parametrize(
    "mechanism",
    [
        M.RestrictedGumbel(k=2, kbar=4, epsilon=0.5, delta=1e-3, epsilon_r=0.5, delta_r=5e-4),
        M.RestrictedGumbel(k=1, kbar=1, epsilon=0.5, delta=0.0, epsilon_r=0.5, delta_r=1e-3),
    ],
)
def test_restricted_gumbel_float_law_matches_the_exact_law(mechanism):
    for counts in _histograms(11, 6, 6, 60):
        exact = output_law(mechanism, counts)
        fast = float_law(mechanism, counts)
        assert set(fast) == {o for o, p in exact.items() if p > 0}
        for outcome, p in exact.items():
            assert fast[outcome] == pytest.approx(float(p), rel=1e-11, abs=1e-19), (
                counts,
                outcome,
            )


def test_default_float_law_is_the_exact_law_rounded():
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    counts = np.array([5, 3, 3, 0, 1])
    exact = output_law(mechanism, counts)
    assert float_law(mechanism, counts) == {o: float(p) for o, p in exact.items()}


@pytest.mark.parametrize("delta", [0.0, 1e-6, 1e-3, 0.2])
def test_float_epsilon_matches_the_mpmath_epsilon(delta):
    mechanism = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    rng = np.random.default_rng(7)
    for _ in range(10):
        c = rng.integers(0, 50, size=4)
        c2 = c + rng.integers(0, 2, size=4)
        law_p, law_q = output_law(mechanism, c), output_law(mechanism, c2)
        exact = epsilon_from_laws(law_p, law_q, delta)
        fast = float_epsilon(float_law(mechanism, c), float_law(mechanism, c2), delta)
        if mpmath.isinf(exact):
            assert fast == float("inf")
        else:
            assert fast == pytest.approx(float(exact), rel=1e-9, abs=1e-12)
