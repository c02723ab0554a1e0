"""Exhaustive exact verification (dpaudit.exact.verify).

Toy mechanisms with test-only laws are checked against brute force written
here independently (itertools over the family, float log-softmax); the
LimitDomain checks run once mechanisms/limit_domain.py and its law exist.
"""

import itertools
import json
import math
from dataclasses import dataclass

import mpmath
import numpy as np
import pytest
from helpers import OneItemToy, ToyEM, toy_em_law
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

import mechanisms as M
from dpaudit.exact import (
    VerificationResult,
    epsilon_from_laws,
    output_law,
    profile_from_laws,
    verify,
    working_precision,
)
from dpaudit.exact.gumbel_laws import plackett_luce_law
from dpaudit.exact.verify import ABSOLUTE_TOLERANCE, RELATIVE_TOLERANCE
from dpaudit.neighbours import neighbour_pairs


@dataclass(frozen=True)
class VerifyToyEM(ToyEM):
    """Test-only exponential mechanism: one item, P(i) ∝ exp(ε c_i); claims (ε, 0) add/remove."""


LAW_CALLS = []


@output_law.register(VerifyToyEM)
def _toy_em_law(mech, counts):
    LAW_CALLS.append(tuple(int(c) for c in counts))
    return toy_em_law(mech, counts)


@dataclass(frozen=True)
class ParityRR(OneItemToy):
    """Test-only: randomized response on the parity of count 0; exactly (ε, 0)-DP, tight."""


@output_law.register(ParityRR)
def _parity_law(mech, counts):
    with working_precision():
        keep = mpmath.exp(mech.epsilon) / (1 + mpmath.exp(mech.epsilon))
        parity = int(counts[0]) % 2
        return {(parity,): keep, (1 - parity,): 1 - keep}


@dataclass(frozen=True)
class NoLaw(OneItemToy):
    """Test-only mechanism with no exact law."""


def brute_em(epsilon, d, max_count, eps_check, offsets):
    """Independent float brute force over every family member and neighbour offset.

    Returns (max ε at δ = 0, max δ at eps_check, number of pairs with δ > 1e-12, pairs).
    """
    seen, worst_eps, worst_delta, bad = set(), 0.0, 0.0, 0
    for c in itertools.product(range(max_count + 1), repeat=d):
        c = np.array(c)
        for t in offsets:
            c2 = c + np.array(t)
            if np.any(c2 < 0):
                continue
            key = frozenset((tuple(c), tuple(c2)))
            if key in seen:
                continue
            seen.add(key)
            lp = epsilon * c - logsumexp(epsilon * c)
            lq = epsilon * c2 - logsumexp(epsilon * c2)
            worst_eps = max(worst_eps, float(np.abs(lp - lq).max()))
            pd = max(
                np.maximum(np.exp(lp) - math.exp(eps_check) * np.exp(lq), 0).sum(),
                np.maximum(np.exp(lq) - math.exp(eps_check) * np.exp(lp), 0).sum(),
            )
            worst_delta = max(worst_delta, pd)
            bad += pd > 1e-12
    return worst_eps, worst_delta, bad, len(seen)


def add_remove_offsets(d):
    subsets = [s for s in itertools.product((0, 1), repeat=d) if any(s)]
    return subsets + [tuple(-x for x in s) for s in subsets]


@pytest.mark.parametrize("d,max_count", [(2, 3), (3, 2)])
def test_toy_em_holds_and_matches_brute_force(d, max_count):
    result = verify(VerifyToyEM(epsilon=1.0), d=d, max_count=max_count, progress=False)
    worst_eps, _, _, n_pairs = brute_em(1.0, d, max_count, 1.0, add_remove_offsets(d))
    assert result.holds and result.violations == 0
    assert result.pairs == n_pairs
    assert abs(float(result.epsilon_at_delta) - worst_eps) < 1e-12
    assert worst_eps < 1.0  # EM is strictly inside its claim on a bounded family
    assert float(result.delta_at_epsilon) < 1e-30
    # the reported pair really attains the worst ε (both histograms in or next to the family)
    c, c2 = map(np.array, result.epsilon_pair)
    lp, lq = c - logsumexp(c * 1.0), c2 - logsumexp(c2 * 1.0)
    assert abs(np.abs(lp - lq).max() - worst_eps) < 1e-12


def test_toy_em_violation_at_a_smaller_epsilon_matches_brute_force():
    d, max_count, eps_check = 3, 2, 0.8
    result = verify(
        VerifyToyEM(epsilon=1.0), d=d, max_count=max_count, progress=False, epsilon=eps_check
    )
    _, worst_delta, bad, _ = brute_em(1.0, d, max_count, eps_check, add_remove_offsets(d))
    assert not result.holds
    assert result.violations == bad > 0
    assert abs(float(result.delta_at_epsilon) - worst_delta) < 1e-12
    assert result.delta_event, "a violation comes with its witnessing event"
    assert "VIOLATED" in str(result)


def test_bounded_change_doubles_em_epsilon():
    # Under BoundedChange counts move in opposite directions: EM is only 2ε-DP there.
    d, max_count = 2, 2
    offsets = [t for t in itertools.product((-1, 0, 1), repeat=d) if any(t)]
    result = verify(
        VerifyToyEM(epsilon=1.0),
        d=d,
        max_count=max_count,
        progress=False,
        neighbours=M.BoundedChange(1),
    )
    worst_eps, _, _, n_pairs = brute_em(1.0, d, max_count, 1.0, offsets)
    assert result.pairs == n_pairs
    assert abs(float(result.epsilon_at_delta) - worst_eps) < 1e-12
    assert worst_eps > 1.0 and not result.holds
    assert verify(
        VerifyToyEM(epsilon=1.0),
        d=d,
        max_count=max_count,
        progress=False,
        neighbours=M.BoundedChange(1),
        epsilon=2.0,
    ).holds


def test_each_law_is_computed_once():
    LAW_CALLS.clear()
    result = verify(VerifyToyEM(epsilon=0.5), d=3, max_count=2, progress=False)
    assert len(LAW_CALLS) == len(set(LAW_CALLS)) == result.laws
    # The family plus the add-neighbours leaving it: every h in {0..3}^3 (lower the 3s by one
    # to get a family member c with h = c + s), and nothing else.
    assert set(LAW_CALLS) == set(itertools.product(range(4), repeat=3))


def test_tight_pure_dp_claim_holds_within_rounding():
    # Parity RR is exactly (ε, 0)-DP: P/Q = e^ε on every pair, so δ(ε) is 0 up to rounding.
    result = verify(ParityRR(epsilon=1.3), d=1, max_count=4, progress=False)
    assert result.holds
    assert abs(result.epsilon_at_delta - mpmath.mpf(1.3)) < mpmath.mpf("1e-40")
    slightly_less = verify(
        ParityRR(epsilon=1.3), d=1, max_count=4, progress=False, epsilon=1.3 - 1e-9
    )
    assert not slightly_less.holds


def test_result_is_json_ready_and_readable():
    result = verify(VerifyToyEM(epsilon=1.0), d=2, max_count=1, progress=False)
    assert isinstance(result, VerificationResult)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["holds"] is True
    assert data["family"]["d"] == 2 and data["family"]["max_count"] == 1
    assert data["family"]["histograms"] == 4 and data["family"]["pairs"] == result.pairs
    assert data["family"]["relation_type"] == "AddRemoveUser"
    assert data["claim"] == {"epsilon": 1.0, "delta": 0.0}
    text = str(result)
    assert "HOLDS" in text and "d=2" in text and "counts <= 1" in text
    with pytest.raises(AttributeError):
        result.holds = False  # frozen


def test_infinite_epsilon_is_json_ready():
    result = verify(ParityRR(epsilon=1.0), d=1, max_count=1, progress=False, delta=0.0, epsilon=0.5)
    assert not result.holds
    assert json.dumps(result.to_dict(), allow_nan=False)


def test_progress_bar_goes_to_stderr(capsys):
    verify(VerifyToyEM(epsilon=1.0), d=2, max_count=1, progress=True)
    captured = capsys.readouterr()
    assert "pair" in captured.err and captured.out == ""
    verify(VerifyToyEM(epsilon=1.0), d=2, max_count=1, progress=False)
    assert capsys.readouterr().err == ""


def test_errors():
    with pytest.raises(TypeError, match="no exact law"):
        verify(NoLaw(), d=2, max_count=1, progress=False)
    with pytest.raises(ValueError, match="max_count"):
        verify(VerifyToyEM(), d=2, max_count=-1, progress=False)
    with pytest.raises(ValueError, match="d must"):
        verify(VerifyToyEM(), d=0, max_count=1, progress=False)
    with pytest.raises(ValueError, match="delta"):
        verify(VerifyToyEM(), d=1, max_count=1, progress=False, delta=2.0)
    with pytest.raises(TypeError, match="relation"):
        verify(VerifyToyEM(), d=1, max_count=1, progress=False, neighbours="add/remove")


# --- LimitDomain (seed 003 Alg 1, Thm 1), once its mechanism and law exist ---------------


def _limit_domain():
    return M.LimitDomain


@settings(max_examples=25, deadline=None)
@given(
    st.floats(0.1, 2.0),
    st.integers(1, 3),
    st.integers(0, 2),
    st.sampled_from([M.AddRemoveUser(), M.AddRemoveUser(1), M.BoundedChange(1)]),
    st.floats(0.0, 2.5),
    st.sampled_from([0.0, 1e-3, 0.1]),
)
def test_verify_equals_plain_mpf_maximum_over_pairs(
    toy_eps, d, max_count, relation, eps_check, delta
):
    # verify's fixed-point hot loop and its pruned ε search against the plain mpf profile of
    # every pair, maximised here without shortcuts.
    mech = VerifyToyEM(epsilon=toy_eps)
    result = verify(
        mech,
        d=d,
        max_count=max_count,
        neighbours=relation,
        progress=False,
        epsilon=eps_check,
        delta=delta,
    )
    worst_delta, worst_eps, bad = mpmath.mpf(0), mpmath.mpf(0), 0
    for a, b in zip(*neighbour_pairs(d, max_count, relation)):
        law_a, law_b = output_law(mech, a), output_law(mech, b)
        pair_delta = profile_from_laws(law_a, law_b, eps_check)
        worst_delta = max(worst_delta, pair_delta)
        worst_eps = max(worst_eps, epsilon_from_laws(law_a, law_b, delta))
        bad += pair_delta > delta * (1 + RELATIVE_TOLERANCE) + ABSOLUTE_TOLERANCE
    assert abs(result.delta_at_epsilon - worst_delta) < mpmath.mpf("1e-45")
    assert abs(result.epsilon_at_delta - worst_eps) < mpmath.mpf("1e-40")
    assert result.violations == bad
    assert result.holds == (bad == 0)
    if result.epsilon_pair is not None:  # the reported pair attains the reported ε
        law_a, law_b = (output_law(mech, np.array(c)) for c in result.epsilon_pair)
        assert abs(epsilon_from_laws(law_a, law_b, delta) - worst_eps) < mpmath.mpf("1e-40")


@dataclass(frozen=True)
class InheritsToyLaw(VerifyToyEM):
    """Test-only subclass that registers no law of its own."""


def test_inherited_law_is_flagged():
    result = verify(InheritsToyLaw(epsilon=1.0), d=1, max_count=1, progress=False)
    assert result.law_class == "VerifyToyEM"
    assert "inherited from VerifyToyEM" in str(result)
    own = verify(VerifyToyEM(epsilon=1.0), d=1, max_count=1, progress=False)
    assert own.law_class == "VerifyToyEM" and "inherited" not in str(own)


# --- LimitDomain (seed 003 Alg 1, Thm 1) and a LimitDomain with a broken ⊥ threshold -----


@dataclass(frozen=True)
class LimitDomainNoLogTerm(M.LimitDomain):
    """BROKEN on purpose: ⊥ threshold ``h_(k̄+1) + 1`` without the ``ln(min{Δ,k̄,d−k̄}/δ)/ε``
    term of seed 003 (003_9293f5da18078e1b.txt) Alg. 1 line 2; test-only."""

    def threshold(self, counts) -> float:
        top = M.as_top_counts(counts, self.kbar + 1)
        return (int(top.counts[self.kbar]) if len(top) > self.kbar else 0) + 1.0

    def sample(self, counts, size, rng):
        size, rng = M.check_size(size), M.check_rng(rng)
        top = M.as_top_counts(counts, self.kbar + 1)
        n = min(self.kbar, len(top))
        scores = np.append(top.counts[:n].astype(float), self.threshold(top))
        labels = np.append(top.items[:n], M.BOTTOM)
        noisy = scores + rng.gumbel(scale=1 / self.epsilon, size=(size, n + 1))
        chosen = labels[np.argsort(-noisy, axis=1, kind="stable")[:, : self.k]]
        # everything after the first ⊥ of a row is padding
        after_bottom = np.cumsum(chosen == M.BOTTOM, axis=1) - (chosen == M.BOTTOM) > 0
        return np.where(after_bottom, M.PAD, chosen).astype(np.int64)


@output_law.register(LimitDomainNoLogTerm)
def _no_log_term_law(mech, counts):
    top = M.as_top_counts(counts, mech.kbar + 1)
    n = min(mech.kbar, len(top))
    h_bot = mech.threshold(top)
    with working_precision():
        eps = mpmath.mpf(mech.epsilon)
        weights = [mpmath.exp(eps * (int(c) - h_bot)) for c in top.counts[:n]]
        weights.append(mpmath.mpf(1))  # ⊥, relative to e^{ε h_⊥}
        labels = [int(i) for i in top.items[:n]] + [M.BOTTOM]
        return plackett_luce_law(weights, labels, mech.k, stop=n)


def reference_limit_domain_law(k, kbar, epsilon, delta, max_items, counts):
    """Seed 003 Alg. 1 written out independently: Gumbel-max peeling = Plackett–Luce over
    the true top-k̄ and ⊥ (Lemma 4.2), ⊥ score h_(k̄+1) + 1 + ln(min{Δ, k̄, d−k̄}/δ)/ε. d > k̄."""
    counts = np.asarray(counts)
    order = sorted(range(counts.size), key=lambda i: (-counts[i], i))  # ties to the lower id
    top = order[:kbar]
    size_term = min(kbar, counts.size - kbar, max_items or kbar)
    with working_precision():
        eps = mpmath.mpf(epsilon)
        h_bot = int(counts[order[kbar]]) + 1 + mpmath.log(mpmath.mpf(size_term) / delta) / eps
        w = {i: mpmath.exp(eps * int(counts[i])) for i in top}
        w_bot = mpmath.exp(eps * h_bot)
        law = {}
        for j in range(k + 1):
            for seq in itertools.permutations(top, j):
                p, remaining = mpmath.mpf(1), mpmath.fsum(w.values()) + w_bot
                for i in seq:
                    p *= w[i] / remaining
                    remaining -= w[i]
                law[seq + ((M.BOTTOM,) if j < k else ())] = p * (w_bot / remaining if j < k else 1)
        return law


@pytest.mark.parametrize("max_items", [None, 1])
def test_limit_domain_law_matches_independent_reference(max_items):
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3, max_items=max_items)
    for counts in itertools.product(range(3), repeat=5):
        law = output_law(mech, np.array(counts))
        ref = reference_limit_domain_law(2, 3, 1.0, 1e-3, max_items, counts)
        assert law.keys() == ref.keys()
        assert max(abs(law[o] - ref[o]) for o in ref) < mpmath.mpf("1e-40")


def test_limit_domain_small_family_holds():
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    result = verify(mech, d=4, max_count=2, progress=False)
    assert result.holds, str(result)
    assert result.pairs == 3**4 * (2**4 - 1)
    assert 0 < result.delta_at_epsilon <= mpmath.mpf("1e-3")
    assert result.epsilon_at_delta <= mech.claim.epsilon
    assert result.delta_pair is not None and result.epsilon_pair is not None


def test_limit_domain_without_log_term_fails():
    broken = LimitDomainNoLogTerm(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    result = verify(broken, d=4, max_count=2, progress=False)
    assert not result.holds
    assert result.delta_at_epsilon > 100 * mpmath.mpf("1e-3")
    assert "VIOLATED" in str(result) and "inherited" not in str(result)


def test_broken_variant_sampler_matches_its_law():
    # chi-square goodness of fit at p < 1e-6: false failure probability <= 1e-6 (fixed seed).
    from scipy.stats import chisquare

    broken = LimitDomainNoLogTerm(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    counts = np.array([3, 1, 2, 0, 1])
    law = output_law(broken, counts)
    outcomes = sorted(law)
    n = 40_000
    expected = np.array([float(law[o]) for o in outcomes]) * n
    assert expected.min() >= 5, "cells too small for the chi-square approximation"
    observed = M.count_outcomes(broken.sample(counts, n, np.random.default_rng(20261123)))
    assert set(observed) <= set(outcomes)
    stat = chisquare([observed.get(o, 0) for o in outcomes], expected)
    assert stat.pvalue > 1e-6


@pytest.mark.slow
def test_limit_domain_reference_values_design():
    # DESIGN.md "What verified means": for LimitDomain(k=2, k̄=3, ε=1, δ=1e-3) on d=5 the worst
    # exact ε at δ is about 1.0 with counts <= 2 but about 1.8 with counts <= 5.
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    small = verify(mech, d=5, max_count=2, progress=False)
    assert small.holds and 0.95 < float(small.epsilon_at_delta) < 1.05
    medium = verify(mech, d=5, max_count=3, progress=False)
    assert medium.holds and medium.epsilon_at_delta >= small.epsilon_at_delta
    large = verify(mech, d=5, max_count=5, progress=False)
    assert large.holds and 1.75 < float(large.epsilon_at_delta) < 1.85
    broken = verify(
        LimitDomainNoLogTerm(k=2, kbar=3, epsilon=1.0, delta=1e-3), d=5, max_count=3, progress=False
    )
    assert not broken.holds


def substitute_offsets(d):
    """One record moves from item i to item j != i (Substitute(1)), written out directly."""
    moves = []
    for i, j in itertools.permutations(range(d), 2):
        t = [0] * d
        t[i], t[j] = -1, 1
        moves.append(tuple(t))
    return moves


def test_substitute_em_between_epsilon_and_twice_epsilon():
    """Under substitution one count falls while another rises: EM with exp(ε c) is 2ε-DP
    (the bound is approached, not met, on a bounded family) and not ε-DP."""
    d, max_count = 3, 2
    result = verify(
        VerifyToyEM(epsilon=1.0),
        d=d,
        max_count=max_count,
        progress=False,
        neighbours=M.Substitute(1),
    )
    worst_eps, _, _, n_pairs = brute_em(1.0, d, max_count, 1.0, substitute_offsets(d))
    assert result.pairs == n_pairs
    assert abs(float(result.epsilon_at_delta) - worst_eps) < 1e-12
    assert 1.0 < worst_eps < 2.0 and not result.holds
    assert result.to_dict()["family"]["relation_type"] == "Substitute"


def test_exponential_mechanism_claim_holds_under_substitution():
    """ExponentialMechanism(ε, monotonic=False) claims 2ε under BoundedChange(1), which
    contains Substitute(1): the claim holds exactly on every substitute pair of the family."""
    mech = M.ExponentialMechanism(epsilon=0.7, monotonic=False)
    result = verify(mech, d=3, max_count=3, progress=False, neighbours=M.Substitute(1))
    assert result.holds and result.violations == 0
    assert 0.7 < float(result.epsilon_at_delta) < 1.4
    _, _, _, n_pairs = brute_em(0.7, 3, 3, 1.4, substitute_offsets(3))
    assert result.pairs == n_pairs
