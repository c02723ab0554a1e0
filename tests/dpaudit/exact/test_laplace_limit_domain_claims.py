"""LaplaceLimitDomain's two claims, checked exactly (seed 002 §6.1; seed 001 App. E.1).

The default ("proved") claim is ((Δ+1)ε, (1 + e^{(Δ+1)ε}) δ̄); the restated one drops the
factor. No theorem of the seeds proves the restated one; these exhaustive checks are its only
support, and they cover small domains and counts only.
"""

import pytest

import mechanisms as M
from dpaudit.exact import verify

FAMILIES = [  # (k, k̄, ε, δ, Δ, d, max count)
    (2, 2, 1.0, 1e-3, 1, 3, 2),
    (1, 2, 0.5, 0.05, 2, 3, 3),
    (2, 3, 1.0, 0.02, 2, 4, 2),
]


@pytest.mark.parametrize("k, kbar, epsilon, delta, max_items, d, max_count", FAMILIES)
def test_both_claims_hold_and_the_restated_one_is_nearly_used(
    k, kbar, epsilon, delta, max_items, d, max_count
):
    proved = M.LaplaceLimitDomain(k=k, kbar=kbar, epsilon=epsilon, delta=delta, max_items=max_items)
    restated = M.LaplaceLimitDomain(
        k=k, kbar=kbar, epsilon=epsilon, delta=delta, max_items=max_items, claim_basis="restated"
    )
    assert proved.claim.delta > restated.claim.delta
    exact = verify(restated, d=d, max_count=max_count, progress=False)
    assert exact.holds, str(exact)
    # the worst δ at (Δ+1)ε, against each claim
    assert exact.delta_at_epsilon <= restated.claim.delta
    assert exact.delta_at_epsilon <= proved.claim.delta


@pytest.mark.slow
def test_restated_claim_holds_on_d5_counts_le_3():
    # The family checked: k = 2, k̄ = 3, Δ = 1, ε = 1, δ = 1e-3, d = 5, counts <= 3.
    restated = M.LaplaceLimitDomain(
        k=2, kbar=3, epsilon=1.0, delta=1e-3, max_items=1, claim_basis="restated"
    )
    exact = verify(restated, d=5, max_count=3, progress=False)
    # worst exact δ at ε = 2 is 0.00221 = 0.891 δ̄: the restated claim holds with 11 % to spare
    assert exact.holds and exact.delta_at_epsilon <= 0.9 * restated.claim.delta, str(exact)
