"""Exact privacy profiles: hockey-stick divergence and the exact ε at δ (dpaudit.exact.profile).

References used here are independent of the code under test: the closed form
of randomized response, scipy.optimize.brentq on a float re-implementation of
δ(ε), and a plain grid scan.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from helpers import ToyEM, toy_em_law
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import logsumexp

import mechanisms as M
from dpaudit.exact import (
    epsilon_at,
    hockey_stick,
    output_law,
    privacy_profile,
    working_precision,
    worst_event,
)


def rr_laws(a):
    """Binary randomized response at ε0 = a: P(truth) = e^a / (1 + e^a)."""
    with working_precision():
        p = mpmath.exp(a) / (1 + mpmath.exp(a))
        return {(0,): p, (1,): 1 - p}, {(0,): 1 - p, (1,): p}


@pytest.mark.parametrize("a", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.7, 1.0, 3.0])
def test_hockey_stick_randomized_response_closed_form(a, eps):
    law_p, law_q = rr_laws(a)
    with working_precision():
        p = mpmath.exp(a) / (1 + mpmath.exp(a))
        # For ε >= 0 only the outcome that favours P contributes.
        expected = max(mpmath.mpf(0), p - mpmath.exp(eps) * (1 - p))
        assert abs(hockey_stick(law_p, law_q, eps) - expected) < mpmath.mpf("1e-45")
        assert abs(hockey_stick(law_q, law_p, eps) - expected) < mpmath.mpf("1e-45")


@pytest.mark.parametrize("a", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("delta", [0.0, 1e-6, 0.01, 0.2, 0.9])
def test_epsilon_at_randomized_response_closed_form(a, delta):
    law_p, law_q = rr_laws(a)
    with working_precision():
        p = mpmath.exp(a) / (1 + mpmath.exp(a))
        # δ(ε) = p − e^ε (1 − p) on ε in [0, a]; 0 beyond a.
        expected = mpmath.mpf(0) if delta >= 2 * p - 1 else mpmath.log((p - delta) / (1 - p))
        got = epsilon_at((law_p, law_q), delta=delta)
        assert abs(got - expected) < mpmath.mpf("1e-40")
    if delta == 0.0:
        assert abs(float(got) - a) < 1e-12  # pure DP at exactly ε0


# --- random laws against brentq and a grid scan -------------------------------------

weights = st.lists(st.integers(0, 30), min_size=2, max_size=6)


def normalise(ws):
    with working_precision():
        total = mpmath.mpf(sum(ws))
        return {(i,): mpmath.mpf(w) / total for i, w in enumerate(ws) if w > 0}


def float_profile(p, q, eps):
    """Two-sided δ(ε) in float64, written independently of the code under test."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    return max(
        np.maximum(p - math.exp(eps) * q, 0).sum(), np.maximum(q - math.exp(eps) * p, 0).sum()
    )


@settings(max_examples=80, deadline=None)
@given(st.data(), weights, st.sampled_from([0.0, 1e-3, 0.05, 0.3]))
def test_epsilon_at_matches_brentq_and_scan(data, wp, delta):
    wq = data.draw(st.lists(st.integers(0, 30), min_size=len(wp), max_size=len(wp)))
    assume(sum(wp) > 0 and sum(wq) > 0)
    law_p, law_q = normalise(wp), normalise(wq)
    p = np.array(wp, float) / sum(wp)
    q = np.array(wq, float) / sum(wq)
    got = epsilon_at((law_p, law_q), delta=delta)
    assert got == epsilon_at((law_q, law_p), delta=delta)  # two-sided, so symmetric
    # Mass one side puts where the other is impossible: no finite ε covers more than δ of it.
    # Decided exactly (integer weights, the float δ as a fraction): at a tie such as
    # stranded = 3/10 vs δ = 0.3 (float, just below 3/10) float rounding could go either way.
    stranded = max(
        Fraction(sum(a for a, b in zip(wp, wq) if b == 0), sum(wp)),
        Fraction(sum(b for a, b in zip(wp, wq) if a == 0), sum(wq)),
    )
    if stranded > Fraction(delta):
        assert got == mpmath.inf
        return
    assert not mpmath.isinf(got)
    if abs(stranded - Fraction(delta)) < Fraction(1, 10**9):
        # Stranded mass within rounding of δ: the float references below (brentq, scan)
        # are ill-posed there, so only the exact property is checked.
        with working_precision():
            at_root = max(hockey_stick(law_p, law_q, got), hockey_stick(law_q, law_p, got))
            assert at_root <= mpmath.mpf(delta) + mpmath.mpf("1e-40")
        return
    both = (p > 0) & (q > 0)
    top = float(np.abs(np.log(p[both] / q[both])).max() + 1)
    if delta == 0.0:
        # Pure DP: ε is the largest absolute log-likelihood ratio (0 if the laws agree).
        assert abs(float(got) - float(np.abs(np.log(p[both] / q[both])).max())) < 1e-9
    elif float_profile(p, q, 0.0) <= delta:
        assert float(got) < 1e-9
    else:
        # δ(ε) − δ changes sign once on [0, top] (δ(top) = stranded mass <= δ).
        root = brentq(lambda e: float_profile(p, q, e) - delta, 0.0, top, xtol=1e-14)
        assert abs(float(got) - root) < 1e-8
    # Grid scan: the exact root lies between the last grid point above δ and the first below.
    grid = np.linspace(0.0, top, 401)
    profile = np.array([float_profile(p, q, e) for e in grid])
    ok = grid[profile <= delta + 1e-12]
    assert float(got) <= ok[0] + 1e-9
    not_ok = grid[profile > delta + 1e-12]
    if not_ok.size:
        assert float(got) >= not_ok[-1] - 1e-9
    # And at the exact root the exact profile meets δ.
    with working_precision():
        at_root = max(hockey_stick(law_p, law_q, got), hockey_stick(law_q, law_p, got))
        assert at_root <= mpmath.mpf(delta) + mpmath.mpf("1e-40")


@settings(max_examples=60, deadline=None)
@given(weights, weights, st.floats(0, 4))
def test_hockey_stick_matches_float_and_event(wp, wq, eps):
    assume(sum(wp) > 0 and sum(wq) > 0)
    n = min(len(wp), len(wq))
    wp, wq = wp[:n], wq[:n]
    assume(sum(wp) > 0 and sum(wq) > 0)
    law_p, law_q = normalise(wp), normalise(wq)
    p = np.array(wp, float) / sum(wp)
    q = np.array(wq, float) / sum(wq)
    expected = np.maximum(p - math.exp(eps) * q, 0).sum()
    got = hockey_stick(law_p, law_q, eps)
    assert abs(float(got) - expected) < 1e-12
    assert got >= 0
    # The witnessing event attains the divergence: P(S) − e^ε Q(S).
    with working_precision():
        event = worst_event(law_p, law_q, eps)
        attained = sum(law_p[o] for o in event) - mpmath.exp(eps) * sum(
            law_q.get(o, 0) for o in event
        )
        assert abs(attained - got) < mpmath.mpf("1e-40")


def test_disjoint_support_gives_infinite_epsilon():
    law_p = {(0,): mpmath.mpf("0.99"), (1,): mpmath.mpf("0.01")}
    law_q = {(0,): mpmath.mpf(1)}
    # P((1,)) = 0.01 while Q((1,)) = 0: no finite ε for δ < 0.01.
    assert epsilon_at((law_p, law_q), delta=0.005) == mpmath.inf
    assert hockey_stick(law_p, law_q, math.inf) == mpmath.mpf("0.01")
    finite = epsilon_at((law_p, law_q), delta=0.02)
    assert not mpmath.isinf(finite)
    # With δ = 0.02 > 0.01 the only constraint left is 0.99 − e^ε·1 <= 0.01 (the 0.99 side
    # favours Q): ε is set by Q‖P, where 1 − e^ε·0.99 <= 0.02 already at ε = 0.
    assert finite == 0


# --- privacy_profile through a registered law -----------------------------------------


@dataclass(frozen=True)
class ProfileToyEM(ToyEM):
    """Test-only exponential mechanism: one item, P(i) ∝ exp(ε c_i)."""


output_law.register(ProfileToyEM)(toy_em_law)


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0])
def test_privacy_profile_of_a_mechanism(eps):
    mech = ProfileToyEM(epsilon=1.0)
    c, c2 = [0, 3, 1], [1, 4, 1]
    lp = np.array(c) - logsumexp(np.array(c, float))
    lq = np.array(c2) - logsumexp(np.array(c2, float))
    expected = max(
        np.maximum(np.exp(lp) - math.exp(eps) * np.exp(lq), 0).sum(),
        np.maximum(np.exp(lq) - math.exp(eps) * np.exp(lp), 0).sum(),
    )
    assert abs(float(privacy_profile(mech, c, c2, eps)) - expected) < 1e-12
    eps_exact = epsilon_at(mech, c, c2, 0.0)
    assert abs(float(eps_exact) - max(np.abs(lp - lq))) < 1e-12


@pytest.mark.parametrize("delta", [-0.1, 1.5, float("nan"), "x", True])
def test_bad_delta_is_rejected(delta):
    law_p, law_q = rr_laws(1.0)
    with pytest.raises(ValueError, match="delta"):
        epsilon_at((law_p, law_q), delta=delta)


def test_bad_arguments_are_rejected():
    law_p, law_q = rr_laws(1.0)
    with pytest.raises(ValueError, match="epsilon"):
        hockey_stick(law_p, law_q, float("nan"))
    with pytest.raises(ValueError, match="epsilon"):
        hockey_stick(law_p, law_q, -math.inf)
    with pytest.raises(TypeError, match="law_p"):
        hockey_stick([0.5, 0.5], law_q, 1.0)
    with pytest.raises(ValueError, match="delta is required"):
        epsilon_at((law_p, law_q))
    with pytest.raises(ValueError, match="counts"):
        epsilon_at(ProfileToyEM(), [1, 2], delta=0.1)
    with pytest.raises(ValueError, match="either"):
        epsilon_at((law_p, law_q), [1], [2], delta=0.1)


@pytest.mark.parametrize("entry", ["epsilon_at", "privacy_profile"])
def test_a_pair_that_is_not_neighbouring_is_refused_naming_the_relation(entry):
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    call = {
        "epsilon_at": lambda a, b: epsilon_at(mech, a, b, delta=1e-3),
        "privacy_profile": lambda a, b: privacy_profile(mech, a, b, 1.0),
    }[entry]
    with pytest.raises(ValueError, match=r"not neighbours under the claim's relation \(add/remove"):
        call([3, 1, 0, 0, 0], [1, 0, 0, 0, 0])  # two users removed from item 0
    with pytest.raises(ValueError, match="not neighbours"):
        call([3, 1, 0], [3, 1, 0])  # the same histogram
    # The number of items is the domain: LimitDomain's law on [2, 0] is not its law on
    # [2, 0, 0, 0, 0] (exact ε 0.088 against 0.724 beside [3, 1, 0, 0, 0]), so lengths must agree.
    with pytest.raises(ValueError, match=r"differ in length \(5 vs 2\)"):
        call([3, 1, 0, 0, 0], [2, 0])
    assert call([3, 1, 0, 0, 0], [2, 0, 0, 0, 0]) >= 0
