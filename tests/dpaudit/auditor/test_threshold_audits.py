"""Default audits of the seeds' threshold mechanisms (slow): they are probed, not passed blind.

Without the threshold search, TopStable, StabilityRelease and RestrictedGumbel pass
their default audits with an ε lower bound of 0 (no default pair sits where their output
moves); these tests require a positive bound. Reference values are exact
(dpaudit.exact.epsilon_at):

* TopStable(k=2, k̄=3, ε=1, δ=1e-3), add/remove one user: the worst exact ε at δ = 1e-3
  over top-two heights 12..45 (gap <= 2), tails <= 2 and every one-user addition is 0.2613
  on (19, 19, 0, 0, 0) vs (19, 20, 0, 0, 1). A value of 0.54 is reached on
  (20, 19, 1, 1, 0) vs (20, 18, 1, 2, 0), which moves one count down and another up: not
  one user added or removed, so outside the relation TopStable claims.
* StabilityRelease(k=2, ε=1, δ=1e-3): exact ε 0.998 on (9, 9, 0, 1, 1) vs (9, 9, 0, 0, 0).
"""

import pytest

import dpaudit
import mechanisms as M
from dpaudit.catalog.sessions import FreeBottomSession

pytestmark = pytest.mark.slow
SEEDS = range(5)


def _audits(mech):
    return [dpaudit.audit(mech, seed=seed) for seed in SEEDS]


def test_topstable_is_probed_near_its_exact_worst_case():
    results = _audits(M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3))
    assert all(r.verdict != "violation" for r in results)
    assert sum(r.epsilon_lower >= 0.20 for r in results) >= 4, [r.epsilon_lower for r in results]
    assert all(r.epsilon_lower <= 0.2613 * 1.05 for r in results)  # below the exact worst


def test_no_threshold_mechanism_passes_with_a_zero_bound():
    mechs = [
        M.TopStable(k=2, kbar=5, epsilon=1.0, delta=1e-6),
        M.StabilityRelease(k=2, epsilon=1.0, delta=1e-3),
        M.RestrictedGumbel(k=2, kbar=4, epsilon=0.5, delta=1e-3, epsilon_r=0.5, delta_r=5e-4),
    ]
    for mech in mechs:
        for result in _audits(mech):
            assert result.verdict == "inconclusive" or result.epsilon_lower > 0, str(result)


def test_stability_release_and_restricted_gumbel_bounds():
    stable = _audits(M.StabilityRelease(k=2, epsilon=1.0, delta=1e-3))
    assert all(0.5 < r.epsilon_lower <= 0.998 for r in stable), [r.epsilon_lower for r in stable]
    gumbel = _audits(
        M.RestrictedGumbel(k=2, kbar=4, epsilon=0.5, delta=1e-3, epsilon_r=0.5, delta_r=5e-4)
    )
    assert all(r.epsilon_lower > 0.4 and r.verdict == "passed" for r in gumbel)


def test_default_session_audit_flags_free_bottom_and_passes_the_fix():
    # Charging only items (⊥ free) is flagged by the default session audit (exact ε at
    # δ = 1e-5 on (15, 0) vs (16, 0) is 3.31); the session that charges ⊥ is not.
    params = {"total_k": 1, "max_queries": 5, "epsilon": 1.0, "delta": 1e-6}
    policy = M.RepeatQuery(k=1, kbar=1)
    for seed in SEEDS:
        broken = dpaudit.audit_session(lambda: FreeBottomSession(**params), policy, seed=seed)
        assert broken.verdict == "violation" and broken.epsilon_lower > 2.0, str(broken)
        fixed = dpaudit.audit_session(lambda: M.MultiLimitDomain(**params), policy, seed=seed)
        assert fixed.verdict != "violation", str(fixed)
