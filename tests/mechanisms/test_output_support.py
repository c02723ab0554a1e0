"""The declared output supports (``DeclaresOutputSupport``) against the exact laws.

Exact both ways: every outcome of positive exact probability holds only declared items, and every
declared item appears in some outcome of positive probability. On small histograms with ties, a
domain no larger than k̄, and neighbours whose limited domains differ.
"""

import mpmath
import pytest

import mechanisms as M
from dpaudit.exact import output_law
from mechanisms import BOTTOM, PAD

HISTOGRAMS = [
    [5, 3, 3, 1, 0],
    [4, 3, 3, 2, 0],  # a neighbour of the first whose top 3 differs
    [2, 2, 2, 2, 2],
    [7, 0, 1],
    [1, 0],
    [9, 6, 6, 6, 2, 1],
]

MECHANISMS = [
    M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3),
    M.LimitDomain(k=1, kbar=2, epsilon=0.5, delta=1e-2, max_items=1),
    M.StrictLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3),
    M.LimitDomainOptimizedKbar(k=1, kbar_max=3, epsilon=1.0, delta=1e-3),
    M.LaplaceLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3, max_items=2),
    M.StabilityRelease(k=2, epsilon=1.0, delta=1e-3),
    M.TopStable(k=1, kbar=3, epsilon=1.0, delta=1e-3),
    M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3, epsilon_em=1.0),
    M.FixedThreshold(kbar=3, epsilon=1.0, delta=1e-3),
]


def _items_with_positive_probability(law):
    items = set()
    for outcome, probability in law.items():
        if probability > 0:
            items.update(i for i in outcome if i not in (BOTTOM, PAD))
    return items


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: repr(m)[:60])
@pytest.mark.parametrize("counts", HISTOGRAMS, ids=str)
def test_declared_support_is_the_exact_support(mechanism, counts):
    assert isinstance(mechanism, M.DeclaresOutputSupport)
    declared = mechanism.output_support(counts)
    assert all(isinstance(item, int) for item in declared)
    law = output_law(mechanism, counts)
    outside = {
        outcome: p
        for outcome, p in law.items()
        if any(i not in declared for i in outcome if i not in (BOTTOM, PAD))
    }
    # Structural zeros: exactly 0, not small.
    assert all(p == 0 for p in outside.values()), outside
    assert _items_with_positive_probability(law) == declared
    assert mpmath.fsum(law.values()) == pytest.approx(1.0, abs=1e-20)


def test_restricted_gumbel_support_is_its_restricted_domain():
    mechanism = M.RestrictedGumbel(k=1, kbar=2, epsilon=1.0, delta=0.0, epsilon_r=1.0, delta_r=1e-3)
    for counts in ([5, 3, 3, 1], [2, 2, 2], [4, 0]):
        law = output_law(mechanism, counts)
        assert _items_with_positive_probability(law) == mechanism.output_support(counts)


def test_full_domain_mechanisms_do_not_declare_a_support():
    # No structural zeros: an exponential mechanism can output every item.
    assert not isinstance(M.GumbelTopK(k=2, epsilon=1.0), M.DeclaresOutputSupport)
