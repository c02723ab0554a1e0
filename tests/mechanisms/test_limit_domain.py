import math

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import (
    BOTTOM,
    PAD,
    AddRemoveUser,
    LimitDomain,
    LimitDomainOptimizedKbar,
    StrictLimitDomain,
    TopCounts,
    top_counts,
)

# Goodness-of-fit tests: fixed seed, reject at p < 1e-6, so a correct sampler
# fails each with probability <= 1e-6.
P_REJECT = 1e-6
CLASSES = [LimitDomain, StrictLimitDomain]


def brute_force_ld_law(items, scores, h_bot, k, epsilon):
    """Seed 003 Alg. 1 in law, by brute force over orderings (Lemma 4.2): peel
    ∝ exp(ε score) among items and ⊥, stop at ⊥ or after k items."""
    with mpmath.workdps(40):
        cands = list(items) + [BOTTOM]
        w = [
            mpmath.e ** (mpmath.mpf(epsilon) * mpmath.mpf(float(s))) for s in list(scores) + [h_bot]
        ]
        law = {}

        def extend(prefix, used, prob):
            if len(prefix) == k or (prefix and prefix[-1] == BOTTOM):
                law[tuple(prefix)] = prob
                return
            free = [j for j in range(len(cands)) if j not in used]
            total = sum(w[j] for j in free)
            for j in free:
                extend(prefix + [cands[j]], used | {j}, prob * w[j] / total)

        extend([], frozenset(), mpmath.mpf(1))
        return {o: float(p) for o, p in law.items()}


def assert_fits(batch, law):
    assert_sampler_fits(law, batch, P_REJECT)


# --- parameters and claims ---------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"k": 0, "kbar": 3, "epsilon": 1.0, "delta": 1e-3}, "k must"),
        ({"k": 4, "kbar": 3, "epsilon": 1.0, "delta": 1e-3}, "kbar must be an integer >= 4"),
        ({"k": 2, "kbar": 3, "epsilon": 0.0, "delta": 1e-3}, "epsilon"),
        ({"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 0.0}, "delta"),
        ({"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 1e-3, "max_items": 0}, "max_items"),
        ({"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 1e-3, "delta_prime": 1.0}, "delta_prime"),
        (
            {"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 0.7, "delta_prime": 0.5},
            "delta \\+ delta_prime",
        ),
    ],
)
def test_bad_parameters_are_rejected_naming_the_argument(cls, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        cls(**kwargs)


def test_optimized_kbar_rejects_kbar_max_below_k():
    with pytest.raises(ValueError, match="kbar_max must be an integer >= 3"):
        LimitDomainOptimizedKbar(k=3, kbar_max=2, epsilon=1.0, delta=1e-3)


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(1, 5),
    gap=st.integers(-5, -1),
    epsilon=st.floats(-5, 0) | st.just(math.nan) | st.just(math.inf),
    delta=st.floats(-1, 0) | st.floats(1, 5),
)
def test_bad_numbers_never_construct(k, gap, epsilon, delta):
    with pytest.raises(ValueError):
        LimitDomain(k=k, kbar=k + gap, epsilon=1.0, delta=1e-3)
    with pytest.raises(ValueError):
        LimitDomain(k=k, kbar=k, epsilon=epsilon, delta=1e-3)
    with pytest.raises(ValueError):
        StrictLimitDomain(k=k, kbar=k, epsilon=1.0, delta=delta)


def test_claims_follow_theorem_1():
    ld = LimitDomain(k=3, kbar=10, epsilon=0.5, delta=1e-6, max_items=2)
    assert ld.claim == pytest.approx((1.5, 1e-6, AddRemoveUser(2)))
    # With δ' the eq. 2 minimum by hand: k=100, ε=0.1, δ'=1e-6 -> 0.5 + 2.628261.
    big = LimitDomain(k=100, kbar=200, epsilon=0.1, delta=1e-6, delta_prime=1e-6)
    assert big.claim.epsilon == pytest.approx(3.128261, abs=1e-6)
    assert big.claim.delta == pytest.approx(2e-6)
    assert StrictLimitDomain(k=3, kbar=10, epsilon=0.5, delta=1e-6, max_items=2).claim == (
        pytest.approx(1.5),
        pytest.approx(1e-6),
        AddRemoveUser(None),
    )
    # §6.3: the choice of k̄ is one more selection, k + 1 in Theorem 1.
    opt = LimitDomainOptimizedKbar(k=3, kbar_max=10, epsilon=0.5, delta=1e-6)
    assert opt.claim == pytest.approx((2.0, 1e-6, AddRemoveUser(None)))


# --- thresholds --------------------------------------------------------------------------


def test_threshold_formula_by_hand():
    counts = np.array([50, 40, 30, 20, 10, 5, 1, 0, 0, 0])  # d = 10
    ld = LimitDomain(k=2, kbar=4, epsilon=0.5, delta=1e-3)
    # h_(5) = 10, min{∞, 4, 6} = 4: 10 + 1 + ln(4000)/0.5
    assert ld.threshold(counts) == pytest.approx(11 + 2 * math.log(4000))
    restricted = LimitDomain(k=2, kbar=4, epsilon=0.5, delta=1e-3, max_items=1)
    assert restricted.threshold(counts) == pytest.approx(11 + 2 * math.log(1000))
    near_end = LimitDomain(k=2, kbar=8, epsilon=0.5, delta=1e-3)  # d − k̄ = 2
    assert near_end.threshold(counts) == pytest.approx(1 + 2 * math.log(2000))
    strict = StrictLimitDomain(k=2, kbar=4, epsilon=0.5, delta=1e-3, max_items=1)
    assert strict.threshold(counts) == pytest.approx(11 + 2 * math.log(4000))


def test_small_domain_uses_count_zero_and_size_one():
    # d = 3 <= k̄ = 5: documented choice, h_(k̄+1) = 0 and the size term is 1.
    ld = LimitDomain(k=2, kbar=5, epsilon=1.0, delta=1e-2)
    assert ld.threshold([7, 3, 1]) == pytest.approx(1 + math.log(100))
    batch = ld.sample([7, 3, 1], 200, np.random.default_rng(0))
    assert set(np.unique(batch)) <= {0, 1, 2, BOTTOM, PAD}


# --- sampling shape, order, determinism --------------------------------------------------


@pytest.mark.parametrize(
    "mech",
    [
        LimitDomain(k=3, kbar=5, epsilon=0.7, delta=1e-2),
        StrictLimitDomain(k=3, kbar=5, epsilon=0.7, delta=1e-2),
        LimitDomainOptimizedKbar(k=3, kbar_max=6, epsilon=0.7, delta=1e-2),
    ],
)
@pytest.mark.parametrize(
    "size", [1, 50, 5000]
)  # small sizes take the Gumbel route, large the table
def test_rows_are_well_formed_and_reproducible(mech, size):
    counts = np.array([9, 8, 8, 7, 3, 3, 2, 0, 12])
    batch = mech.sample(counts, size, np.random.default_rng(4))
    assert batch.shape == (size, mech.width) == (size, 3) and batch.dtype == np.int64
    assert np.array_equal(batch, mech.sample(counts, size, np.random.default_rng(4)))
    for row in batch:
        kept = row[row != PAD]
        assert np.all(row[kept.size :] == PAD), "PAD only at the end"
        assert BOTTOM not in kept[:-1], "⊥ only as the last element"
        items = kept[kept != BOTTOM]
        assert len(set(items.tolist())) == items.size
        if kept.size < 3:
            assert kept[-1] == BOTTOM, "a short outcome ends with ⊥"
        # Only the top-k̄ (k̄ <= 6 here) can be reported: ids of count >= 7.
        assert set(items.tolist()) <= {8, 0, 1, 2, 3, 4, 5}


@pytest.mark.parametrize("cls", CLASSES)
def test_huge_epsilon_reports_the_top_k_in_rank_order(cls):
    counts = np.array([2, 90, 40, 70, 0, 80, 1, 1])
    mech = cls(k=3, kbar=4, epsilon=1e6, delta=1e-6)
    assert np.all(mech.sample(counts, 20, np.random.default_rng(1)) == [1, 5, 3])
    # Counts close to h_(k̄+1): ⊥ wins once the next count is below h_⊥ ≈ h_(5) + 1.
    close = np.array([10, 5, 3, 3, 3, 3])
    assert mech.run(close, np.random.default_rng(1)) == (0, 1, BOTTOM)


def test_strict_domain_never_reports_ties_at_the_cut():
    # k̄ = 3: h_(4) = 5 and items 2, 3, 4 tie at it, so only 0, 1 are candidates.
    counts = np.array([9, 7, 5, 5, 5, 0])
    batch = StrictLimitDomain(k=3, kbar=3, epsilon=0.3, delta=0.5).sample(
        counts, 3000, np.random.default_rng(2)
    )
    assert set(np.unique(batch)) <= {0, 1, BOTTOM, PAD}
    assert np.all(batch[:, 2] == PAD) or np.all((batch[:, 2] == BOTTOM) | (batch[:, 2] == PAD))


@pytest.mark.parametrize(
    "mech",
    [
        LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-2),
        StrictLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-2),
        LimitDomainOptimizedKbar(k=2, kbar_max=4, epsilon=1.0, delta=1e-2),
    ],
)
def test_top_counts_input_gives_the_same_output_as_the_histogram(mech):
    counts = np.array([3, 9, 9, 1, 0, 7, 2])
    need = getattr(mech, "kbar", getattr(mech, "kbar_max", 0)) + 1
    top = top_counts(counts, need)
    for size in (1, 400):
        a = mech.sample(counts, size, np.random.default_rng(8))
        b = mech.sample(top, size, np.random.default_rng(8))
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="needs the top"):
        mech.sample(
            TopCounts(top.items[:-1], top.counts[:-1], counts.size), 1, np.random.default_rng(0)
        )


def test_a_database_prefix_is_all_that_is_read():
    # A TopCounts of the top k̄+1 of a 10^9-item domain works without the histogram.
    top = TopCounts(np.array([77, 5, 901]), np.array([40, 38, 2]), 10**9)
    batch = LimitDomain(k=2, kbar=2, epsilon=1.0, delta=1e-6).sample(
        top, 100, np.random.default_rng(3)
    )
    assert set(np.unique(batch)) <= {77, 5, BOTTOM, PAD}


def test_large_domain_runs_on_the_gumbel_route():
    counts = np.random.default_rng(0).zipf(1.3, size=5000) % 10_000
    mech = LimitDomain(k=10, kbar=100, epsilon=0.5, delta=1e-6)
    batch = mech.sample(counts, 300, np.random.default_rng(1))
    assert batch.shape == (300, 10)
    allowed = set(top_counts(counts, 100).items.tolist()) | {BOTTOM, PAD}
    assert set(np.unique(batch)) <= allowed


# --- laws --------------------------------------------------------------------------------


COUNTS = np.array([4, 0, 6, 3, 3, 5, 1])


def ld_law(mech, counts, kbar):
    top = top_counts(counts, kbar + 1)
    h_bot = LimitDomain(
        k=mech.k, kbar=kbar, epsilon=mech.epsilon, delta=mech.delta, max_items=mech.max_items
    ).threshold(counts)
    return brute_force_ld_law(top.items[:kbar], top.counts[:kbar], h_bot, mech.k, mech.epsilon)


@pytest.mark.parametrize("size", [120_000, 30_000])
@pytest.mark.parametrize("max_items", [None, 1])
def test_limit_domain_matches_the_brute_force_law(size, max_items):
    mech = LimitDomain(k=2, kbar=4, epsilon=0.8, delta=0.05, max_items=max_items)
    batch = mech.sample(COUNTS, size, np.random.default_rng(21))
    assert_fits(batch, ld_law(mech, COUNTS, 4))


def test_limit_domain_gumbel_route_matches_the_brute_force_law():
    # size < outcomes/4 forces the Gumbel route; draw many small batches.
    mech = LimitDomain(k=3, kbar=4, epsilon=0.8, delta=0.05)
    rng = np.random.default_rng(22)
    batch = np.concatenate([mech.sample(COUNTS, 20, rng) for _ in range(2000)])
    assert_fits(batch, ld_law(mech, COUNTS, 4))


def test_strict_limit_domain_matches_the_brute_force_law():
    counts = np.array([4, 0, 6, 3, 3, 5, 3])  # k̄ = 4: h_(5) = 3, strict domain {2, 5, 0}
    mech = StrictLimitDomain(k=2, kbar=4, epsilon=0.8, delta=0.05)
    h_bot = 3 + 1 + math.log(4 / 0.05) / 0.8
    law = brute_force_ld_law([2, 5, 0], [6, 5, 4], h_bot, 2, 0.8)
    assert_fits(mech.sample(counts, 100_000, np.random.default_rng(23)), law)


def test_optimized_kbar_matches_the_mixture_law():
    mech = LimitDomainOptimizedKbar(k=2, kbar_max=5, epsilon=0.8, delta=0.05)
    kbars = range(2, 6)
    h_bots = [LimitDomain(k=2, kbar=kb, epsilon=0.8, delta=0.05).threshold(COUNTS) for kb in kbars]
    # §6.3: k̄ ∝ exp(−ε h_⊥(k̄)), then LimitDom with that k̄.
    weights = np.exp(-0.8 * (np.array(h_bots) - min(h_bots)))
    weights /= weights.sum()
    law = {}
    for kb, wk in zip(kbars, weights):
        for outcome, p in ld_law(mech, COUNTS, kb).items():
            law[outcome] = law.get(outcome, 0.0) + wk * p
    assert_fits(mech.sample(COUNTS, 120_000, np.random.default_rng(24)), law)


# --- the O(d) extraction on large histograms (subsampled lower bound in top_counts) -----


@settings(max_examples=10, deadline=None)
@given(
    n=st.integers(1 << 15, 1 << 16),
    distinct=st.integers(1, 50),
    spikes=st.integers(0, 200),
    size=st.integers(1, 800),
    seed=st.integers(0, 2**32 - 1),
)
def test_top_counts_on_large_histograms_keeps_the_tie_break(n, distinct, spikes, size, seed):
    from mechanisms import rank_order

    rng = np.random.default_rng(seed)
    counts = rng.integers(0, distinct, n)
    counts[0::64] = 0  # the strided subsample sees only zeros: forces the fallback
    counts[rng.integers(0, n, spikes)] = distinct + 5
    top = top_counts(counts, size)
    expected = rank_order(counts)[:size]
    assert top.items.tolist() == expected.tolist()
    assert top.counts.tolist() == counts[expected].tolist()


@pytest.mark.parametrize(
    "mech",
    [
        LimitDomain(k=2, kbar=3, epsilon=1e308, delta=0.5),
        StrictLimitDomain(k=2, kbar=3, epsilon=1e308, delta=0.5),
        LimitDomainOptimizedKbar(k=2, kbar_max=3, epsilon=1e308, delta=0.5),
    ],
)
def test_an_epsilon_that_overflows_the_log_weights_is_rejected(mech):
    with pytest.raises(ValueError, match="too large"):
        mech.sample([5, 3, 9, 0, 2], 3, np.random.default_rng(0))


@pytest.mark.slow
@pytest.mark.parametrize("max_items", [None, 2])
def test_limit_domain_matches_the_brute_force_law_at_scale(max_items):
    # 2M samples, k = 3, k̄ = 5 on d = 7 (d − k̄ = 2 is the binding size term
    # when unrestricted); p < 1e-6 -> false failure <= 1e-6 per case.
    mech = LimitDomain(k=3, kbar=5, epsilon=0.6, delta=0.1, max_items=max_items)
    batch = mech.sample(COUNTS, 2_000_000, np.random.default_rng(41))
    assert_fits(batch, ld_law(mech, COUNTS, 5))
