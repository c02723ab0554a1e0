"""Default audits of the seeds' threshold mechanisms (slow): they are probed, not passed blind.

Without the threshold search, TopStable, StabilityRelease and RestrictedGumbel pass
their default audits with an ε lower bound of 0 (no default pair sits where their output
moves); these tests require a positive bound. Every bound is checked against the exact ε
at the claimed δ of its OWN witness pair (dpaudit.exact.epsilon_at): a valid bound never
exceeds it, except with the audit's false-failure probability α per audit (3 audits here:
at most 3α in all).

Worst cases, for scale (dpaudit.exact.worst_case, d = 5, counts <= 100; a search, so lower
bounds on the worst case): TopStable(k=2, k̄=3, ε=1, δ=1e-3) reaches 0.5742 on the staircase
(60, 36, 4, 4, 0) vs (61, 36, 4, 5, 0), StabilityRelease(k=2, ε=1, δ=1e-3) 0.9978. On
TopStable the threshold search alone proposes block shapes (0.21-0.24); with the local
search over histograms (two stages of search and successive halving of its best pairs)
the default audit reaches 0.50-0.53 on seeds 0-4 (witnesses of exact ε 0.53-0.58), above
70 % of 0.5742 (0.40) on every seed.

The slow step audits seed 0 (the five seeds took about 17 min of CI time, a third of the slow
step; seeds 0-1 still took 8 min of its 36); ``python benchmarks/bench_threshold_audits.py`` runs
the same audits on seeds 0-4
and prints every bound against its witness's exact ε and the counts each assertion below
makes (run it after any change to the threshold search or the local search).
"""

import pytest

import dpaudit
import mechanisms as M
from dpaudit.catalog.sessions import FreeBottomSession
from dpaudit.exact import epsilon_at

pytestmark = pytest.mark.slow
#: The seeds of the slow step; benchmarks/bench_threshold_audits.py sweeps 0-4.
SEEDS = (0,)


def _audits(mech):
    return [dpaudit.audit(mech, seed=seed) for seed in SEEDS]


def _below_witness_exact_epsilon(mech, result) -> bool:
    """The bound is at most the exact ε at the claimed δ of the pair that witnesses it."""
    witness = result.epsilon_witness
    if witness is None:
        return result.epsilon_lower == 0
    exact = epsilon_at(mech, witness.counts, witness.counts2, result.claim_delta)
    return result.epsilon_lower <= float(exact) + 1e-12


TOP_STABLE = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)


def test_topstable_is_probed_and_bounded_by_its_witnesses():
    # One test for both checks, so that the two default audits run once whatever worker takes
    # it (a module fixture shared by two tests ran twice when xdist gave them to two workers).
    results = _audits(TOP_STABLE)
    assert all(r.verdict != "violation" for r in results)
    # The local search's staircases reach 70 % of the worst case found (0.5742): above 0.40 on
    # every seed, far above every block shape's 0.2613 (on seeds 0-4, 0.50-0.53; the
    # benchmark asks for 4 of 5 there).
    assert all(r.epsilon_lower >= 0.40 for r in results), [r.epsilon_lower for r in results]
    assert all(_below_witness_exact_epsilon(TOP_STABLE, r) for r in results)


def test_no_threshold_mechanism_passes_with_a_zero_bound():
    # StabilityRelease and RestrictedGumbel are held to more than a positive bound (0.5 and
    # 0.4) on the same seeds by the test below; auditing them here again would only double
    # the slow step's time.
    for result in _audits(M.TopStable(k=2, kbar=5, epsilon=1.0, delta=1e-6)):
        assert result.verdict == "inconclusive" or result.epsilon_lower > 0, str(result)


def test_stability_release_and_restricted_gumbel_bounds():
    stability = M.StabilityRelease(k=2, epsilon=1.0, delta=1e-3)
    stable = _audits(stability)
    assert all(r.epsilon_lower > 0.5 for r in stable), [r.epsilon_lower for r in stable]
    assert all(_below_witness_exact_epsilon(stability, r) for r in stable)
    restricted = M.RestrictedGumbel(
        k=2, kbar=4, epsilon=0.5, delta=1e-3, epsilon_r=0.5, delta_r=5e-4
    )
    gumbel = _audits(restricted)
    assert all(r.epsilon_lower > 0.4 and r.verdict == "passed" for r in gumbel)
    assert all(_below_witness_exact_epsilon(restricted, r) for r in gumbel)


def test_default_session_audit_flags_free_bottom_and_passes_the_fix():
    # Charging only items (⊥ free) is flagged by the default session audit (exact ε at
    # δ = 1e-5 on (15, 0) vs (16, 0) is 3.31); the session that charges ⊥ is not.
    params = {"total_k": 1, "max_queries": 5, "epsilon": 1.0, "delta": 1e-6}
    policy = M.RepeatQuery(k=1, kbar=1)
    # A budget of 1e7 (a fifth of the default): the slow step must fit its box, and the
    # broken session's loss (3.31) is far above the claim.
    budget = 10_000_000
    for seed in SEEDS:
        broken = dpaudit.audit_session(
            lambda: FreeBottomSession(**params), policy, seed=seed, samples=budget
        )
        assert broken.verdict == "violation" and broken.epsilon_lower > 2.0, str(broken)
        fixed = dpaudit.audit_session(
            lambda: M.MultiLimitDomain(**params), policy, seed=seed, samples=budget
        )
        assert fixed.verdict != "violation", str(fixed)
