"""Privacy profiles: conversions against independent routes, and the most violating ε."""

import math
import pickle

import numpy as np
import pytest
from scipy.stats import norm

from mechanisms import AddRemoveUser, BoundedChange, PrivacyClaim, ProfileClaim
from mechanisms.profiles import (
    GaussianDP,
    ProfilePoints,
    ZeroConcentratedDP,
    canonical_delta,
    most_violating_epsilon,
    profile_from_dict,
    profile_to_dict,
)
from mechanisms.tail_bounds import analytic_gaussian_sigma

EPSILONS = np.linspace(0.0, 8.0, 81)


def test_zcdp_tight_conversion_never_above_bun_steinke():
    for rho in (0.005, 0.05, 0.5, 2.0):
        z = ZeroConcentratedDP(rho)
        for eps in EPSILONS:
            assert z.delta_at(eps) <= z.delta_at_simple(eps) * (1 + 1e-12)
        # strictly tighter somewhere (the (1-1/α)^α/(α-1) factor is < 1 for α > 1)
        assert z.delta_at(4 * rho + 1) < 0.9 * z.delta_at_simple(4 * rho + 1)


def test_zcdp_matches_dp_accounting_rdp_route():
    """dp_accounting's RDP accountant, ZCDpEvent(ρ), orders on a fine grid: same formula
    minimised over a grid of α, so ours (a continuous infimum) is below and close."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    orders = list(np.concatenate([np.linspace(1.02, 10, 900), np.geomspace(10, 5000, 900)]))
    worst = 0.0
    for rho in (0.01, 0.1, 0.5):
        accountant = rdp.RdpAccountant(orders=orders)
        accountant.compose(dp_accounting.ZCDpEvent(rho))
        ours_z = ZeroConcentratedDP(rho)
        # dp_accounting also takes sqrt(1 - e^{-KL}) at the smallest order; compare where
        # the α-bound is what both compute.
        floor = math.sqrt(-math.expm1(-orders[0] * rho))
        for eps in np.linspace(2 * rho, 6.0, 40):
            theirs = accountant.get_delta(float(eps))
            ours = ours_z.delta_at(float(eps))
            if theirs >= floor * 0.999:
                continue
            assert ours <= theirs * (1 + 1e-9)
            # the grid of orders is 0.35 % apart near α = 300: within 2 % of the infimum
            assert ours >= theirs * (1 - 2e-2)
            worst = max(worst, theirs - ours)
    assert worst < 1e-5


def test_zcdp_conversion_covers_the_gaussian_it_describes():
    """N(0, σ²) at sensitivity 1 is ρ = 1/(2σ²)-zCDP; its exact profile (μ = 1/σ GDP)
    must lie below the zCDP conversion at every ε."""
    for sigma in (0.7, 2.0, 10.0):
        exact = GaussianDP(1 / sigma)
        converted = ZeroConcentratedDP(1 / (2 * sigma**2))
        for eps in EPSILONS:
            assert exact.delta_at(eps) <= converted.delta_at(eps) + 1e-15


def test_gdp_matches_analytic_gaussian_calibration():
    """Balle–Wang's σ for (ε, δ) gives back δ at ε through μ = 1/σ."""
    for eps, delta in ((0.1, 1e-5), (1.0, 1e-6), (3.0, 1e-3), (0.5, 0.05)):
        sigma = analytic_gaussian_sigma(eps, delta)
        assert GaussianDP(1 / sigma).delta_at(eps) == pytest.approx(delta, rel=1e-8)
        assert GaussianDP(1 / sigma).epsilon_at(delta) == pytest.approx(eps, rel=1e-8)


def test_gdp_formula_and_dp_accounting_pld():
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    worst = 0.0
    for sigma in (0.8, 2.0, 5.0):
        mu = 1 / sigma
        g = GaussianDP(mu)
        loss = pld.from_gaussian_mechanism(
            standard_deviation=sigma, sensitivity=1.0, value_discretization_interval=1e-4
        )
        for eps in np.linspace(0.0, 4.0, 41):
            plain = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
            assert g.delta_at(eps) == pytest.approx(max(plain, 0.0), rel=1e-9, abs=1e-15)
            theirs = loss.get_delta_for_epsilon(float(eps))
            worst = max(worst, abs(theirs - g.delta_at(eps)))
            # the PLD is pessimistic (an upper bound) up to its truncation mass
            assert g.delta_at(eps) <= theirs + 1e-12
    assert worst < 1e-4


def test_gdp_large_epsilon_does_not_cancel():
    g = GaussianDP(0.5)
    tail = [g.delta_at(e) for e in (5.0, 8.0, 12.0)]
    assert all(t > 0 for t in tail) and tail[0] > tail[1] > tail[2]


def test_points_are_held_and_the_curve_covers_true_profiles():
    """Points taken from a true profile (Gaussian, Laplace, randomized response) give a
    curve that is never below that profile: the interpolation and the (ε, δ) region are
    valid bounds, not guesses."""

    def laplace_profile(scale_eps, e):  # Laplace with ε = 1/b at sensitivity 1
        return max(0.0, -math.expm1((e - scale_eps) / 2))

    def rr_profile(eps, e):  # randomized response, exactly (ε, 0)
        return max(0.0, (math.exp(eps) - math.exp(e)) / (1 + math.exp(eps)))

    truths = [
        (GaussianDP(0.8).delta_at, (0.3, 1.0, 2.0, 3.5)),
        (lambda e: laplace_profile(1.5, e), (0.4, 1.0, 1.5)),
        (lambda e: rr_profile(1.2, e), (1.2,)),
    ]
    for truth, at in truths:
        points = ProfilePoints(tuple((e, truth(e)) for e in at))
        for e, d in points.points:
            assert points.delta_at(e) == pytest.approx(d, abs=1e-15)
        for e in np.linspace(0, 6, 241):
            assert truth(e) <= points.delta_at(e) + 1e-12
    # randomized response meets the (ε, 0) region exactly below ε
    for e in (0.0, 0.5, 1.0):
        assert canonical_delta(1.2, 0.0, e) == pytest.approx(rr_profile(1.2, e), rel=1e-12)


def test_points_validation_names_the_argument():
    with pytest.raises(ValueError, match="increasing epsilon"):
        ProfilePoints(((1.0, 0.1), (0.5, 0.01)))
    with pytest.raises(ValueError, match="non-increasing delta"):
        ProfilePoints(((0.5, 0.01), (1.0, 0.1)))
    with pytest.raises(ValueError, match="delta"):
        ProfilePoints(((0.5, 1.5),))
    with pytest.raises(ValueError, match="rho"):
        ZeroConcentratedDP(0.0)
    with pytest.raises(ValueError, match="mu"):
        GaussianDP(-1.0)


def test_epsilon_at_inverts_delta_at():
    for profile in (
        ZeroConcentratedDP(0.2),
        GaussianDP(0.7),
        ProfilePoints(((0.5, 1e-2), (2.0, 1e-6))),
    ):
        for delta in (1e-2, 1e-4, 1e-6):
            eps = profile.epsilon_at(delta)
            assert profile.delta_at(eps) <= delta
            assert profile.delta_at(max(eps - 1e-6, 0.0)) > delta or eps == 0.0
    # below the last point's δ no finite ε is claimed
    assert ProfilePoints(((1.0, 1e-5),)).epsilon_at(1e-6) == math.inf


def _brute_force(profile, p, q, top):
    grid = np.linspace(0.0, top, 20001)
    return max(p - math.exp(e) * q - profile.delta_at(e) for e in grid)


@pytest.mark.parametrize(
    "profile",
    [
        ProfilePoints(((1.0, 1e-5),)),
        ProfilePoints(((0.2, 0.05), (0.8, 0.01), (1.5, 1e-4))),
        ZeroConcentratedDP(0.1),
        GaussianDP(0.6),
    ],
)
@pytest.mark.parametrize("p, q", [(0.6, 0.1), (0.3, 0.01), (0.02, 0.0), (0.1, 0.2), (0.05, 0.001)])
def test_most_violating_epsilon_is_the_maximum(profile, p, q):
    eps, excess = most_violating_epsilon(profile, p, q)
    assert excess == pytest.approx(p - math.exp(eps) * q - profile.delta_at(eps), abs=1e-15)
    top = math.log(p / q) if q > 0 and p > q else 8.0
    assert _brute_force(profile, p, q, top) <= excess + 1e-9


def test_most_violating_epsilon_on_claims():
    claim = PrivacyClaim(1.0, 1e-5, AddRemoveUser())
    # P - e^ε Q is largest at ε = 0 when Q is large, yet the claim allows more there:
    # the (ε, δ) claim is exact at its point.
    assert most_violating_epsilon(claim, 0.6, 0.1) == (
        1.0,
        pytest.approx(0.6 - math.e * 0.1 - 1e-5),
    )
    # Q = 0: a δ violation; the excess approaches P - δ.
    eps, excess = most_violating_epsilon(claim, 0.013, 0.0)
    assert excess == pytest.approx(0.013 - 1e-5)
    zc = PrivacyClaim.from_profile(ZeroConcentratedDP(0.05), AddRemoveUser(), delta=1e-6)
    eps, excess = most_violating_epsilon(zc, 0.013, 0.0)
    assert excess > 0.013 * (1 - 1e-8) and zc.delta_at(eps) <= 0.013e-9
    with pytest.raises(ValueError, match="p_low"):
        most_violating_epsilon(claim, 1.5, 0.0)


def test_profile_claim_is_a_privacy_claim():
    z = ZeroConcentratedDP(0.1)
    claim = PrivacyClaim.from_profile(z, AddRemoveUser(), delta=1e-6)
    assert isinstance(claim, PrivacyClaim) and isinstance(claim, ProfileClaim)
    eps, delta, relation = claim
    assert relation == AddRemoveUser()
    assert claim == (eps, delta, AddRemoveUser()) and delta == 1e-6
    assert z.delta_at(eps) <= 1e-6
    assert claim.delta_at(0.5) == z.delta_at(0.5)
    assert claim != PrivacyClaim.from_profile(ZeroConcentratedDP(0.2), AddRemoveUser(), delta=1e-6)
    assert pickle.loads(pickle.dumps(claim)) == claim
    moved = claim.with_neighbours(BoundedChange(1))
    assert moved.profile == z and moved.neighbours == BoundedChange(1) and moved[:2] == claim[:2]
    by_eps = PrivacyClaim.from_profile(GaussianDP(0.5), AddRemoveUser(), epsilon=1.0)
    assert by_eps.delta == GaussianDP(0.5).delta_at(1.0)
    with pytest.raises(AttributeError):
        claim.extra = 1
    with pytest.raises(ValueError, match="exactly one"):
        PrivacyClaim.from_profile(z, AddRemoveUser())
    with pytest.raises(ValueError, match="profile"):
        PrivacyClaim.from_profile((1.0, 0.0), AddRemoveUser(), delta=0.1)
    assert "zcdp" in str(claim)
    # a plain claim is its one point
    plain = PrivacyClaim(1.0, 1e-5, AddRemoveUser())
    assert plain.delta_at(2.0) == 1e-5 and plain.epsilon_at(1e-5) == pytest.approx(1.0, abs=1e-9)


def test_profile_json_round_trip():
    for profile in (
        ZeroConcentratedDP(0.3),
        GaussianDP(1.5),
        ProfilePoints(((0.5, 0.1), (1.0, 0.0))),
    ):
        assert profile_from_dict(profile_to_dict(profile)) == profile
    with pytest.raises(ValueError, match="profile"):
        profile_from_dict({"kind": "renyi"})
