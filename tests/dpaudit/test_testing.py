"""dpaudit.testing: assert_private and the hypothesis strategies."""

import pytest
from hypothesis import given, settings

from dpaudit.catalog import EMNonMonotoneClaimsEpsilon
from dpaudit.neighbours import is_neighbour
from dpaudit.testing import (
    AuditInconclusive,
    PrivacyViolation,
    assert_private,
    histograms,
    neighbouring_pairs,
)
from mechanisms import AddRemoveUser, BoundedChange, Substitute, validate_counts
from mechanisms.exponential import GumbelTopK


def test_assert_private_passes_correct_mechanism():
    # False failure <= alpha = 1e-3 by the auditor's guarantee.
    result = assert_private(
        GumbelTopK(k=2, epsilon=1.0), samples=100_000, seed=0, counts=[2, 1, 1, 0]
    )
    assert result.verdict == "passed"


def test_assert_private_fails_broken_mechanism_with_result():
    with pytest.raises(PrivacyViolation) as info:
        assert_private(
            EMNonMonotoneClaimsEpsilon(epsilon=1.0),
            samples=200_000,
            seed=0,
            pairs=[((0, 3, 3, 3, 3), (1, 2, 2, 2, 2))],
        )
    assert info.value.result.violation and "VIOLATION" in str(info.value)


def test_assert_private_callable_that_never_looks_at_the_data():
    # A uniform pick ignores the counts: private, but no audit can see it move, so the
    # audit is inconclusive and a test must not pass silently unless told to.
    def uniform(counts, rng):
        return (int(rng.integers(len(counts))),)

    with pytest.raises(AuditInconclusive) as info:
        assert_private(uniform, claim=(0.5, 0.0), width=1, samples=20_000, domain_size=3)
    assert info.value.result.verdict == "inconclusive"
    result = assert_private(
        uniform, claim=(0.5, 0.0), width=1, samples=20_000, domain_size=3, allow_inconclusive=True
    )
    assert not result.violation


@settings(max_examples=100, deadline=None)
@given(histograms(max_items=6, max_count=4))
def test_histograms_are_valid(counts):
    assert validate_counts(counts).size == counts.size


@pytest.mark.parametrize(
    "relation",
    [
        AddRemoveUser(),
        AddRemoveUser(2),
        BoundedChange(1),
        BoundedChange(2),
        Substitute(1),
        Substitute(2),
        Substitute(None),
    ],
)
def test_neighbouring_pairs_are_neighbours(relation):
    @settings(max_examples=60, deadline=None)
    @given(neighbouring_pairs(relation, max_items=6, max_count=4))
    def check(pair):
        assert is_neighbour(pair[0], pair[1], relation)

    check()


def test_neighbouring_pairs_rejects_bad_relation():
    with pytest.raises(ValueError):
        neighbouring_pairs("any")
