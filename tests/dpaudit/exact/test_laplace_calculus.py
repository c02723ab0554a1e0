"""Cross-checks of the two routes of dpaudit.exact.laplace_calculus and known closed forms."""

import itertools

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.exact import laplace_calculus as L
from dpaudit.exact import working_precision
from mechanisms.tail_bounds import laplace_difference_tail_mp

# Quadrature at 50 digits is slow; the closed-vs-quad checks run at 25 digits
# and compare to 1e-20 (mpmath's own error estimate is far below that).
QUAD_DIGITS = 25
QUAD_TOL = mpmath.mpf("1e-20")
TOL = mpmath.mpf("1e-30")


def small_case():
    return {"means": [3, 2, 2, 0], "scales": [1.0, 2.0, 0.5, 1.5]}


@pytest.mark.parametrize("order", [[0], [1], [3], [0, 1], [2, 0], [3, 1]])
def test_order_closed_matches_quadrature(order):
    case = small_case()
    with working_precision(QUAD_DIGITS):
        ledger = L.new_ledger()
        closed = L.probability_of_order(case["means"], case["scales"], order)
        quad = L.probability_of_order(
            case["means"], case["scales"], order, method="quad", ledger=ledger
        )
        assert abs(closed - quad) < QUAD_TOL
        assert L.quad_error_bound(ledger) < QUAD_TOL


@pytest.mark.parametrize("threshold_scale", [0, 1.0, 3.0])
def test_threshold_pattern_closed_matches_quadrature(threshold_scale):
    means, scales = [1, 2, 0], [1.0, 1.0, 2.0]
    with working_precision(QUAD_DIGITS):
        for above in [(True, False, True), (False, False, False)]:
            closed = L.probability_threshold_pattern(means, scales, above, 1.5, threshold_scale)
            quad = L.probability_threshold_pattern(
                means, scales, above, 1.5, threshold_scale, method="quad"
            )
            assert abs(closed - quad) < QUAD_TOL


@pytest.mark.parametrize(
    "gap,b1,b2",
    [(0.0, 1.0, 1.0), (1.5, 1.0, 1.0), (3.0, 1.0, 2.0), (2.0, 0.5, 1.5), (-1.0, 1.0, 1.0)],
)
def test_difference_tail_matches_independent_closed_form(gap, b1, b2):
    # mechanisms.tail_bounds has its own closed form (written separately, in ε's).
    with working_precision():
        mine = L.difference_tail(gap, b1, b2)
        theirs = laplace_difference_tail_mp(1 / mpmath.mpf(b1), 1 / mpmath.mpf(b2), gap, dps=50)
        assert abs(mine - theirs) < TOL


def test_difference_tail_equal_scales_paper_formula():
    # seed 002 Lemma D.1 / seed 000 Lemma 3.1: P[Lap(b) - Lap(b) > g] = e^{-g/b}(2 + g/b)/4.
    with working_precision():
        g, b = mpmath.mpf(2), mpmath.mpf(1)
        assert abs(L.difference_tail(2, 1, 1) - mpmath.exp(-g / b) * (2 + g / b) / 4) < TOL


def test_single_variable_against_fixed_threshold():
    # P[m + Lap(b) > t] for t > m is exp(-(t-m)/b)/2 (Laplace CDF).
    with working_precision():
        p = L.probability_threshold_pattern([1], [2.0], [True], 4, 0)
        assert abs(p - mpmath.exp(mpmath.mpf(-3) / 2) / 2) < TOL


def test_gaussian_pair_against_normal_cdf():
    # X1 - X2 ~ N(m1 - m2, s1^2 + s2^2): P[X1 > X2] = Φ((m1 - m2)/sqrt(s1^2 + s2^2)).
    with working_precision(QUAD_DIGITS):
        p = L.probability_of_order([1, 0], [1.0, 2.0], [0], noise="gaussian")
        expected = mpmath.ncdf(1 / mpmath.sqrt(5))
        assert abs(p - expected) < QUAD_TOL


def test_equal_variables_argmax_is_uniform():
    with working_precision():
        for i in range(4):
            assert abs(L.probability_argmax([2, 2, 2, 2], 1.5, i) - mpmath.mpf(1) / 4) < TOL


def test_deeper_orders_refine_shallower_ones():
    # P[o1 > o2 > rest] = Σ_{o3 ∈ rest} P[o1 > o2 > o3 > rest \ {o3}]: checks the nested level.
    means, scales = [3, 1, 2, 0, 2], [1.0, 0.5, 2.0, 1.0, 1.0]
    with working_precision():
        for o1, o2 in [(0, 1), (2, 4), (3, 0)]:
            rest = [i for i in range(5) if i not in (o1, o2)]
            total = sum(L.probability_of_order(means, scales, [o1, o2, o3]) for o3 in rest)
            assert abs(total - L.probability_of_order(means, scales, [o1, o2])) < TOL


def test_threshold_as_variable_matches_threshold_pattern():
    # All items below a noisy threshold = "threshold is the argmax".
    with working_precision():
        a = L.probability_of_order([1, 0, 2, 1.5], [1, 1, 2, 0.5], [3])
        b = L.probability_threshold_pattern([1, 0, 2], [1, 1, 2], [False] * 3, 1.5, 0.5)
        assert abs(a - b) < TOL


@settings(max_examples=25, deadline=None)
@given(
    means=st.lists(st.integers(0, 6), min_size=2, max_size=4),
    scale=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_argmax_and_orders_sum_to_one(means, scale):
    n = len(means)
    with working_precision():
        total = sum(L.probability_argmax(means, scale, i) for i in range(n))
        assert abs(total - 1) < TOL
        pairs = sum(
            L.probability_of_order(means, scale, list(p))
            for p in itertools.permutations(range(n), 2)
        )
        assert abs(pairs - 1) < TOL


@settings(max_examples=15, deadline=None)
@given(
    means=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    t=st.integers(0, 5),
    tscale=st.sampled_from([0, 1.0, 2.0]),
)
def test_threshold_patterns_sum_to_one(means, t, tscale):
    n = len(means)
    with working_precision():
        total = sum(
            L.probability_threshold_pattern(means, 1.0, above, t, tscale)
            for above in itertools.product([True, False], repeat=n)
        )
        assert abs(total - 1) < TOL


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="differ in length"):
        L.probability_of_order([1, 2], [1.0], [0])
    with pytest.raises(ValueError, match="distinct"):
        L.probability_of_order([1, 2], 1.0, [0], [0])
    with pytest.raises(ValueError, match="scale"):
        L.probability_of_order([1, 2], [1.0, -1.0], [0])
    with pytest.raises(ValueError, match="sigma"):
        L.probability_of_order([1, 2], [1.0, 0.0], [0], noise="gaussian")
    with pytest.raises(ValueError, match="method"):
        L.probability_of_order([1, 2], 1.0, [0], method="simpson")
    with pytest.raises(ValueError, match="above"):
        L.probability_threshold_pattern([1, 2], 1.0, [True], 0, 1)
    with pytest.raises(ValueError, match="indices"):
        L.probability_of_order([1, 2], 1.0, [5])


def test_three_level_order_closed_matches_a_one_dimensional_integral():
    # P[X1 > X2 > X0] conditions on the middle variable: ∫ f_2(t) P[X1 > t] P[X0 < t] dt, one
    # integral over closed-form Laplace tails, split at the means (the kinks), at 30 digits.
    # An independent route to the closed form's three levels; the library's own nested
    # quadrature is checked against the closed form on the cases above (two nested quadratures
    # at three levels took a minute of the slow step).
    means, scales = [3, 2, 2], [1.0, 1.0, 2.0]

    def cdf(t, mean, scale):
        z = (t - mean) / scale
        return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2

    def pdf(t, mean, scale):
        return mpmath.exp(-abs(t - mean) / scale) / (2 * scale)

    with working_precision(30):
        closed = L.probability_of_order(means, scales, [1, 2, 0])
        integral = mpmath.quad(
            lambda t: (
                pdf(t, means[2], scales[2])
                * (1 - cdf(t, means[1], scales[1]))
                * cdf(t, means[0], scales[0])
            ),
            [-mpmath.inf, 2, 3, mpmath.inf],
        )
        assert abs(closed - integral) < mpmath.mpf("1e-25"), (closed, integral)


@settings(max_examples=15, deadline=None)
@given(
    means=st.lists(st.integers(0, 4), min_size=3, max_size=4),
    shift=st.sampled_from([10, 1000, 10**6]),
    scales=st.sampled_from([1.0, [1.0, 0.5, 2.0, 1.0]]),
)
def test_orders_are_shift_invariant_at_large_counts(means, shift, scales):
    # Large counts make the closed form multiply huge and tiny exponentials; the
    # probabilities must not change when every mean moves by the same amount.
    if isinstance(scales, list):
        scales = scales[: len(means)]
    shifted = [m + shift for m in means]
    with working_precision():
        for order in ([0], [1, 0], [2, 0, 1]):
            a = L.probability_of_order(means, scales, order)
            b = L.probability_of_order(shifted, scales, order)
            assert abs(a - b) < TOL


def test_deterministic_variables_closed_matches_quadrature():
    # A fixed threshold inside an order (scale 0): the delta-function branch of both routes.
    means, scales = [2, 1, 1.5, 0], [1.0, 1.0, 0.0, 2.0]
    with working_precision(QUAD_DIGITS):
        for order in ([0, 2], [2], [1, 2], [0, 1, 2]):
            closed = L.probability_of_order(means, scales, order)
            quad = L.probability_of_order(means, scales, order, method="quad")
            assert abs(closed - quad) < QUAD_TOL
