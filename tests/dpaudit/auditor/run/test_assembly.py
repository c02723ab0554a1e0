"""The assembly: the result's evidence (rerun options, grey-box view) and the AuditResult."""

import dpaudit
from mechanisms import LimitDomain


def test_an_audit_records_what_a_rerun_needs_and_why_the_grey_box_did_not_run():
    mechanism = LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    result = dpaudit.audit(mechanism, samples=300_000, seed=2, black_box=True, evidence={"x": 1})
    options = result.evidence["options"]
    assert options["samples"] == 300_000 and options["seed"] == 2 and options["black_box"]
    assert result.evidence["x"] == 1
    assert "--black-box" in result.evidence["greybox"]["skipped"]
    assert result.samples <= 300_000 and result.seed == 2
    assert result.mechanism == str(mechanism)
