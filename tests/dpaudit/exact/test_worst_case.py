"""Exact worst-case search: finds verify's worst case where verify can enumerate, beyond it
finds the staircase worst case of TopStable, and reports values that recompute exactly."""

import mpmath
import numpy as np
import pytest

import mechanisms as M
from dpaudit.catalog import TopStableThresholdNoHalf
from dpaudit.exact import epsilon_at, privacy_profile, verify, working_precision, worst_case
from dpaudit.neighbours import is_neighbour

LIMIT_DOMAIN = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)


@pytest.fixture(scope="module")
def limit_domain_search():
    # 2000 of the family's 31744 pairs.
    return worst_case(LIMIT_DOMAIN, d=5, max_count=3, seed=0, budget=2_000)


def test_finds_verify_worst_case_on_an_enumerable_family(limit_domain_search):
    exhaustive = verify(LIMIT_DOMAIN, d=5, max_count=3, progress=False)
    assert limit_domain_search.epsilon_at_delta == exhaustive.epsilon_at_delta
    assert limit_domain_search.holds is exhaustive.holds is True
    assert limit_domain_search.coverage.pairs_scored == 2_000
    assert limit_domain_search.coverage.family_pairs == exhaustive.pairs == 31_744


def test_reported_values_recompute_on_the_reported_pair(limit_domain_search):
    result = limit_domain_search
    c, c2 = (np.array(h) for h in result.pair)
    assert is_neighbour(c, c2, LIMIT_DOMAIN.claim.neighbours)
    assert result.epsilon_at_delta == epsilon_at(LIMIT_DOMAIN, c, c2, result.delta)
    assert result.delta_at_epsilon == privacy_profile(LIMIT_DOMAIN, c, c2, result.claim_epsilon)
    values = [p.epsilon_at_delta for p in result.confirmed]
    assert values == sorted(values, reverse=True) and len(values) == 5
    assert result.to_dict()["epsilon_at_delta"] == pytest.approx(float(result.epsilon_at_delta))


def test_same_seed_same_result():
    first = worst_case(LIMIT_DOMAIN, d=4, max_count=5, seed=3, budget=300)
    again = worst_case(LIMIT_DOMAIN, d=4, max_count=5, seed=3, budget=300)
    assert first == again


def test_a_broken_threshold_exceeds_its_claim():
    # T = ln(1/δ_q)/ε₂ instead of ln(1/δ_q)/(ε₂/2): an item outside the top k̄ escapes.
    broken = TopStableThresholdNoHalf(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    result = worst_case(broken, d=4, max_count=60, seed=0, budget=1_000)
    assert result.holds is False
    c, c2 = result.pair
    assert privacy_profile(broken, c, c2, 1.0) == result.delta_at_epsilon > 1e-3


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="budget"):
        worst_case(LIMIT_DOMAIN, d=3, max_count=3, budget=0)
    with pytest.raises(ValueError, match="max_count"):
        worst_case(LIMIT_DOMAIN, d=3, max_count=0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_top_stable_reaches_the_staircase_from_generic_starts(seed):
    # (60,36,4,4,0) vs (61,36,4,5,0) is far beyond any exhaustive family; the
    # search starts from uniform random histograms, not from it.
    mechanism = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    staircase = epsilon_at(mechanism, [60, 36, 4, 4, 0], [61, 36, 4, 5, 0], 1e-3)
    result = worst_case(mechanism, d=5, max_count=100, seed=seed, budget=20_000)
    with working_precision():  # a mirrored pair may differ in the last of 50 digits
        assert result.epsilon_at_delta >= staircase - mpmath.mpf("1e-40")
    assert result.epsilon_at_delta == epsilon_at(mechanism, *result.pair, 1e-3)
    assert result.holds
