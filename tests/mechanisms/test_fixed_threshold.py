"""FixedThreshold (seed 002 App. F, Alg. 8, Thm 5; reconstructed): parameters, claim, sampler."""

import math

import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import mechanisms as M
from mechanisms import BOTTOM, PAD, AddRemoveUser, FixedThreshold, TopCounts, accounting

# Goodness-of-fit tests: fixed seed, reject at p < 1e-6, so a correct sampler
# fails each with probability <= 1e-6.
P_REJECT = 1e-6


def make(**over):
    fields = {"kbar": 3, "epsilon": 1.0, "delta": 1e-3}
    fields.update(over)
    return FixedThreshold(**fields)


# --- parameters --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"kbar": 0}, "kbar must be an integer >= 1"),
        ({"kbar": 2.0}, "kbar must be an integer"),
        ({"kbar": True}, "kbar must be an integer"),
        ({"epsilon": 0.0}, "epsilon must be a finite number > 0"),
        ({"epsilon": math.inf}, "epsilon must be a finite number > 0"),
        ({"epsilon": 5e-324}, "epsilon .*1/epsilon"),  # the Laplace scale overflows
        ({"delta": 0.0}, r"delta must be a finite number in \(0, 1\)"),
        ({"delta": 1.0}, r"delta must be a finite number in \(0, 1\)"),
        ({"delta": "0.1"}, "delta"),
    ],
)
def test_bad_parameters_are_rejected_naming_the_argument(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        make(**kwargs)


@settings(max_examples=60, deadline=None)
@given(
    kbar=st.integers(-5, 0),
    epsilon=st.floats(-5, 0) | st.just(math.nan) | st.just(math.inf) | st.just(-math.inf),
    delta=st.floats(-1, 0) | st.floats(1, 5) | st.just(math.nan),
)
def test_bad_numbers_never_construct(kbar, epsilon, delta):
    with pytest.raises(ValueError, match="kbar"):
        make(kbar=kbar)
    with pytest.raises(ValueError, match="epsilon"):
        make(epsilon=epsilon)
    with pytest.raises(ValueError, match="delta"):
        make(delta=delta)


def test_sample_rejects_bad_rng_size_and_counts():
    mech = make()
    with pytest.raises(TypeError, match="rng"):
        mech.sample([1, 2, 3], 5, 0)
    with pytest.raises(ValueError, match="size"):
        mech.sample([1, 2, 3], -1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="counts"):
        mech.sample([1, -2, 3], 5, np.random.default_rng(0))


# --- claim and threshold -----------------------------------------------------------------


@pytest.mark.parametrize(
    "kbar, epsilon, delta", [(1, 1.0, 1e-3), (2, 1.0, 1e-3), (3, 0.4, 1e-6), (10, 0.1, 0.05)]
)
def test_claim_is_kbar_epsilon_delta_unrestricted(kbar, epsilon, delta):
    # Reconstructed Thm 5: k̄ tests, each (ε, δ/k̄)-DP (Cor. F.1), basic composition.
    claim = make(kbar=kbar, epsilon=epsilon, delta=delta).claim
    assert claim.epsilon == kbar * epsilon
    assert claim.delta == pytest.approx(delta, rel=1e-15)
    assert claim.neighbours == AddRemoveUser(None)
    assert claim[:2] == accounting.basic_composition(epsilon, delta / kbar, kbar)


def test_advanced_claim_is_advanced_composition_of_the_kbar_tests():
    mech = make(kbar=100, epsilon=0.1, delta=1e-6)
    eps, delta, rel = mech.advanced_claim(1e-6)
    # seed 003 Thm 3 by hand: 100·0.1·tanh(0.05) + sqrt(2·100·0.01·ln(1e6)) < k̄ε = 10.
    by_hand = 100 * 0.1 * math.tanh(0.05) + math.sqrt(2 * 100 * 0.01 * math.log(1e6))
    assert eps == pytest.approx(by_hand, rel=1e-12) and eps < mech.claim.epsilon
    assert delta == pytest.approx(2e-6, rel=1e-12)
    assert rel == AddRemoveUser(None)
    # δ' = 0: only Σε is finite, so the basic claim comes back.
    assert mech.advanced_claim(0.0) == (
        pytest.approx(10.0),
        pytest.approx(1e-6),
        AddRemoveUser(None),
    )
    with pytest.raises(ValueError, match="delta_prime"):
        mech.advanced_claim(1.5)


def test_tau_and_threshold_by_hand():
    mech = make(kbar=3, epsilon=0.5, delta=0.01)
    tau = 1 + math.log(3 / 0.02) / 0.5
    assert mech.tau == pytest.approx(tau, rel=1e-14)
    # Lemma F.2 item 2: an item one above h_(k̄+1) passes with probability exactly δ/k̄.
    assert 0.5 * math.exp(-0.5 * (mech.tau - 1)) == pytest.approx(0.01 / 3, rel=1e-12)
    assert mech.threshold([9, 8, 7, 6, 5]) == pytest.approx(6 + tau)
    # d <= k̄: the missing h_(k̄+1) is 0 (the limited-domain convention).
    assert mech.threshold([9, 8]) == pytest.approx(tau)


def test_strict_domain_drops_ties_at_the_cut_and_zero_counts():
    mech = make(kbar=3)
    items, counts, h_next = mech.limited_domain([9, 7, 5, 5, 5, 0])
    assert items.tolist() == [0, 1] and counts.tolist() == [9, 7] and h_next == 5
    items, _, h_next = mech.limited_domain([0, 4, 4])  # d <= k̄: h_(k̄+1) = 0
    assert items.tolist() == [1, 2] and h_next == 0
    items, _, _ = mech.limited_domain([2, 2, 2, 2])  # everything ties at the cut
    assert items.size == 0
    assert (
        make().sample([2, 2, 2, 2], 5, np.random.default_rng(0)).tolist()
        == [[BOTTOM, PAD, PAD]] * 5
    )


def test_huge_epsilon_reports_exactly_the_items_more_than_one_above_the_cut():
    # ε → ∞: τ → 1, so item i is reported iff h_i > h_(k̄+1) + 1 (the "+1" of Lemma F.2).
    mech = make(kbar=4, epsilon=1e6, delta=1e-6)
    counts = np.array([5, 9, 3, 4, 3, 0, 12])  # top 4: 6, 1, 0, 3; h_(5) = 3
    batch = mech.sample(counts, 50, np.random.default_rng(1))
    assert np.all(batch == [0, 1, 6, BOTTOM])  # item 3 (count 4) is only 1 above the cut
    assert mech.run([5, 9, 1, 4, 2, 0, 12], np.random.default_rng(1)) == (0, 1, 3, 6)


# --- sampler -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 2000])
def test_rows_are_well_formed_and_reproducible(size):
    mech = make(kbar=4, epsilon=0.3, delta=0.2)
    counts = np.array([9, 8, 8, 7, 3, 3, 2, 0, 12])
    batch = mech.sample(counts, size, np.random.default_rng(4))
    assert batch.shape == (size, mech.width) == (size, 4) and batch.dtype == np.int64
    assert np.array_equal(batch, mech.sample(counts, size, np.random.default_rng(4)))
    for row in batch:
        kept = row[row != PAD]
        assert np.all(row[kept.size :] == PAD), "PAD only at the end"
        items = kept[kept != BOTTOM]
        assert np.all(np.diff(items) > 0), "a set: ascending ids"
        assert set(items.tolist()) <= {8, 0, 1, 2}  # the strict top-4 (count > h_(5) = 7)
        assert (kept.size == 4 and BOTTOM not in kept) or (kept[-1] == BOTTOM and items.size < 4)
    if size:
        assert mech.run(counts, np.random.default_rng(4)) == M.outcome_from_row(batch[0])


def test_top_counts_input_gives_the_same_output_as_the_histogram():
    mech = make(kbar=3, epsilon=0.5, delta=0.1)
    counts = np.array([3, 9, 9, 1, 0, 7, 2])
    top = M.top_counts(counts, mech.kbar + 1)
    a = mech.sample(counts, 300, np.random.default_rng(8))
    assert np.array_equal(a, mech.sample(top, 300, np.random.default_rng(8)))
    with pytest.raises(ValueError, match="needs the top"):
        mech.sample(
            TopCounts(top.items[:-1], top.counts[:-1], counts.size), 1, np.random.default_rng(0)
        )
    # A database prefix of a 10^9-item domain is all that is read.
    prefix = TopCounts(np.array([77, 5, 901, 3]), np.array([40, 38, 2, 1]), 10**9)
    assert set(np.unique(mech.sample(prefix, 100, np.random.default_rng(3)))) <= {
        77,
        5,
        901,
        BOTTOM,
        PAD,
    }


@settings(max_examples=30, deadline=None)
@given(
    counts=hnp.arrays(np.int64, st.integers(1, 9), elements=st.integers(0, 20)),
    kbar=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_rows_are_valid_for_any_histogram(counts, kbar, seed):
    mech = make(kbar=kbar, epsilon=0.5, delta=0.2)
    domain = set(mech.limited_domain(counts)[0].tolist())
    assert len(domain) <= kbar
    for row in mech.sample(counts, 30, np.random.default_rng(seed)).tolist():
        outcome = M.outcome_from_row(row)
        items = [i for i in outcome if i != BOTTOM]
        assert set(items) <= domain and items == sorted(set(items))
        assert outcome == tuple(items) + ((BOTTOM,) if len(items) < kbar else ())


def brute_force_law(mech, counts):
    """Independent Bernoullis in float: ``p_i = scipy.stats.laplace.sf(T − h_i, scale=1/ε)``."""
    counts = np.asarray(counts)
    threshold = mech.threshold(counts)
    domain = sorted(mech.limited_domain(counts)[0].tolist())
    p = {i: stats.laplace.sf(threshold - counts[i], scale=1 / mech.epsilon) for i in domain}
    law = {}
    for mask in range(2 ** len(domain)):
        chosen = tuple(i for b, i in enumerate(domain) if mask >> b & 1)
        prob = math.prod(p[i] if i in chosen else 1 - p[i] for i in domain)
        law[chosen + ((BOTTOM,) if len(chosen) < mech.kbar else ())] = prob
    return law


@pytest.mark.parametrize(
    "mech, counts",
    [
        (make(kbar=3, epsilon=0.8, delta=0.2), [4, 0, 6, 3, 3, 5, 1]),  # T = 3 + τ, τ ≈ 2.6
        (make(kbar=2, epsilon=2.0, delta=0.1), [5, 5, 4]),
        (make(kbar=4, epsilon=0.5, delta=0.3), [3, 1]),  # d <= k̄
    ],
)
def test_sampler_matches_the_product_of_bernoullis(mech, counts):
    # 10^5 samples, fixed seed, chi-square at p < 1e-6: false failure <= 1e-6.
    law = brute_force_law(mech, counts)
    n = 100_000
    assert_sampler_fits(law, mech.sample(counts, n, np.random.default_rng(31)), P_REJECT)
