"""dpaudit.auditor.greybox.structural_pairs: pairs across the edge of a declared support."""

import mpmath
import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.greybox.structural_pairs import support_edge_pair
from dpaudit.exact import output_law


def _gap_probability(mechanism, pair):
    counts, neighbour = pair
    gap = mechanism.output_support(counts) - mechanism.output_support(neighbour)
    law = output_law(mechanism, counts)
    return gap, float(mpmath.fsum(p for outcome, p in law.items() if set(outcome) & gap))


def _one_user_apart(pair, max_items):
    change = np.array(pair[0]) - np.array(pair[1])
    touched = np.count_nonzero(change)
    same_sign = np.all(change >= 0) or np.all(change <= 0)
    return same_sign and np.all(np.abs(change) <= 1) and 0 < touched <= (max_items or touched)


def test_limit_domain_pair_spends_the_whole_delta():
    # The README's LimitDomain on a histogram of its own audit: three items enter the top 10.
    mechanism = M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6)
    pair = support_edge_pair(mechanism, [13] * 10 + [0] * 3)
    assert pair == (tuple([13] * 10 + [14] * 3), tuple([13] * 13))
    gap, probability = _gap_probability(mechanism, pair)
    assert gap == {10, 11, 12}
    assert probability == pytest.approx(1e-6 / (1 + 1e-6), rel=1e-9)
    assert _one_user_apart(pair, None)


def test_a_restricted_user_moves_at_most_max_items():
    mechanism = M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6, max_items=1)
    pair = support_edge_pair(mechanism, [13] * 10 + [0] * 3, max_items=1)
    assert _one_user_apart(pair, 1)
    assert _gap_probability(mechanism, pair)[0] == {10}


@pytest.mark.parametrize(
    "mechanism, counts",
    [
        (M.StabilityRelease(k=2, epsilon=1.0, delta=1e-6), [5, 5, 3, 0]),
        (M.TopStable(k=1, kbar=2, epsilon=1.0, delta=1e-6), [9, 5, 3, 0]),
        (M.FixedThreshold(kbar=2, epsilon=1.0, delta=1e-6), [9, 5, 3, 0]),  # items pushed out
        (M.StrictLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6), [9, 5, 3, 0, 0, 0]),
    ],
    ids=lambda x: type(x).__name__ if not isinstance(x, list) else "",
)
def test_every_declared_family_gets_a_pair_with_a_structural_zero(mechanism, counts):
    pair = support_edge_pair(mechanism, counts)
    assert _one_user_apart(pair, None)
    gap, probability = _gap_probability(mechanism, pair)
    assert gap and 0 < probability <= mechanism.claim.delta
    # The zero is structural: the exact law of D' never outputs a gap item.
    assert all(not set(o) & gap for o, p in output_law(mechanism, pair[1]).items() if p > 0)


def test_no_pair_without_a_declaration():
    assert support_edge_pair(M.GumbelTopK(k=1, epsilon=1.0), [3, 2]) is None
