"""Three verdicts: a pass needs power; no separation or an interrupt is inconclusive."""

import math

import numpy as np
import pytest
from scipy.stats import binom

import dpaudit
import mechanisms as M
from dpaudit.auditor import INCONCLUSIVE, PASSED, VIOLATION, detectable_epsilon
from dpaudit.auditor.bounds.statistics import (
    detectable_delta,
    one_sided_lower,
    one_sided_upper,
    p_needed,
)
from dpaudit.catalog import GumbelTopKClaimsEpsilon


def _exact_detection_probability(p, q, n_p, n_q, a, eps, delta):
    """P(the audit flags the event) when P and Q are the truth: sum over the Q hits."""
    hits = np.arange(n_p + 1)
    lows = one_sided_lower(hits, np.full(n_p + 1, n_p), a)
    total = 0.0
    weights = binom.pmf(np.arange(n_q + 1), n_q, q)  # one vectorised call, not n_q + 1
    for k_q in np.flatnonzero(weights >= 1e-16):
        weight = weights[k_q]
        target = delta + math.exp(eps) * one_sided_upper(k_q, n_q, a)
        flagged = lows - delta > math.exp(eps) * one_sided_upper(k_q, n_q, a)
        if target < 1 and flagged.any():
            total += weight * binom.sf(int(hits[flagged][0]) - 1, n_p, p)
    return total


@pytest.mark.parametrize(
    ("hits_q", "n", "eps", "delta"),
    [(40, 4_000, 1.0, 1e-6), (5, 3_000, 0.5, 1e-3)],
)
def test_detectable_epsilon_is_detected_with_probability_at_least_0_9(hits_q, n, eps, delta):
    # Exact detection probability (binomial laws of both hit counts) at the detectable ε, at
    # every Q of a grid over the event's interval (not only at Q̂): at least 0.9 everywhere,
    # and not far above at the hardest Q (the union bound over the two sides costs little).
    a = 0.05 / 12
    det = detectable_epsilon(hits_q, n, n, a, eps, delta)
    grid = np.linspace(one_sided_lower(hits_q, n, a), one_sided_upper(hits_q, n, a), 9)
    chances = [
        _exact_detection_probability(math.exp(det) * q + delta, q, n, n, a, eps, delta)
        for q in grid
    ]
    assert 0.9 <= min(chances) <= 0.999
    # At Q̂ alone the detectable ε would be optimistic: a smaller ε excess is flagged there
    # with probability above 0.9, but not at the interval's low end.
    q = hits_q / n
    smaller = math.exp(0.97 * det) * q + delta
    assert _exact_detection_probability(smaller, q, n, n, a, eps, delta) < 1.0


def test_no_hit_on_q_gives_no_epsilon_power():
    # With no hit on Q the interval reaches Q = 0, where a ratio can hide: no ε power.
    assert detectable_epsilon(0, 2_000, 2_000, 0.05 / 12, 1.0, 0.0) == math.inf


def test_detectable_delta_is_detected_with_probability_at_least_0_9():
    # A δ witness (no hit on Q): a mechanism with P − e^ε·Q = detectable δ is flagged
    # w.p. >= 0.9 at every Q of its interval [0, q_high] (exact binomial law).
    a, n, eps, delta = 0.05 / 12, 20_000, 1.0, 1e-4
    det = detectable_delta(0, n, n, a, eps, delta)
    grid = np.linspace(0.0, one_sided_upper(0, n, a), 9)
    chances = [
        _exact_detection_probability(det + math.exp(eps) * q, q, n, n, a, eps, delta) for q in grid
    ]
    assert 0.9 <= min(chances) <= 0.999
    assert detectable_delta(n - 10, n, n, a, eps, delta) == math.inf  # Q ≈ 1: undetectable
    assert detectable_epsilon(n - 10, n, n, a, eps, delta) == math.inf


def test_p_needed_is_the_binomial_quantile():
    # Independent route: the smallest P with P(Bin(n, P) >= k) >= 0.95 by bisection on the
    # binomial tail, where k is the fewest hits whose lower bound clears the target.
    a, n, eps, delta = 1e-3, 10_000, 0.5, 0.0
    need = p_needed(0.0, n, n, a, eps, delta, probability=0.9)
    target = math.exp(eps) * one_sided_upper(0, n, a)
    k = next(k for k in range(n + 1) if one_sided_lower(k, n, a) > target)
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if binom.sf(k - 1, n, mid) >= 0.95 else (mid, hi)
    assert need == pytest.approx(hi, rel=1e-9)


class Constant(M.TopKMechanism):
    """Outputs item 0 whatever the data: private, but nothing to see."""

    width = 1
    claim = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())

    def sample(self, counts, size, rng):
        return np.zeros((size, 1), dtype=np.int64)


def test_a_mechanism_that_never_moves_is_inconclusive_not_passed():
    result = dpaudit.audit(Constant(), samples=50_000, seed=0)
    assert not result.separated and result.verdict == INCONCLUSIVE and result.exit_status == 3
    assert "never saw the mechanism's output move" in str(result)


def test_a_well_probed_correct_mechanism_passes():
    # GumbelTopK(k=2, ε=0.5) claims ε = 1; the default audit separates its pairs easily.
    result = dpaudit.audit(M.GumbelTopK(k=2, epsilon=0.5), samples=400_000, seed=0)
    assert result.verdict == PASSED and result.exit_status == 0, str(result)
    assert result.detectable_epsilon <= 2 * result.claim_epsilon and result.separated


def test_power_grows_with_the_samples():
    # GumbelTopK(k=1, ε=0.05) claims ε = 0.05 on one weak pair: 2,000 samples neither separate
    # the pair nor could see a violation below 0.1 (inconclusive); 4M samples do (passed, at
    # a power factor of 2).
    pair = [((3, 3, 3, 3), (3, 3, 3, 4))]
    mech = M.GumbelTopK(k=1, epsilon=0.05)
    options = {"pairs": pair, "restrict": True, "seed": 0, "power_factor": 2.0}
    few = dpaudit.audit(mech, samples=3_000, **options)
    assert few.verdict == INCONCLUSIVE and few.detectable_epsilon > 2 * 0.05
    many = dpaudit.audit(mech, samples=4_000_000, **options)
    assert many.verdict == PASSED and many.detectable_epsilon <= 2 * 0.05
    assert many.detectable_epsilon < few.detectable_epsilon


class Interrupting(M.TopKMechanism):
    """Raises KeyboardInterrupt on the call that starts confirmation (Ctrl-C mid-run)."""

    width = 1
    claim = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())

    def __init__(self):
        self.calls = 0

    def sample(self, counts, size, rng):
        self.calls += 1
        if self.calls > 40:
            raise KeyboardInterrupt
        return rng.integers(0, len(counts), size=(size, 1))


def test_an_interrupted_audit_is_inconclusive():
    result = dpaudit.audit(Interrupting(), samples=50_000, seed=0, domain_size=3)
    assert result.interrupted and result.verdict == INCONCLUSIVE and result.exit_status == 3
    assert result.to_dict()["verdict"] == "inconclusive"


def test_given_counts_add_to_the_default_families():
    # A top-3 claiming ε for three selections is flagged by the defaults but not on
    # counts=[5, 4, 4, 1] alone: given counts add to the families unless restricted.
    mech = GumbelTopKClaimsEpsilon(k=3, epsilon=1.0)
    added = dpaudit.audit(mech, counts=[5, 4, 4, 1], samples=400_000, seed=0)
    assert added.verdict == VIOLATION and not added.restricted
    restricted = dpaudit.audit(mech, counts=[5, 4, 4, 1], restrict=True, samples=400_000, seed=0)
    assert restricted.restricted and "restricted to the pairs given" in str(restricted)
    assert {w.family for w in restricted.witnesses} == {"given counts"}
    with pytest.raises(ValueError, match="restrict"):
        dpaudit.audit(mech, restrict=True, samples=10_000)


def test_validation_of_black_box_outputs():
    cases = [
        (lambda counts, rng: (0.7,), "not an integer"),
        (lambda counts, rng: None, "returned None"),
        (lambda counts, rng: (9,), "ids in \\[0, 3\\)"),
        (lambda counts, rng: (1, 1), "no id twice"),
        (lambda counts, rng: (-1, 0), "only last"),
    ]
    for function, message in cases:
        with pytest.raises(ValueError, match=message):
            dpaudit.audit(function, claim=(1.0, 0.0), width=2, samples=10_000, domain_size=3)
