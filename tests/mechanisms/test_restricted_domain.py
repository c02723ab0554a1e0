import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import (
    BOTTOM,
    PAD,
    AddRemoveUser,
    GumbelTopK,
    RestrictedDomain,
    RestrictedGumbel,
    RestrictedNormal,
    TopStable,
    accounting,
    outcome_from_row,
    top_counts,
)
from mechanisms.restricted_domain import split_total_budget
from mechanisms.tail_bounds import laplace_difference_tail, restricted_domain_tail_bound


def test_framework_rejects_bad_parameters():
    with pytest.raises(ValueError, match="mechanism"):
        RestrictedDomain(mechanism="gumbel", kbar=3, epsilon=1, delta=1e-3)
    with pytest.raises(ValueError, match="kbar"):
        RestrictedDomain(mechanism=GumbelTopK(k=4, epsilon=1), kbar=3, epsilon=1, delta=1e-3)
    with pytest.raises(ValueError, match="epsilon"):
        RestrictedDomain(mechanism=GumbelTopK(k=1, epsilon=1), kbar=3, epsilon=0, delta=1e-3)
    with pytest.raises(ValueError, match="delta"):
        RestrictedDomain(mechanism=GumbelTopK(k=1, epsilon=1), kbar=3, epsilon=1, delta=0)
    with pytest.raises(ValueError, match="calibration"):
        RestrictedDomain(
            mechanism=GumbelTopK(k=1, epsilon=1), kbar=3, epsilon=1, delta=0.1, calibration="x"
        )
    with pytest.raises(ValueError, match="epsilon_r"):
        RestrictedGumbel(k=1, kbar=3, epsilon=1, delta=0, epsilon_r=-1, delta_r=1e-3)
    with pytest.raises(ValueError, match="max_items"):
        RestrictedNormal(k=1, kbar=3, epsilon=1, delta=1e-3, epsilon_r=1, delta_r=1e-3, max_items=0)


@pytest.mark.parametrize("calibration", ["paper", "exact"])
@pytest.mark.parametrize("delta_r", [1e-2, 1e-6, 1e-12])
def test_framework_threshold_meets_lemma_2(calibration, delta_r):
    # Lemma 2: an unstable item passes with P[Lap(2/ε_R) > T + Lap(2/ε_R)] <= δ_R.
    mech = RestrictedDomain(
        mechanism=GumbelTopK(k=1, epsilon=1),
        kbar=5,
        epsilon=0.8,
        delta=delta_r,
        calibration=calibration,
    )
    crossing = laplace_difference_tail(0.4, 0.4, mech.threshold)
    assert crossing <= delta_r * (1 + 1e-9)
    if calibration == "paper":
        assert restricted_domain_tail_bound(mech.delta_q) == pytest.approx(delta_r, rel=1e-9)


def test_claims_add_up_as_theorems_2_6_8():
    inner = GumbelTopK(k=3, epsilon=0.2, delta_prime=1e-6)
    f = RestrictedDomain(mechanism=inner, kbar=10, epsilon=0.5, delta=1e-6)
    assert f.claim.epsilon == pytest.approx(inner.claim.epsilon + 0.5)
    assert f.claim.delta == pytest.approx(inner.claim.delta + 1e-6)
    rg = RestrictedGumbel(k=3, kbar=10, epsilon=0.2, delta=1e-6, epsilon_r=0.5, delta_r=1e-6)
    assert rg.claim.epsilon == pytest.approx(accounting.ddr_composition_epsilon(0.2, 3, 1e-6) + 0.5)
    assert rg.claim.delta == pytest.approx(2e-6)
    rn = RestrictedNormal(
        k=3, kbar=10, epsilon=0.5, delta=1e-6, epsilon_r=0.5, delta_r=1e-6, max_items=4
    )
    assert rn.claim == pytest.approx((2 * 0.5 + 0.5, 2e-6, AddRemoveUser(4)))
    assert rn.claim.neighbours == AddRemoveUser(4)


def _ind_by_stepping(epsilon_total, k, delta):
    """Seed 001 App. C Alg. 5 as printed: step ε up from ε_total/k by 1e-4 while eq. (15),
    min{kε, k(ε/(1 − e^{−ε}) − 1 − ln(ε/(1 − e^{−ε}))) + ε√(k/2 · ln 1/δ)}, stays <= ε_total.
    Written here from the paper, in mpmath, independently of mechanisms.accounting."""

    def composed(e):
        ratio = e / (1 - mpmath.exp(-e))
        return min(
            k * e,
            k * (ratio - 1 - mpmath.log(ratio))
            + e * mpmath.sqrt(k / mpmath.mpf(2) * mpmath.log(1 / mpmath.mpf(delta))),
        )

    with mpmath.workdps(30):
        e = mpmath.mpf(epsilon_total) / k
        while composed(e + mpmath.mpf("1e-4")) <= epsilon_total:
            e += mpmath.mpf("1e-4")
        return float(e)


def test_split_total_budget_follows_section_8_2():
    # §8.2: δ_M = δ_R = δ/2, ε_R = 4·Ind(ε, k, δ/2), ε = Ind(ε − ε_R, k, δ/2). Ind is found
    # exactly by root finding; the paper's stepping (1e-4) must land at most one step below.
    params = split_total_budget(1.0, 1e-6, 50)
    assert params["delta"] == params["delta_r"] == 5e-7
    stepped_r = 4 * _ind_by_stepping(1.0, 50, 5e-7)
    assert 0 <= params["epsilon_r"] - stepped_r <= 4e-4
    stepped = _ind_by_stepping(1.0 - params["epsilon_r"], 50, 5e-7)
    assert 0 <= params["epsilon"] - stepped <= 1e-4
    rg = RestrictedGumbel.from_total(k=50, kbar=500, epsilon_total=1.0, delta_total=1e-6)
    assert rg.claim.epsilon <= 1.0 + 1e-12 and rg.claim.delta <= 1e-6 * (1 + 1e-12)
    with pytest.raises(ValueError, match="epsilon_total"):
        split_total_budget(1.0, 1e-6, 2)  # ε_R = 4·Ind >= ε for k <= 4


def test_framework_keeps_the_top_items_on_huge_gaps_and_stops_at_small_ones():
    counts = np.zeros(20, dtype=np.int64)
    counts[[3, 7]] = 100_000
    counts[[1, 2, 4]] = 5
    mech = RestrictedGumbel(k=2, kbar=3, epsilon=1.0, delta=0.0, epsilon_r=1.0, delta_r=1e-6)
    batch = mech.sample(counts, 500, np.random.default_rng(1))
    assert {outcome_from_row(r) for r in batch} <= {(3, 7), (7, 3)}
    # k = 3 from a flat histogram: tests fail, every outcome ends with ⊥ early
    flat = RestrictedGumbel(k=3, kbar=3, epsilon=1.0, delta=0.0, epsilon_r=1.0, delta_r=1e-6)
    rows = flat.sample(np.ones(10, dtype=np.int64), 500, np.random.default_rng(2))
    assert all(outcome_from_row(r)[-1] == BOTTOM for r in rows)


def test_set_inner_mechanism_is_tested_in_ascending_id_order():
    counts = np.array([0, 500, 0, 400, 300, 0, 0])
    inner = TopStable(k=2, kbar=3, epsilon=2.0, delta=0.01)
    mech = RestrictedDomain(mechanism=inner, kbar=3, epsilon=2.0, delta=0.01)
    outcomes = {outcome_from_row(r) for r in mech.sample(counts, 2000, np.random.default_rng(3))}
    for outcome in outcomes:
        items = [v for v in outcome if v >= 0]
        assert items == sorted(items)


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(0, 30), min_size=1, max_size=9),
    k=st.integers(1, 3),
    extra=st.integers(0, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_framework_outcomes_are_prefixes_of_the_inner_selection(counts, k, extra, seed):
    kbar = k + extra
    inner = GumbelTopK(k=k, epsilon=1.0)
    mech = RestrictedDomain(mechanism=inner, kbar=kbar, epsilon=2.0, delta=0.2)
    batch = mech.sample(counts, 30, np.random.default_rng(seed))
    assert batch.shape == (30, k) and batch.dtype == np.int64
    assert np.array_equal(batch, mech.sample(counts, 30, np.random.default_rng(seed)))
    top = set(top_counts(counts, kbar).items.tolist())
    for row in batch:
        outcome = outcome_from_row(row)
        assert np.all(row[len(outcome) :] == PAD)
        items = [v for v in outcome if v >= 0]
        assert set(items) <= top and len(set(items)) == len(items)
        if BOTTOM in outcome:
            assert outcome[-1] == BOTTOM and len(items) < min(k, len(counts))
        else:
            assert len(items) == min(k, len(counts))


_BAD_REALS = st.one_of(
    st.floats(max_value=0.0),
    st.just(float("nan")),
    st.just(float("inf")),
    st.booleans(),
    st.text(max_size=3),
)


@settings(max_examples=80, deadline=None)
@given(
    bad=_BAD_REALS,
    which=st.sampled_from(["epsilon", "epsilon_r"]),
    cls=st.sampled_from(["RG", "RN", "TS", "F"]),
)
def test_every_constructor_rejects_non_positive_or_non_finite_epsilons(bad, which, cls):
    if cls == "RG":
        kwargs = {
            "k": 1,
            "kbar": 2,
            "epsilon": 1.0,
            "delta": 0.0,
            "epsilon_r": 1.0,
            "delta_r": 1e-3,
        }
        build = RestrictedGumbel
    elif cls == "RN":
        kwargs = {
            "k": 1,
            "kbar": 2,
            "epsilon": 1.0,
            "delta": 1e-3,
            "epsilon_r": 1.0,
            "delta_r": 1e-3,
        }
        build = RestrictedNormal
    elif cls == "TS":
        kwargs, build, which = (
            {"k": 1, "kbar": 2, "epsilon": 1.0, "delta": 1e-3},
            TopStable,
            "epsilon",
        )
    else:
        kwargs = {
            "mechanism": GumbelTopK(k=1, epsilon=1.0),
            "kbar": 2,
            "epsilon": 1.0,
            "delta": 1e-3,
        }
        build, which = RestrictedDomain, "epsilon"
    kwargs[which] = bad
    with pytest.raises(ValueError, match=which):
        build(**kwargs)
