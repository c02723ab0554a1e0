"""OpenDP's zCDP measurements (Gumbel noisy top-k, discrete Gaussian counts), audited
under their own privacy maps read as ρ-zCDP curves.

OpenDP cannot be seeded: the sampler tests are chi-square tests with their
false-failure probability stated; the audits run at alpha = 1e-3.
"""

import math
from collections import Counter

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits, chi_square_pvalue

import dpaudit
from dpaudit.auditor.results.result import VIOLATION
from dpaudit.exact import output_law
from dpaudit.integrations.opendp import OpenDPGaussianCounts, OpenDPNoisyTopKZCDP
from mechanisms import AddRemoveUser, BoundedChange, PrivacyClaim, ProfileClaim
from mechanisms.profiles import ZeroConcentratedDP

P_REJECT = 1e-4
COUNTS = (3, 2, 1, 0, 0)


@pytest.mark.parametrize(
    "monotonic, relation, rho",
    [
        (True, AddRemoveUser(), 2 / (8 * 2.0**2)),  # k (d_in / scale)² / 8
        (False, BoundedChange(1), 2 * (2 / 2.0) ** 2 / 8),  # range distance 2 d_in
    ],
)
def test_noisy_top_k_claim_is_opendps_zcdp_map(monotonic, relation, rho):
    mech = OpenDPNoisyTopKZCDP(2, 2.0, monotonic, delta=1e-6)
    claim = mech.claim
    assert isinstance(claim, ProfileClaim) and claim.neighbours == relation
    assert claim.profile == ZeroConcentratedDP(float(mech.measurement.map(1)))
    assert claim.profile.rho == pytest.approx(rho, rel=1e-12)
    assert claim.delta == 1e-6 and claim.profile.delta_at(claim.epsilon) <= 1e-6


def test_noisy_top_k_zcdp_samples_gumbel_top_k():
    """make_noisy_top_k with the zCDP measure fits GumbelTopK(2, 1/scale) (chi-square at
    p < 1e-4: false failure <= 1e-4 per run), and rejects permute-and-flip's law of the
    same scale (the pure-DP variant's; noncentrality ~307 on 19 df at 5k samples, missed
    with probability ~3e-29, 0 misses in 400 simulated runs)."""
    mech = OpenDPNoisyTopKZCDP(2, 2.0)
    batch = mech.sample(COUNTS, 5_000, np.random.default_rng(0))
    assert_sampler_fits(output_law(mech.reference(), COUNTS), batch, P_REJECT)
    from dpaudit.integrations.opendp import peeled_permute_and_flip_law

    assert chi_square_pvalue(peeled_permute_and_flip_law(COUNTS, 2.0, 2), batch) < P_REJECT


def _discrete_gaussian(sigma, centre, support):
    with mpmath.workdps(30):
        weights = {x: mpmath.exp(-(mpmath.mpf(x - centre) ** 2) / (2 * sigma**2)) for x in support}
        total = mpmath.fsum(weights.values())
        return {(x,): w / total for x, w in weights.items()}


def test_gaussian_counts_claim_and_sampler():
    """ρ = OpenDP's map(1) = 1/(2σ²); each released count is discrete Gaussian around
    the count (Canonne, Kamath & Steinke 2020), tested by chi-square on two coordinates
    (p < 1e-4 each: false failure <= 2e-4 per run)."""
    mech = OpenDPGaussianCounts(1.5, d=4)
    claim = mech.claim
    assert claim.neighbours == AddRemoveUser(1)
    assert claim.profile.rho == pytest.approx(1 / (2 * 1.5**2), rel=1e-12)
    batch = mech.sample([3, 0, 7], 4_000, np.random.default_rng(0))
    assert batch.items.shape == (4_000, 0) and batch.values.shape == (4_000, 4)
    assert np.all(batch.values == np.round(batch.values))
    support = range(-40, 50)
    for column, count in ((0, 3), (3, 0)):  # item 3 lies past the histogram: count 0
        observed = Counter((int(v),) for v in batch.values[:, column])  # values may be < 0
        assert_sampler_fits(_discrete_gaussian(1.5, count, support), observed, P_REJECT)
    with pytest.raises(ValueError, match="perfect square"):
        OpenDPGaussianCounts(1.0, max_items=2)
    assert OpenDPGaussianCounts(1.0, max_items=4).claim.profile.rho == pytest.approx(2.0)


@pytest.mark.slow
def test_noisy_top_k_zcdp_passes_its_claim():
    """Gumbel top-2 at scale 1 claims ρ = 1/4 under AddRemoveUser; a VIOLATION has
    probability <= alpha = 1e-3 (the claim is true: bounded range, Cesar & Rogers 2021)."""
    mech = OpenDPNoisyTopKZCDP(2, 1.0, delta=1e-3)
    result = dpaudit.audit(mech, samples=100_000, alpha=1e-3, seed=0)
    assert result.verdict != VIOLATION, result.explanation


@pytest.mark.slow
def test_gaussian_counts_pass_and_a_halved_rho_is_flagged():
    """Discrete Gaussian counts at σ = 0.7 (ρ = 1.02): not flagged at their own claim
    (false flag <= alpha = 1e-3), and flagged under ρ/2 read at ε = 2.16, where ρ/2
    allows δ = 0.042 and the exact δ of one count moved by one is 0.131."""
    mech = OpenDPGaussianCounts(0.7, d=3)
    rho = mech.claim.profile.rho
    right = dpaudit.audit(mech, samples=60_000, alpha=1e-3, seed=0)
    assert right.verdict != VIOLATION, right.explanation
    wrong = PrivacyClaim.from_profile(ZeroConcentratedDP(rho / 2), AddRemoveUser(1), epsilon=2.16)
    assert wrong.delta == pytest.approx(0.042, abs=1e-3)
    flagged = dpaudit.audit(mech, claim=wrong, samples=60_000, alpha=1e-3, seed=0)
    assert flagged.verdict == VIOLATION, flagged.explanation
    assert math.isfinite(flagged.epsilon_lower)
