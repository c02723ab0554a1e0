import itertools
import math

import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mechanisms import (
    PAD,
    AddRemoveUser,
    BoundedChange,
    ExponentialMechanism,
    GumbelTopK,
    PeelingEM,
    count_outcomes,
)

# Goodness-of-fit tests use a fixed seed and reject at p < 1e-6: a correct
# sampler fails each with probability <= 1e-6.
P_REJECT = 1e-6


def exact_topk_law(counts, k, epsilon):
    """P(o_1..o_k) = prod_r exp(ε c_{o_r}) / sum over unchosen (seed 003 Lemma 4.2), brute force."""
    w = [math.exp(epsilon * (c - max(counts))) for c in counts]
    law = {}
    for seq in itertools.permutations(range(len(counts)), min(k, len(counts))):
        p, left = 1.0, sum(w)
        for item in seq:
            p *= w[item] / left
            left -= w[item]
        law[seq] = p
    return law


def assert_fits(batch, law):
    assert_sampler_fits(law, batch, P_REJECT)


BAD = [
    ({"epsilon": 0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": math.nan}, "epsilon"),
    ({"epsilon": math.inf}, "epsilon"),
    ({"epsilon": "1"}, "epsilon"),
    ({"epsilon": 1.0, "monotonic": "yes"}, "monotonic"),
]


@pytest.mark.parametrize("kwargs, fragment", BAD)
def test_exponential_mechanism_rejects_bad_parameters(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        ExponentialMechanism(**kwargs)


@pytest.mark.parametrize("cls", [PeelingEM, GumbelTopK])
@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"k": 0, "epsilon": 1.0}, "k must"),
        ({"k": 1.5, "epsilon": 1.0}, "k must"),
        ({"k": 2, "epsilon": 0.0}, "epsilon"),
        ({"k": 2, "epsilon": 1.0, "delta_prime": 1.0}, "delta_prime"),
        ({"k": 2, "epsilon": 1.0, "delta_prime": -0.1}, "delta_prime"),
        ({"k": 2, "epsilon": 1.0, "monotonic": 1}, "monotonic"),
    ],
)
def test_top_k_mechanisms_reject_bad_parameters(cls, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        cls(**kwargs)


@settings(max_examples=50, deadline=None)
@given(
    k=st.integers(-5, 0) | st.floats(allow_nan=True), epsilon=st.floats(-10, 0) | st.just(math.nan)
)
def test_bad_numbers_never_construct(k, epsilon):
    with pytest.raises(ValueError):
        GumbelTopK(k=k, epsilon=1.0)
    with pytest.raises(ValueError):
        PeelingEM(k=1, epsilon=epsilon)


@pytest.mark.parametrize("mech", [ExponentialMechanism(epsilon=1.0), GumbelTopK(k=2, epsilon=1.0)])
@pytest.mark.parametrize("bad", [[], [1, -1], [[1, 2]], [0.5, 1]])
def test_bad_counts_are_rejected(mech, bad):
    with pytest.raises(ValueError, match="counts"):
        mech.sample(bad, 3, np.random.default_rng(0))


def test_bad_rng_and_size_are_rejected():
    mech = PeelingEM(k=2, epsilon=1.0)
    with pytest.raises(TypeError, match="rng"):
        mech.sample([1, 2, 3], 3, 42)
    with pytest.raises(ValueError, match="size"):
        mech.sample([1, 2, 3], -1, np.random.default_rng(0))


def test_claims_follow_lemma_4_1_and_the_composition():
    assert ExponentialMechanism(epsilon=0.7).claim == (0.7, 0.0, AddRemoveUser())
    assert ExponentialMechanism(epsilon=0.7, monotonic=False).claim == (1.4, 0.0, BoundedChange(1))
    for cls in (PeelingEM, GumbelTopK):
        assert cls(k=5, epsilon=0.3).claim == pytest.approx((1.5, 0.0, AddRemoveUser()))
        assert cls(k=5, epsilon=0.3, monotonic=False).claim.epsilon == pytest.approx(3.0)
        assert cls(k=5, epsilon=0.3, monotonic=False).claim.neighbours == BoundedChange(1)
        # seed 003 Thm 1 eq. 2 by hand at eps=0.1, k=100, delta'=1e-6 (see
        # test_accounting_basic): kε²/2 + ε√(k ln(1e6)/2) = 0.5 + 2.628261.
        claim = cls(k=100, epsilon=0.1, delta_prime=1e-6).claim
        assert claim.epsilon == pytest.approx(3.128261, abs=1e-6)
        assert claim.delta == 1e-6


@pytest.mark.parametrize(
    "mech",
    [ExponentialMechanism(epsilon=0.5), PeelingEM(k=3, epsilon=0.5), GumbelTopK(k=3, epsilon=0.5)],
)
def test_same_generator_state_gives_same_output(mech):
    counts = np.array([5, 1, 4, 4, 0, 2])
    a = mech.sample(counts, 300, np.random.default_rng(7))
    b = mech.sample(counts, 300, np.random.default_rng(7))
    assert np.array_equal(a, b)
    assert len(mech.run(counts, np.random.default_rng(7))) == mech.width


@pytest.mark.parametrize("cls", [PeelingEM, GumbelTopK])
def test_shapes_and_padding_when_the_domain_is_smaller_than_k(cls):
    mech = cls(k=4, epsilon=1.0)
    batch = mech.sample([3, 1], 50, np.random.default_rng(1))
    assert batch.shape == (50, 4) and batch.dtype == np.int64
    assert np.all(batch[:, 2:] == PAD)
    assert np.all(np.sort(batch[:, :2], axis=1) == [0, 1])
    assert mech.sample([3, 1], 0, np.random.default_rng(1)).shape == (0, 4)


@pytest.mark.parametrize("cls", [PeelingEM, GumbelTopK])
def test_huge_epsilon_returns_the_top_k_in_rank_order(cls):
    counts = np.array([2, 9, 4, 7, 0, 8])
    batch = cls(k=4, epsilon=1e6).sample(counts, 20, np.random.default_rng(2))
    assert np.all(batch == [1, 5, 3, 2])
    assert ExponentialMechanism(epsilon=1e6).run(counts, np.random.default_rng(2)) == (1,)


def test_exponential_mechanism_matches_softmax():
    counts = np.array([3, 0, 2, 2, 5])
    batch = ExponentialMechanism(epsilon=0.8).sample(counts, 100_000, np.random.default_rng(11))
    assert batch.shape == (100_000, 1)
    assert_fits(batch, exact_topk_law(counts, 1, 0.8))


@pytest.mark.parametrize("cls", [PeelingEM, GumbelTopK])
def test_top_k_mechanisms_match_the_exact_law(cls):
    counts = np.array([3, 0, 2, 2, 5])
    batch = cls(k=3, epsilon=0.6).sample(counts, 100_000, np.random.default_rng(12))
    assert_fits(batch, exact_topk_law(counts, 3, 0.6))


def test_peeling_and_one_shot_gumbel_have_the_same_law():
    # seed 003 Lemma 4.2, checked from samples only: a chi-square test of
    # homogeneity between the two samplers' outcome counts (p < 1e-6 ->
    # false failure <= 1e-6).
    counts = np.array([4, 1, 3, 3, 0, 2])
    a = count_outcomes(PeelingEM(k=2, epsilon=0.9).sample(counts, 60_000, np.random.default_rng(5)))
    b = count_outcomes(
        GumbelTopK(k=2, epsilon=0.9).sample(counts, 60_000, np.random.default_rng(6))
    )
    keys = sorted(set(a) | set(b))
    table = np.array([[a.get(o, 0) for o in keys], [b.get(o, 0) for o in keys]])
    table = table[:, table.sum(axis=0) >= 10]
    assert stats.chi2_contingency(table).pvalue > P_REJECT


def test_peeling_keeps_conditional_odds_after_dominant_items():
    # ε(c_0 − c_i) is so large that items 1, 2 underflow in the first draw;
    # the second draw must still pick 1 over 2 with odds e^{ε}:1 = e:1.
    counts = np.array([1000, 1, 0])
    batch = PeelingEM(k=2, epsilon=1.0).sample(counts, 40_000, np.random.default_rng(8))
    assert np.all(batch[:, 0] == 0)
    share = np.mean(batch[:, 1] == 1)
    expected = math.e / (1 + math.e)
    # 6-sigma binomial band: false failure < 1e-8.
    assert abs(share - expected) < 6 * math.sqrt(expected * (1 - expected) / 40_000)


@pytest.mark.parametrize(
    "mech",
    [
        ExponentialMechanism(epsilon=1e308),
        PeelingEM(k=2, epsilon=1e308),
        GumbelTopK(k=2, epsilon=1e308),
    ],
)
def test_an_epsilon_that_overflows_the_log_weights_is_rejected(mech):
    # ε × (count range) = 9e308 is not a float64: no exact sampling is possible.
    with pytest.raises(ValueError, match="epsilon=1e\\+308 is too large"):
        mech.sample([5, 3, 9, 0], 3, np.random.default_rng(0))


@pytest.mark.slow
def test_peeling_and_gumbel_agree_with_the_exact_law_at_scale():
    # 1.2M samples each on d = 8, k = 3 (336 outcomes); p < 1e-6 per test ->
    # false failure <= 3e-6 over the three tests.
    counts = np.array([6, 2, 5, 5, 0, 3, 1, 4])
    law = exact_topk_law(counts, 3, 0.5)
    a = PeelingEM(k=3, epsilon=0.5).sample(counts, 1_200_000, np.random.default_rng(31))
    b = GumbelTopK(k=3, epsilon=0.5).sample(counts, 1_200_000, np.random.default_rng(32))
    assert_fits(a, law)
    assert_fits(b, law)
    ca, cb = count_outcomes(a), count_outcomes(b)
    keys = sorted(set(ca) | set(cb))
    table = np.array([[ca.get(o, 0) for o in keys], [cb.get(o, 0) for o in keys]])
    table = table[:, table.sum(axis=0) >= 10]
    assert stats.chi2_contingency(table).pvalue > P_REJECT
