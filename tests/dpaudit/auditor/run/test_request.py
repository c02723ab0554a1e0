"""The request: audit's keywords, by name, in AuditOptions and AuditRequest."""

import inspect

import pytest
from helpers import audit_arguments

from dpaudit.auditor import AuditOptions, audit
from dpaudit.auditor.run.request import AuditRequest


def test_every_keyword_of_audit_lands_in_one_field():
    option_fields = set(AuditOptions.__dataclass_fields__) - {"grey_delta"}
    request_fields = set(AuditRequest.__dataclass_fields__) - {"options"}
    keywords = set(inspect.signature(audit).parameters)
    assert keywords == option_fields | request_fields
    assert not option_fields & request_fields


def test_options_and_budget_are_resolved_and_flags_are_booleans():
    request = AuditRequest.from_arguments(audit_arguments(samples=300_000, seed=5, epsilon_only=1))
    assert request.options.samples == 300_000 and request.options.seed == 5
    assert request.options.epsilon_only is True and request.budget.samples == 300_000
    seconds = AuditRequest.from_arguments(audit_arguments(budget="60s"))
    assert seconds.budget.seconds == 60 and seconds.options.samples == 50_000_000


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="not both"):
        AuditRequest.from_arguments(audit_arguments(samples=10, budget=10))
    with pytest.raises(ValueError, match="workers"):
        AuditRequest.from_arguments(audit_arguments(workers=0))
