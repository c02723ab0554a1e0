"""Composition theorems of mechanisms.accounting: advanced, bounded-range, eq. (12), Ind, optimal."""

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms.accounting import (
    advanced_composition,
    bounded_range_composition,
    bounded_range_kl,
    ddr_composition_epsilon,
    ind,
    individual_epsilon,
    limit_domain_epsilon,
    optimal_composition_delta,
    optimal_composition_delta_mp,
    optimal_composition_epsilon,
    optimal_composition_points,
)

small_eps = st.floats(min_value=1e-3, max_value=3.0, allow_nan=False)
ks = st.integers(min_value=1, max_value=300)
log_deltas = st.floats(min_value=-40, max_value=-1)


# --- advanced and bounded-range composition --------------------------------------------


def test_homogeneous_hand_table():
    # ε = 0.1, k = 100, δ' = 1e-6, ln(1/δ') = 13.8155106:
    #   Σε = 10; Σ ε tanh(ε/2) = 10·tanh(0.05) = 10·0.04995837 = 0.4995837
    #   √(2·Σε²·ln) = √(2·1·13.8155106) = 5.2565217 -> advanced = 5.7561054 (Thm 3)
    #   Σε²/2 = 0.5; √(½·1·13.8155106) = 2.6282609 -> concentrated = 3.1282609 (Lemma 4.4)
    assert advanced_composition([0.1] * 100, 1e-6) == pytest.approx((5.7561054, 1e-6), rel=1e-7)
    assert bounded_range_composition([0.1] * 100, 1e-6) == pytest.approx(
        (3.1282609, 1e-6), rel=1e-7
    )


def test_heterogeneous_hand_table():
    # 200 selections at ε = 0.05 and 100 at ε = 0.1, δ' = 1e-5 (ln 1e5 = 11.5129255):
    #   Σε = 20; Σε² = 200·0.0025 + 100·0.01 = 1.5
    #   drift = 10·tanh(0.025) + 10·tanh(0.05) = 0.2499479 + 0.4995837 = 0.7495316
    #   Thm 3: 0.7495316 + √(2·1.5·11.5129255) = 0.7495316 + 5.8769701 = 6.6265017
    #   Lemma 4.4: 0.75 + √(0.5·1.5·11.5129255) = 0.75 + 2.9384850 = 3.6884850
    epsilons = [0.05] * 200 + [0.1] * 100
    deltas = [1e-7] * 300
    eps, delta = advanced_composition(epsilons, 1e-5, deltas)
    assert eps == pytest.approx(6.6265017, rel=1e-7)
    assert delta == pytest.approx(300 * 1e-7 + 1e-5)
    assert bounded_range_composition(epsilons, 1e-5)[0] == pytest.approx(3.6884850, rel=1e-7)


def test_basic_composition_is_the_cap():
    # few large ε: the √ terms exceed Σε, so the min picks Σε
    assert advanced_composition([1.0, 0.5], 0.01) == (1.5, 0.01)
    assert bounded_range_composition([2.0, 2.0], 1e-6) == (4.0, 1e-6)
    assert advanced_composition([0.3] * 4, 0.0) == (pytest.approx(1.2), 0.0)


@given(epsilon=small_eps, k=ks, log_delta=log_deltas)
@settings(max_examples=200, deadline=None)
def test_limit_domain_epsilon_is_lemma_44_with_equal_terms(epsilon, k, log_delta):
    delta = math.exp(log_delta)
    assert limit_domain_epsilon(epsilon, k, delta) == pytest.approx(
        bounded_range_composition([epsilon] * k, delta)[0], rel=1e-12
    )
    # range-bounded composition is never worse than general advanced composition (Thm 3)
    assert (
        bounded_range_composition([epsilon] * k, delta)[0]
        <= advanced_composition([epsilon] * k, delta)[0] + 1e-12
    )


# --- seed 001 eq. (12)/(15) and Ind ----------------------------------------------------------


def test_eq12_hand_value():
    # ε = 0.1: x = 0.1/(1 − e^{-0.1}) = 0.1/0.095162582 = 1.050833194;
    #   ln x = ln 1.05 + ln(1.000793518) = 0.04879016 + 0.00079320 = 0.04958336
    #   x − 1 − ln x = 0.05083319 − 0.04958336 = 0.00124983 (≈ ε²/8 = 0.00125)
    # k = 100, δ = 1e-6: 100·0.00124983 + 0.1·√(50·13.8155106) = 0.124983 + 2.628261 = 2.753244
    assert bounded_range_kl(0.1) == pytest.approx(0.00124983, rel=2e-5)
    assert ddr_composition_epsilon(0.1, 100, 1e-6) == pytest.approx(2.753244, rel=2e-6)
    assert ddr_composition_epsilon(0.1, 100, 0.0) == pytest.approx(10.0)


@pytest.mark.parametrize("epsilon", [1e-8, 1e-4, 1e-2])
def test_eq12_drift_is_epsilon_squared_over_8_for_small_epsilon(epsilon):
    # series: x = 1 + ε/2 + ε²/12 + O(ε⁴), x − 1 − ln x = ε²/8 + O(ε⁴)
    assert bounded_range_kl(epsilon) == pytest.approx(epsilon**2 / 8, rel=epsilon**2)


@given(epsilon=st.floats(min_value=1e-12, max_value=30.0))
@settings(max_examples=200, deadline=None)
def test_eq12_drift_matches_high_precision_evaluation(epsilon):
    with mpmath.workdps(60):
        e = mpmath.mpf(epsilon)
        x = e / -mpmath.expm1(-e)
        reference = float(x - 1 - mpmath.log(x))
    assert bounded_range_kl(epsilon) == pytest.approx(reference, rel=1e-12)


@given(epsilon=small_eps, k=ks, log_delta=log_deltas)
@settings(max_examples=150, deadline=None)
def test_eq12_never_exceeds_lemma_44(epsilon, k, log_delta):
    delta = math.exp(log_delta)
    assert (
        ddr_composition_epsilon(epsilon, k, delta)
        <= limit_domain_epsilon(epsilon, k, delta) + 1e-12
    )


def ind_by_stepping(epsilon_comp, k, delta_comp):
    """seed 001 App. C Alg. 5, transcribed line by line (precision p = 1e-4)."""
    epsilon, t_min, p = epsilon_comp / k, 0.0, 0.0001
    while t_min <= epsilon_comp:
        epsilon = epsilon + p
        t1 = k * epsilon
        x = epsilon / (1 - math.exp(-epsilon))
        t2 = k * (x - 1 - math.log(x)) + epsilon * math.sqrt(k / 2 * math.log(1 / delta_comp))
        t_min = min(t1, t2)
    return epsilon - p


@pytest.mark.parametrize(
    "epsilon_total, k, delta",
    [
        (0.4, 10, 1e-6),
        (1.0, 50, 1e-6),
        (4.0, 100, 1e-6),
        (1.0, 5, 0.1),
        (2.0, 200, 1e-9),
    ],
)
def test_ind_is_at_least_as_good_as_the_papers_stepping(epsilon_total, k, delta):
    ours = individual_epsilon(epsilon_total, k, delta)
    stepped = ind_by_stepping(epsilon_total, k, delta)
    assert ddr_composition_epsilon(ours, k, delta) <= epsilon_total  # still within budget
    assert ours >= stepped  # never a smaller per-selection budget than the paper's
    assert ours - stepped <= 1e-4 + 1e-12  # stepping is within one step of the exact root
    assert ind is individual_epsilon


@given(epsilon_total=st.floats(min_value=0.01, max_value=20), k=ks, log_delta=log_deltas)
@settings(max_examples=100, deadline=None)
def test_ind_inverts_eq12(epsilon_total, k, log_delta):
    delta = math.exp(log_delta)
    eps = individual_epsilon(epsilon_total, k, delta)
    assert eps >= epsilon_total / k * (1 - 4e-16)  # one ulp below when the kε term binds
    assert ddr_composition_epsilon(eps, k, delta) <= epsilon_total
    assert ddr_composition_epsilon(eps * (1 + 1e-9), k, delta) > epsilon_total


# --- optimal composition (seed 003 Lemma 4.5) ------------------------------------------------


def test_lemma_45_hand_table():
    # k = 4, ε = 1, (1 + e)^4 = 3.7182818^4 = 191.14779
    #   i = 0: ((4ε), 0)
    #   i = 1: (2, (e^4 − e^2)/191.14779 = (54.598150 − 7.389056)/191.14779 = 0.2469770)
    #   i = 2: (0, [(e^4 − 1) + 4(e^3 − e)]/191.14779 = (53.598150 + 69.469020)/191.14779 = 0.6438327)
    points = optimal_composition_points(1.0, 4)
    assert [p[0] for p in points] == [4.0, 2.0, 0.0]
    assert [p[1] for p in points] == pytest.approx([0.0, 0.2469770, 0.6438327], abs=2e-7)


def test_single_mechanism_is_randomized_response():
    # k = 1: δ(ε_g) = (e^ε − e^{ε_g})/(1 + e^ε) for ε_g < ε; ε = 1, ε_g = 0.5:
    # (2.7182818 − 1.6487213)/3.7182818 = 1.0695606/3.7182818 = 0.2876491
    assert optimal_composition_delta(1.0, 1, 0.5) == pytest.approx(0.2876491, rel=1e-6)
    assert optimal_composition_delta(1.0, 1, 1.0) == 0.0


def test_per_mechanism_delta_is_folded_in_as_kairouz_thm_33():
    pure = optimal_composition_delta(0.5, 10, 1.0)
    assert optimal_composition_delta(0.5, 10, 1.0, delta=1e-3) == pytest.approx(
        1 - (1 - 1e-3) ** 10 * (1 - pure), rel=1e-12
    )
    with pytest.raises(ValueError, match="delta_total must exceed"):
        optimal_composition_epsilon(0.5, 10, 1e-3, delta=1e-3)


@given(
    epsilon=st.floats(min_value=0.01, max_value=2.0),
    k=st.integers(1, 120),
    fraction=st.floats(min_value=0.0, max_value=1.0),
    log_delta=st.floats(-20, -1),
)
@settings(max_examples=80, deadline=None)
def test_float_log_space_matches_exact_mpmath(epsilon, k, fraction, log_delta):
    epsilon_total = fraction * k * epsilon
    delta = math.exp(log_delta)
    for d in (0.0, delta):
        exact = float(optimal_composition_delta_mp(epsilon, k, epsilon_total, d))
        # abs: at ε_total ≈ kε the float rounding of ε_total itself moves δ by ~1e-16
        assert optimal_composition_delta(epsilon, k, epsilon_total, d) == pytest.approx(
            exact, rel=1e-9, abs=1e-14
        )


@pytest.mark.parametrize(
    "epsilon, k, delta_total", [(0.1, 100, 1e-6), (1.0, 10, 1e-3), (0.5, 7, 0.2)]
)
def test_optimal_epsilon_is_the_smallest_meeting_delta(epsilon, k, delta_total):
    eps = optimal_composition_epsilon(epsilon, k, delta_total)
    assert float(optimal_composition_delta_mp(epsilon, k, eps)) <= delta_total * (1 + 1e-12)
    assert float(optimal_composition_delta_mp(epsilon, k, eps * (1 - 1e-8))) > delta_total
    # never worse than Lemma 4.5's discrete points nor than basic composition
    discrete = min(e for e, d in optimal_composition_points(epsilon, k) if d <= delta_total)
    assert eps <= discrete <= k * epsilon


def test_bounded_range_beats_optimal_general_composition():
    # seed 003 Figure 1 / Lemma 4.4 discussion: for ε-range-bounded mechanisms the bound
    # improves on the optimal composition of general ε-DP mechanisms (ε = 0.1, k = 100, δ = 1e-6)
    assert limit_domain_epsilon(0.1, 100, 1e-6) < optimal_composition_epsilon(0.1, 100, 1e-6)
    # ... while the optimal bound beats Thm 3's advanced composition for general ε-DP
    assert optimal_composition_epsilon(0.1, 100, 1e-6) < advanced_composition([0.1] * 100, 1e-6)[0]


@pytest.mark.parametrize("epsilon, k", [(0.5, 20), (0.2, 40)])
def test_optimal_composition_matches_dp_accounting_pld(epsilon, k):
    # k-fold randomized response (two buckets, flip probability p = 2/(1+e^ε)) is the worst
    # pair for ε-DP (Kairouz et al.), so its composed hockey-stick curve is Lemma 4.5's δ.
    # dp_accounting rounds each privacy loss to a grid of width w (up if pessimistic, down
    # otherwise), so the composed loss moves by at most k·w: the exact value satisfies
    #   δ(ε_g + k w) <= δ_optimistic(ε_g) <= δ(ε_g) <= δ_pessimistic(ε_g) <= δ(ε_g − k w)
    # up to dp_accounting's tail truncation (1e-12 absolute slack).
    from dp_accounting.pld import privacy_loss_distribution as pld

    w = 1e-4
    flip = 2 / (1 + math.exp(epsilon))
    curves = {
        pessimistic: pld.from_randomized_response(
            flip, 2, pessimistic_estimate=pessimistic, value_discretization_interval=w
        ).self_compose(k)
        for pessimistic in (True, False)
    }
    for epsilon_g in [k * w, 1.0, 2.5, 0.6 * k * epsilon]:
        exact = optimal_composition_delta(epsilon, k, epsilon_g)
        upper = curves[True].get_delta_for_epsilon(epsilon_g)
        lower = curves[False].get_delta_for_epsilon(epsilon_g)
        assert exact <= upper + 1e-12
        assert upper <= optimal_composition_delta(epsilon, k, epsilon_g - k * w) + 1e-12
        assert lower <= exact + 1e-12
        assert optimal_composition_delta(epsilon, k, epsilon_g + k * w) <= lower + 1e-12


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: advanced_composition([], 1e-6), "epsilons"),
        (lambda: advanced_composition(0.5, 1e-6), "epsilons"),
        (lambda: advanced_composition([0.5, -1.0], 1e-6), "epsilons"),
        (lambda: advanced_composition([0.5], 1.0), "delta_prime"),
        (lambda: advanced_composition([0.5], 1e-6, deltas=[0.1, 0.1]), "deltas"),
        (lambda: bounded_range_composition([0.5, math.nan], 1e-6), "epsilons"),
        (lambda: bounded_range_composition([0.5], -1e-6), "delta"),
        (lambda: ddr_composition_epsilon(0.1, 0, 1e-6), "k must"),
        (lambda: individual_epsilon(0.0, 10, 1e-6), "epsilon_total"),
        (lambda: individual_epsilon(1.0, 10, 1.5), "delta"),
        (lambda: optimal_composition_delta(0.5, 10, -1.0), "epsilon_total"),
        (lambda: optimal_composition_delta(0.0, 10, 1.0), "epsilon"),
        (lambda: optimal_composition_epsilon(0.5, 10, 0.0), "delta_total"),
        (lambda: optimal_composition_points(0.5, 2.5), "k must"),
    ],
)
def test_bad_parameters_are_rejected_by_name(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


@given(
    value=st.one_of(
        st.floats(max_value=0.0),
        st.just(math.inf),
        st.just(math.nan),
        st.booleans(),
        st.text(max_size=3),
    )
)
@settings(max_examples=60, deadline=None)
def test_bad_epsilon_is_rejected_everywhere(value):
    for call in (
        lambda: ddr_composition_epsilon(value, 3, 1e-6),
        lambda: individual_epsilon(value, 3, 1e-6),
        lambda: optimal_composition_delta(value, 3, 0.5),
        lambda: limit_domain_epsilon(value, 3, 1e-6),
    ):
        with pytest.raises(ValueError, match="epsilon"):
            call()


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, k", [(0.1, 200), (1.0, 60)])
def test_optimal_composition_matches_dp_accounting_pld_many_steps(epsilon, k):
    # As test_optimal_composition_matches_dp_accounting_pld (same sandwich argument, w = 1e-5),
    # for longer compositions; also the ε at δ = 1e-6 from both sides.
    from dp_accounting.pld import privacy_loss_distribution as pld

    w = 1e-5
    flip = 2 / (1 + math.exp(epsilon))
    upper = pld.from_randomized_response(
        flip, 2, pessimistic_estimate=True, value_discretization_interval=w
    ).self_compose(k)
    lower = pld.from_randomized_response(
        flip, 2, pessimistic_estimate=False, value_discretization_interval=w
    ).self_compose(k)
    for fraction in [0.1, 0.3, 0.5]:
        epsilon_g = fraction * k * epsilon
        exact = optimal_composition_delta(epsilon, k, epsilon_g)
        assert lower.get_delta_for_epsilon(epsilon_g) <= exact + 1e-12
        assert exact <= upper.get_delta_for_epsilon(epsilon_g) + 1e-12
        assert (
            upper.get_delta_for_epsilon(epsilon_g)
            <= optimal_composition_delta(epsilon, k, epsilon_g - k * w) + 1e-12
        )
    ours = optimal_composition_epsilon(epsilon, k, 1e-6)
    assert (
        lower.get_epsilon_for_delta(1e-6) - 1e-9 <= ours <= upper.get_epsilon_for_delta(1e-6) + 1e-9
    )
