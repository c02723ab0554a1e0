"""Certified worst cases: soundness against exhaustive verify, the attained lower end, the recheck."""

import copy
import math
import random

import mpmath
import numpy as np
import pytest

from dpaudit.catalog import LimitDomainNoThresholdTerm
from dpaudit.exact import verify
from dpaudit.exact.certify import (
    LimitDomainModel,
    certify_worst_case,
    read_certificate,
    recheck_certificate,
    write_certificate,
)
from dpaudit.exact.certify.certificate import exact_value
from dpaudit.exact.certify.search import Leaf
from mechanisms import LimitDomain

SMALL = LimitDomain(k=1, kbar=2, epsilon=1.0, delta=1e-3)
MAIN = LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)


@pytest.fixture(scope="module")
def small_delta():
    return certify_worst_case(SMALL, 4, quantity="delta", rtol=0.01, seconds=60)


@pytest.fixture(scope="module")
def main_delta():
    return certify_worst_case(MAIN, 5, quantity="delta", rtol=0.05, seconds=120)


def test_small_upper_bounds_every_pair_of_the_exhaustive_family(small_delta):
    """Every pair on 4 items with counts <= 4: exact δ at ε (dpaudit verify) <= certified upper."""
    exhaustive = verify(SMALL, d=4, max_count=4, progress=False)
    assert exhaustive.delta_at_epsilon <= small_delta.upper
    assert small_delta.lower <= small_delta.upper
    assert small_delta.converged


def test_small_epsilon_interval_contains_the_exhaustive_worst():
    result = certify_worst_case(SMALL, 4, quantity="epsilon", rtol=0.01, seconds=60)
    exhaustive = verify(SMALL, d=4, max_count=4, progress=False)
    assert exhaustive.epsilon_at_delta <= result.upper
    assert result.lower <= result.upper <= result.lower * 1.01 + 1e-12


def test_main_upper_bounds_every_pair_of_the_exhaustive_family(main_delta):
    """LimitDomain(2, 3, 1, 1e-3) on 5 items, counts <= 3: verify's worst δ at ε = 2 <= upper."""
    exhaustive = verify(MAIN, d=5, max_count=3, progress=False)
    assert exhaustive.delta_at_epsilon <= main_delta.upper
    assert main_delta.lower <= main_delta.upper


@pytest.mark.parametrize("fixture", ["small_delta", "main_delta"])
def test_the_lower_end_is_attained_by_the_reported_pair(fixture, request):
    result = request.getfixturevalue(fixture)
    counts, counts2 = (np.array(c) for c in result.pair)
    assert set(np.unique(counts2 - counts)) <= {0, 1} and (counts2 > counts).any()
    mechanism = SMALL if fixture == "small_delta" else MAIN
    again = exact_value(mechanism, result.pair, "delta", result.at)
    assert abs(again - result.lower) <= mpmath.mpf("1e-30")
    assert again > 0


def test_leaf_bounds_hold_at_integer_points_of_their_boxes(main_delta):
    """Each sampled point of a leaf, realised as a pair, has an exact δ below the leaf's bound."""
    rng = random.Random(3)
    model = main_delta.model
    leaves = [leaf for leaf in main_delta.leaves if leaf.box]
    for leaf in rng.sample(leaves, 40):
        gaps = {
            i: rng.randint(int(lo), int(lo) + 8 if math.isinf(hi) else int(hi))
            for i, (lo, hi) in zip(leaf.shape.free, leaf.box)
        }
        realised = leaf.shape.realise(model, gaps)
        if realised is None:
            continue
        counts, counts2, _ = realised
        assert exact_value(MAIN, (counts, counts2), "delta", main_delta.at) <= leaf.upper


def test_certificate_rechecks_and_refuses_tampering(small_delta, tmp_path):
    path = tmp_path / "certificate.json"
    write_certificate(small_delta, path)
    data = read_certificate(path)
    check = recheck_certificate(data, SMALL)
    assert check.ok, check.problems
    assert check.upper == pytest.approx(small_delta.upper, rel=1e-9)
    assert check.lower == small_delta.lower or abs(check.lower - small_delta.lower) < 1e-30

    worst = max(range(len(data["leaves"])), key=lambda n: float(data["leaves"][n]["upper"]))
    lowered = copy.deepcopy(data)
    lowered["leaves"][worst]["upper"] = float(data["leaves"][worst]["upper"]) / 2
    lowered["upper"] = max(float(leaf["upper"]) for leaf in lowered["leaves"])
    refused = recheck_certificate(lowered)
    assert not refused.ok and any("below the re-derived" in p for p in refused.problems)

    dropped = copy.deepcopy(data)
    del dropped["leaves"][worst]
    refused = recheck_certificate(dropped)
    assert not refused.ok and any("no leaf covers" in p for p in refused.problems)

    moved = copy.deepcopy(data)
    moved["pair"][1] = list(moved["pair"][0])
    refused = recheck_certificate(moved, SMALL)
    assert not refused.ok and any("not the stated lower end" in p for p in refused.problems)


def test_recheck_is_faster_than_the_search(small_delta):
    check = recheck_certificate(small_delta.to_dict())
    assert check.ok
    assert check.seconds < max(small_delta.seconds, 1.0)


def test_a_threshold_without_its_log_term_is_certified_above_its_claim():
    """The catalog's LimitDomain without ln(·/δ)/ε: both ends of δ at ε = 2 exceed δ = 1e-3."""
    broken = LimitDomainNoThresholdTerm(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    model = LimitDomainModel(k=2, kbar=3, epsilon=1.0, bottom=1.0, d=5)
    result = certify_worst_case(broken, quantity="delta", rtol=0.05, seconds=60, model=model)
    assert 1e-3 < result.lower <= result.upper
    assert exact_value(broken, result.pair, "delta", 2.0) == result.lower
    eps = certify_worst_case(broken, quantity="epsilon", rtol=0.05, seconds=60, model=model)
    assert 2.0 < eps.lower <= eps.upper


def test_a_leaf_serialises_infinite_sides():
    from dpaudit.exact.certify.shapes import Shape

    leaf = Leaf(Shape((2, 0), (1, 0, 0), 0, 0, -1), ((2.0, math.inf),), 0.5)
    assert leaf.to_dict()["box"] == [[2.0, "inf"]]


def test_interval_arithmetic_confirms_every_leaf_and_refuses_a_lowered_one(small_delta):
    """The second derivation (mpmath iv, outward rounding) accepts the search's leaf bounds."""
    data = small_delta.to_dict()
    assert recheck_certificate(data, SMALL, arithmetic="interval").ok
    worst = max(range(len(data["leaves"])), key=lambda n: float(data["leaves"][n]["upper"]))
    lowered = copy.deepcopy(data)
    lowered["leaves"][worst]["upper"] = float(data["leaves"][worst]["upper"]) * 0.999
    refused = recheck_certificate(lowered, arithmetic="interval")
    assert not refused.ok and len(refused.problems) == 1
