"""``mechanisms.claims``: the neighbour relations, a point claim and a claim that is a curve."""

import math
import pickle

import pytest
from scipy import stats

from mechanisms.claims import (
    RELATIONS,
    UNRESTRICTED,
    AddRemoveUser,
    BoundedChange,
    PrivacyClaim,
    ProfileClaim,
    Substitute,
)
from mechanisms.profiles import GaussianDP, ProfilePoints

# -- relations -------------------------------------------------------------------------------


def test_relation_defaults():
    assert AddRemoveUser().max_items is None and AddRemoveUser(None) == UNRESTRICTED
    assert BoundedChange().max_change == 1
    assert Substitute().max_items == 1
    assert (AddRemoveUser, BoundedChange, Substitute) == RELATIONS


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: AddRemoveUser(0), "max_items must be an integer >= 1, got 0"),
        (lambda: AddRemoveUser(1.5), "max_items must be an integer >= 1, got 1.5"),
        (lambda: BoundedChange(0), "max_change must be an integer >= 1, got 0"),
        (lambda: Substitute(-1), "max_items must be an integer >= 1, got -1"),
    ],
)
def test_a_bad_relation_names_its_field(build, message):
    with pytest.raises(ValueError) as caught:
        build()
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "relation, text",
    [
        (AddRemoveUser(), "add/remove one user (unrestricted)"),
        (AddRemoveUser(3), "add/remove one user touching <= 3 items"),
        (BoundedChange(2), "each count moves by <= 2 either way"),
        (Substitute(), "substitute one record (one count down, one up)"),
        (Substitute(2), "substitute one user's record touching <= 2 items"),
        (Substitute(None), "substitute one user's record (unrestricted)"),
    ],
)
def test_each_relation_says_what_it_allows(relation, text):
    assert str(relation) == text


def test_relations_are_values():
    assert AddRemoveUser(2) == AddRemoveUser(2) != AddRemoveUser(3)
    assert AddRemoveUser(1) != Substitute(1)  # same field, another relation
    assert len({BoundedChange(1), BoundedChange(1), BoundedChange(2)}) == 2
    with pytest.raises(AttributeError):
        AddRemoveUser(2).max_items = 3  # type: ignore[misc]


# -- a point claim ---------------------------------------------------------------------------


def test_a_claim_is_an_epsilon_delta_neighbours_tuple():
    claim = PrivacyClaim(1.0, 1e-6, BoundedChange(1))
    epsilon, delta, neighbours = claim
    assert (epsilon, delta, neighbours) == (1.0, 1e-6, BoundedChange(1))
    assert str(claim) == "(1, 1e-06)-DP, each count moves by <= 1 either way"


def test_a_point_claims_delta_at_and_epsilon_at():
    eps, delta = 1.0, 1e-6
    claim = PrivacyClaim(eps, delta, UNRESTRICTED)
    assert claim.delta_at(eps) == claim.delta_at(5.0) == delta
    # Below ε: the canonical (ε, δ) region, δ + (1-δ)(e^ε - e^ε')/(1 + e^ε) (Kairouz et al. 2015).
    at = 0.25
    assert claim.delta_at(at) == pytest.approx(
        delta + (1 - delta) * (math.e - math.exp(at)) / (1 + math.e)
    )
    assert claim.epsilon_at(delta) == eps
    assert claim.epsilon_at(delta / 10) == math.inf  # no ε of this claim reaches a smaller δ
    assert claim.profile == ProfilePoints(((eps, delta),))


def test_with_neighbours_keeps_the_point():
    claim = PrivacyClaim(2.0, 0.0, UNRESTRICTED)
    moved = claim.with_neighbours(Substitute(1))
    assert moved == PrivacyClaim(2.0, 0.0, Substitute(1))
    assert claim.neighbours == UNRESTRICTED  # the original is unchanged


# -- a claim that is a curve -----------------------------------------------------------------


def _gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth & Su 2022, Cor. 2.13), with scipy's normal CDF."""
    return stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(
        -epsilon / mu - mu / 2
    )


def test_a_profile_claims_head_point_at_delta_lies_on_the_curve():
    claim = PrivacyClaim.from_profile(GaussianDP(1.0), UNRESTRICTED, delta=1e-5)
    assert isinstance(claim, ProfileClaim)
    assert claim.delta == 1e-5
    assert _gdp_delta(1.0, claim.epsilon) == pytest.approx(1e-5, rel=1e-6)
    # The smallest such ε: a little less gives a larger δ.
    assert _gdp_delta(1.0, claim.epsilon * 0.999) > 1e-5


def test_a_profile_claims_head_point_at_epsilon():
    claim = PrivacyClaim.from_profile(GaussianDP(0.5), UNRESTRICTED, epsilon=1.0)
    assert claim.epsilon == 1.0
    assert claim.delta == pytest.approx(_gdp_delta(0.5, 1.0), rel=1e-9)
    for eps in (0.1, 0.5, 2.0):
        assert claim.delta_at(eps) == pytest.approx(_gdp_delta(0.5, eps), rel=1e-9)


def test_a_profile_claim_needs_exactly_one_head_coordinate():
    for given in ({}, {"delta": 1e-5, "epsilon": 1.0}):
        with pytest.raises(ValueError, match="give exactly one of delta= or epsilon="):
            PrivacyClaim.from_profile(GaussianDP(1.0), UNRESTRICTED, **given)


def test_a_delta_below_the_curve_asks_to_raise_it():
    points = ProfilePoints(((1.0, 1e-3), (2.0, 1e-4)))
    with pytest.raises(
        ValueError, match=r"delta=1e-05 is below every δ the profile reaches; raise it"
    ):
        PrivacyClaim.from_profile(points, UNRESTRICTED, delta=1e-5)


def test_a_profile_must_be_a_profile():
    with pytest.raises(ValueError, match=r"profile must be a mechanisms\.profiles profile"):
        ProfileClaim((1.0, 1e-6), UNRESTRICTED, delta=1e-6)


def test_a_profile_claim_equals_its_head_tuple_and_compares_curves_with_its_kind():
    a = PrivacyClaim.from_profile(GaussianDP(1.0), UNRESTRICTED, epsilon=1.0)
    b = PrivacyClaim.from_profile(ProfilePoints(((1.0, a.delta),)), UNRESTRICTED, epsilon=1.0)
    assert a == PrivacyClaim(1.0, a.delta, UNRESTRICTED) == tuple(a)
    assert tuple(a) == tuple(b) and a != b  # same head point, different curves
    assert a == PrivacyClaim.from_profile(GaussianDP(1.0), UNRESTRICTED, epsilon=1.0)
    assert hash(a) == hash(PrivacyClaim.from_profile(GaussianDP(1.0), UNRESTRICTED, epsilon=1.0))


def test_a_profile_claim_is_immutable_and_pickles():
    claim = PrivacyClaim.from_profile(GaussianDP(1.0), AddRemoveUser(2), delta=1e-6)
    with pytest.raises(AttributeError, match="ProfileClaim is immutable"):
        claim.epsilon = 0.0  # type: ignore[misc]
    back = pickle.loads(pickle.dumps(claim))
    assert back == claim and back.profile == claim.profile and back.neighbours == AddRemoveUser(2)


def test_a_profile_claim_moves_to_another_relation_only():
    claim = PrivacyClaim.from_profile(GaussianDP(1.0), UNRESTRICTED, epsilon=1.0)
    moved = claim.with_neighbours(Substitute(1))
    assert isinstance(moved, ProfileClaim) and moved.profile == claim.profile
    assert tuple(moved) == (claim.epsilon, claim.delta, Substitute(1))
    assert claim._replace(neighbours=BoundedChange(1)).neighbours == BoundedChange(1)
    with pytest.raises(ValueError, match="head point lies on its profile; build a new one"):
        claim._replace(epsilon=2.0)


def test_a_profile_claim_names_its_curve():
    claim = PrivacyClaim.from_profile(GaussianDP(1.0), UNRESTRICTED, epsilon=1.0)
    assert str(claim) == f"gdp (mu=1.0): {PrivacyClaim.__str__(claim)}"
    assert repr(claim).startswith("ProfileClaim(profile=GaussianDP(mu=1.0), ")
