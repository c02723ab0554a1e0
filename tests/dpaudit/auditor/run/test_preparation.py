"""The prepared audit: the target, the relation, the budgeted options, refused before sampling."""

import pytest
from helpers import audit_arguments

from dpaudit.auditor.run.preparation import prepare, relation_of
from dpaudit.auditor.run.request import AuditRequest
from mechanisms import AddRemoveUser, LimitDomain, Substitute


def test_a_mechanism_is_prepared_under_its_own_claim_and_relation():
    prepared = prepare(AuditRequest.from_arguments(audit_arguments(samples=400_000)))
    mechanism = prepared.target.mechanism
    assert isinstance(mechanism, LimitDomain) and prepared.target.claim == mechanism.claim
    assert prepared.relation == mechanism.claim.neighbours
    assert prepared.first is prepared.options and prepared.refining is None
    assert prepared.calibration == {}


def test_a_callable_is_wrapped_and_named():
    def coin(counts, rng):
        return (int(rng.random() < 0.5),)

    request = AuditRequest.from_arguments(
        audit_arguments(mechanism=coin, claim=(1.0, 0.0), width=1, samples=400_000)
    )
    prepared = prepare(request)
    assert prepared.target.label == "coin" and prepared.target.mechanism.width == 1


def test_relation_of_prefers_the_given_one_and_refuses_others():
    claim = LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3).claim
    assert relation_of(None, claim) == claim.neighbours
    assert relation_of(Substitute(), claim) == Substitute()
    assert relation_of(AddRemoveUser(), claim) == AddRemoveUser()
    with pytest.raises(ValueError, match="neighbours must be"):
        relation_of("users", claim)


def test_a_budget_too_small_is_refused_with_the_minimum():
    with pytest.raises(ValueError, match="is below the"):
        prepare(AuditRequest.from_arguments(audit_arguments(samples=1_000)))
