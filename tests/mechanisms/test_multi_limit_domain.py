"""MultiLimitDomain: pay-what-you-get sessions of LimitDomain queries (seed 003 Alg. 2, Thm 2)."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from mechanisms import BOTTOM, AddRemoveUser
from mechanisms.limit_domain import LimitDomain
from mechanisms.multi_limit_domain import (
    BudgetExhaustedError,
    MultiLimitDomain,
    MultiLimitDomainConfig,
    MultiLimitDomainState,
)


def session(**overrides):
    params = {"total_k": 5, "max_queries": 3, "epsilon": 1.0, "delta": 1e-6}
    params.update(overrides)
    return MultiLimitDomain(**params)


class ScriptedLimitDomain:
    """Stands in for LimitDomain: returns the scripted outcomes in turn (charging tests)."""

    def __init__(self, outcomes):
        self.outcomes = list(outcomes)

    def run(self, counts, rng):
        return self.outcomes.pop(0)


def script(mld, outcomes, monkeypatch):
    fake = ScriptedLimitDomain(outcomes)
    monkeypatch.setattr(mld, "limit_domain", lambda k, kbar: fake)
    return fake


# --- the claim -----------------------------------------------------------------------------


def test_claim_is_theorem_2_worked_by_hand():
    # seed 003 Thm 2, eq. (3) with k* = 100, ε = 0.1, δ' = 1e-6 (Thm 1's three terms with k*):
    #   k*ε = 10; k*ε tanh(ε/2) + ε√(2k* ln 1e6) = 0.4995837 + 5.2565217 = 5.7561054;
    #   k*ε²/2 + ε√(½k* ln 1e6) = 0.5 + 2.6282609 = 3.1282609  -> ε* = 3.1282609
    #   δ = 2ℓ*δ + δ' = 2·5·1e-7 + 1e-6 = 2e-6
    mld = MultiLimitDomain(
        total_k=100, max_queries=5, epsilon=0.1, delta=1e-7, delta_prime=1e-6, max_items=3
    )
    eps, delta, neighbours = mld.claim
    assert eps == pytest.approx(3.1282609, rel=1e-7)
    assert delta == pytest.approx(2e-6)
    assert neighbours == AddRemoveUser(3)
    # without δ' it is basic composition over k*, whatever the per-call k_i
    assert session(total_k=7, epsilon=0.5).claim.epsilon == pytest.approx(3.5)


def test_claim_does_not_change_as_the_budget_is_spent(monkeypatch):
    mld = session()
    before = mld.claim
    script(mld, [(0, 1), (BOTTOM,)], monkeypatch)
    mld.query([3, 2, 1], k=2, kbar=2, rng=np.random.default_rng(0))
    mld.query([3, 2, 1], k=2, kbar=2, rng=np.random.default_rng(0))
    assert mld.claim == before == mld.config.claim


# --- charging and refusal -------------------------------------------------------------------


def test_charges_the_answer_length_with_bottom_counted(monkeypatch):
    # seed 003 Alg. 2 line 5: k* <- k* - |o_i|, and Alg. 1 returns {i(1), ..., i(j), ⊥}:
    # an early stop with j items costs j + 1, a lone ⊥ costs 1.
    mld = session(total_k=5, max_queries=4)
    rng = np.random.default_rng(1)
    script(mld, [(4, 2, BOTTOM), (BOTTOM,), (1,)], monkeypatch)
    assert mld.query([1] * 6, k=3, kbar=4, rng=rng) == (4, 2, BOTTOM)
    assert (mld.remaining_k, mld.remaining_queries) == (2, 3)
    assert mld.query([1] * 6, k=2, kbar=4, rng=rng) == (BOTTOM,)
    assert (mld.remaining_k, mld.remaining_queries) == (1, 2)  # ⊥ alone costs one output
    mld.query([1] * 6, k=1, kbar=4, rng=rng)
    assert (mld.remaining_k, mld.remaining_queries) == (0, 1)
    assert mld.exhausted
    assert mld.outcomes == ((4, 2, BOTTOM), (BOTTOM,), (1,))
    with pytest.raises(BudgetExhaustedError, match="total_k=5 is used up"):
        mld.query([1] * 6, k=1, kbar=4, rng=rng)


def test_a_session_never_makes_more_selections_than_total_k():
    # Thm 2 counts k* selections; every ⊥ is one (Lemma 4.2). On a flat histogram ⊥ wins
    # almost always, so with ⊥ free the session would ask all ℓ* = 6 queries.
    rng = np.random.default_rng(9)
    for _ in range(20):
        mld = session(total_k=2, max_queries=6)
        while not mld.exhausted:
            mld.query([5, 5, 5, 5], k=1, kbar=2, rng=rng)
        assert sum(len(o) for o in mld.outcomes) == 2 and len(mld.outcomes) <= 2


def test_refuses_k_above_the_remaining_budget_without_charging(monkeypatch):
    mld = session(total_k=4, max_queries=3)
    rng = np.random.default_rng(2)
    script(mld, [(0, 1, 2), (5,)], monkeypatch)
    mld.query([1] * 6, k=3, kbar=3, rng=rng)
    state = mld.state
    with pytest.raises(BudgetExhaustedError, match="k=2 exceeds the remaining item budget 1"):
        mld.query([1] * 6, k=2, kbar=3, rng=rng)
    assert mld.state == state  # the refused query cost nothing, not even a query
    assert mld.query([1] * 6, k=1, kbar=3, rng=rng) == (5,)


def test_refuses_once_the_query_budget_is_used_up(monkeypatch):
    mld = session(total_k=10, max_queries=2)
    rng = np.random.default_rng(3)
    script(mld, [(BOTTOM,), (BOTTOM,)], monkeypatch)
    mld.query([1] * 6, k=2, kbar=3, rng=rng)
    mld.query([1] * 6, k=2, kbar=3, rng=rng)
    assert mld.exhausted and mld.remaining_k == 8
    with pytest.raises(BudgetExhaustedError, match="max_queries=2 is used up"):
        mld.query([1] * 6, k=2, kbar=3, rng=rng)


def test_a_failing_query_costs_nothing():
    mld = session()
    with pytest.raises(ValueError, match="counts"):
        mld.query([[1, 2], [3, 4]], k=1, kbar=1, rng=np.random.default_rng(4))
    with pytest.raises(ValueError, match="kbar"):
        mld.query([5, 4, 3], k=2, kbar=1, rng=np.random.default_rng(4))
    with pytest.raises(TypeError, match="rng"):
        mld.query([5, 4, 3], k=1, kbar=2, rng=7)
    with pytest.raises(ValueError, match="k must"):
        mld.query([5, 4, 3], k=0, kbar=2, rng=np.random.default_rng(4))
    assert mld.state == MultiLimitDomainState(5, 3, ())


@given(
    plan=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6), st.booleans()), max_size=12),
    total_k=st.integers(1, 12),
    max_queries=st.integers(1, 6),
)
@settings(max_examples=150, deadline=None)
def test_budget_bookkeeping_invariants(plan, total_k, max_queries):
    # Each step asks for k items and the stand-in returns `released` of them (<= k), ending
    # with ⊥ when it stops early (then released < k, so the answer is at most k long).
    # Invariants: answer lengths (⊥ counted) + remaining = k*, answered + remaining = ℓ*,
    # never negative, refusals leave the state unchanged.
    mld = MultiLimitDomain(total_k=total_k, max_queries=max_queries, epsilon=1.0, delta=1e-6)
    rng = np.random.default_rng(0)
    for k, released, early_stop in plan:
        released = min(released, k - 1) if early_stop else min(released, k)
        outcome = tuple(range(released)) + ((BOTTOM,) if released < k else ())
        mld.limit_domain = lambda k_, kbar_, outcome=outcome: ScriptedLimitDomain([outcome])
        before = mld.state
        should_refuse = (
            before.remaining_queries == 0 or before.remaining_k == 0 or k > before.remaining_k
        )
        if should_refuse:
            with pytest.raises(BudgetExhaustedError):
                mld.query([1], k=k, kbar=k, rng=rng)
            assert mld.state == before
        else:
            assert mld.query([1], k=k, kbar=k, rng=rng) == outcome
        spent = sum(len(o) for o in mld.outcomes)
        assert spent + mld.remaining_k == total_k and mld.remaining_k >= 0
        assert len(mld.outcomes) + mld.remaining_queries == max_queries
        assert mld.remaining_queries >= 0


# --- with the real LimitDomain --------------------------------------------------------------


def test_query_is_limit_domain_run_with_the_session_parameters():
    counts = np.array([9, 7, 7, 3, 2, 2, 1])
    mld = session(total_k=50, max_queries=20, epsilon=0.7, delta=1e-3, max_items=2)
    rng_session, rng_direct = np.random.default_rng(11), np.random.default_rng(11)
    direct = LimitDomain(k=2, kbar=4, epsilon=0.7, delta=1e-3, max_items=2)
    for _ in range(20):
        assert mld.query(counts, k=2, kbar=4, rng=rng_session) == direct.run(counts, rng_direct)


def test_big_gaps_charge_k_and_flat_histograms_charge_one_per_bottom():
    rng = np.random.default_rng(5)
    # gap 800 above h⊥ ≈ 1 + ln(3e6) ≈ 16: ⊥ beats an item with probability < e^{-700}
    mld = session(total_k=6, max_queries=5)
    for _ in range(3):
        assert len(mld.query([1000, 900, 800, 0, 0, 0], k=2, kbar=3, rng=rng)) == 2
    assert mld.remaining_k == 0 and mld.exhausted
    # flat counts: h⊥ = 5 + 1 + ln(3e6) ≈ 21 sits 16 above every item; ⊥ comes first with
    # probability >= 1 − 3e^{-16} per query, so 5 queries release nothing w.p. > 1 − 2e-6;
    # each lone ⊥ costs one output (Alg. 2 line 5)
    mld = session(total_k=6, max_queries=5)
    for _ in range(5):
        assert mld.query([5, 5, 5, 5, 5, 5], k=2, kbar=3, rng=rng) == (BOTTOM,)
    assert (mld.remaining_k, mld.remaining_queries) == (1, 0)


def _limit_domain_charge_law(counts, k, kbar, epsilon, h_bot):
    """P[charge = c] for one LimitDomain answer: Gumbel-max noise on the top-k̄ counts and
    on h⊥ picks a Plackett–Luce order with weights e^{ε h} (seed 003 Lemma 4.2); items are
    released until ⊥ or k items, and the answer costs its length, ⊥ included (j + 1 for an
    early stop after j items, k otherwise). Enumerated over all item prefixes."""
    weights = {i: math.exp(epsilon * c) for i, c in enumerate(sorted(counts, reverse=True)[:kbar])}
    weights[BOTTOM] = math.exp(epsilon * h_bot)
    total = sum(weights.values())
    law = Counter()
    for length in range(k + 1):
        for prefix in itertools.permutations([i for i in weights if i != BOTTOM], length):
            p, left = 1.0, total
            for item in prefix:
                p *= weights[item] / left
                left -= weights[item]
            if length < k:
                p *= weights[BOTTOM] / left  # ⊥ is next, and is charged
            law[length + 1 if length < k else k] += p
    return law


def test_session_charge_law_matches_the_exact_law():
    # Sessions with k* = 3, ℓ* = 2 on counts (5, 4, 3, 2), k̄ = 3, ε = 1, δ = 0.5; query 1 asks
    # k = 2, query 2 asks k = min(2, remaining). h⊥ = h_(4) + 1 + ln(min(k̄, d − k̄)/δ)/ε
    # = 2 + 1 + ln 2. The exact law of the total charge (⊥ counted) is the two per-query
    # laws chained;
    # 2000 sessions, chi-square goodness of fit at p < 1e-6 -> false failure <= 1e-6.
    counts, kbar, epsilon, delta = [5, 4, 3, 2], 3, 1.0, 0.5
    h_bot = 2 + 1 + math.log(1 / delta) / epsilon
    assert LimitDomain(k=2, kbar=kbar, epsilon=epsilon, delta=delta).threshold(
        counts
    ) == pytest.approx(h_bot)
    first = _limit_domain_charge_law(counts, 2, kbar, epsilon, h_bot)
    exact = Counter()
    for j1, p1 in first.items():
        second = _limit_domain_charge_law(counts, min(2, 3 - j1), kbar, epsilon, h_bot)
        for j2, p2 in second.items():
            exact[j1 + j2] += p1 * p2
    assert sum(exact.values()) == pytest.approx(1.0, abs=1e-12)

    rng = np.random.default_rng(20261123)
    n = 2000
    observed = Counter()
    for _ in range(n):
        mld = MultiLimitDomain(total_k=3, max_queries=2, epsilon=epsilon, delta=delta)
        mld.query(counts, k=2, kbar=kbar, rng=rng)
        mld.query(counts, k=min(2, mld.remaining_k), kbar=kbar, rng=rng)
        observed[3 - mld.remaining_k] += 1
    support = sorted(exact)
    assert set(observed) <= set(support)
    result = chisquare([observed[j] for j in support], [n * exact[j] for j in support])
    assert result.pvalue > 1e-6


def test_same_generator_state_gives_the_same_session():
    def run(seed):
        mld = session(total_k=8, max_queries=6, epsilon=0.5, delta=0.01)
        rng = np.random.default_rng(seed)
        while not mld.exhausted:
            mld.query([12, 9, 8, 8, 4, 1], k=min(3, mld.remaining_k), kbar=4, rng=rng)
        return mld.outcomes

    assert run(123) == run(123)


# --- configuration ----------------------------------------------------------------------------


def test_config_is_frozen_and_round_trips():
    mld = session(max_items=2, delta_prime=1e-7)
    with pytest.raises(AttributeError):
        mld.config.total_k = 3
    clone = MultiLimitDomain.from_config(mld.config)
    assert clone.config == mld.config and clone.state == MultiLimitDomainState(5, 3, ())
    with pytest.raises(TypeError, match="config"):
        MultiLimitDomain.from_config({"total_k": 3})


@pytest.mark.parametrize(
    "overrides, fragment",
    [
        ({"total_k": 0}, "total_k"),
        ({"total_k": 2.5}, "total_k"),
        ({"max_queries": 0}, "max_queries"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"max_items": 0}, "max_items"),
        ({"delta_prime": 1.0}, "delta_prime"),
    ],
)
def test_bad_parameters_are_rejected_by_name(overrides, fragment):
    with pytest.raises(ValueError, match=fragment):
        session(**overrides)
    params = {"total_k": 5, "max_queries": 3, "epsilon": 1.0, "delta": 1e-6}
    params.update(overrides)
    with pytest.raises(ValueError, match=fragment):
        MultiLimitDomainConfig(**params)


def test_constructor_is_keyword_only():
    with pytest.raises(TypeError):
        MultiLimitDomain(5, 3, 1.0, 1e-6)
