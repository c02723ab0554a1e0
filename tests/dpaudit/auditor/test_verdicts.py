"""Three verdicts: a pass needs power; no separation or an interrupt is inconclusive."""

import math

import numpy as np
import pytest
from scipy.stats import norm

import dpaudit
import mechanisms as M
from dpaudit.auditor import INCONCLUSIVE, PASSED, VIOLATION, detectable_epsilon
from dpaudit.auditor.statistics import one_sided_lower, one_sided_upper
from dpaudit.catalog import GumbelTopKClaimsEpsilon


def test_detectable_epsilon_solves_its_definition():
    # At P = P_need the lower Clopper–Pearson bound of n·P_need hits equals δ + e^ε q_high.
    n, hits_q, a, eps, delta = 400_000, 1_000, 0.05 / 12, 1.0, 1e-6
    det = detectable_epsilon(hits_q, n, n, a, eps, delta)
    q = hits_q / n
    p_need = math.exp(det) * q + delta
    target = delta + math.exp(eps) * one_sided_upper(hits_q, n, a)
    assert one_sided_lower(p_need * n, n, a) == pytest.approx(target, rel=1e-9)


def test_detectable_epsilon_matches_the_normal_approximation():
    # Independent route: for large n the lower bound is about P − z sqrt(P(1 − P)/n);
    # solving that quadratic for P gives the detectable ε to a few parts in a thousand.
    n, hits_q, a, eps, delta = 4_000_000, 40_000, 1e-3, 0.5, 0.0
    z = norm.isf(a)
    target = math.exp(eps) * one_sided_upper(hits_q, n, a)
    # P − z sqrt(P(1−P)/n) = target  ->  (1 + z²/n) P² − (2 target + z²/n) P + target² = 0
    qa, qb, qc = 1 + z * z / n, -(2 * target + z * z / n), target * target
    p = (-qb + math.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa)
    approx = math.log(p / (hits_q / n))
    assert detectable_epsilon(hits_q, n, n, a, eps, delta) == pytest.approx(approx, rel=3e-3)
    assert detectable_epsilon(n - 10, n, n, a, eps, delta) == math.inf  # Q ≈ 1: undetectable


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
    assert result.verdict == PASSED and result.exit_status == 0
    assert result.detectable_epsilon <= 2 * result.claim_epsilon and result.separated


def test_power_grows_with_the_samples():
    # GumbelTopK(k=1, ε=0.05) claims ε = 0.05 on one weak pair: 2,000 samples neither separate
    # the pair nor could see a violation below 0.1 (inconclusive); 4M samples do (passed).
    pair = [((3, 3, 3, 3), (3, 3, 3, 4))]
    mech = M.GumbelTopK(k=1, epsilon=0.05)
    few = dpaudit.audit(mech, pairs=pair, restrict=True, samples=2_000, seed=0)
    assert few.verdict == INCONCLUSIVE and few.detectable_epsilon > 2 * 0.05
    many = dpaudit.audit(mech, pairs=pair, restrict=True, samples=4_000_000, seed=0)
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
