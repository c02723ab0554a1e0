"""``results.evidence``: the evidence block and rerun options of an audit, as JSON."""

import json
from datetime import UTC, datetime

from dpaudit.auditor.planning.options import AuditOptions
from dpaudit.auditor.results.evidence import audit_evidence, evidence_record, rerun_options
from dpaudit.auditor.sources.executors import LocalExecutor
from dpaudit.provenance import rebuild_mechanism, relation_from_dict
from mechanisms import AddRemoveUser, BoundedChange, GumbelTopK, PrivacyClaim
from mechanisms.profiles import GaussianDP

MECH = GumbelTopK(k=2, epsilon=0.5)


def _rerun(**given):
    arguments = {
        "plan_options": AuditOptions(samples=1000, seed=2).plan_fields(),
        "power_factor": 1.25,
        "claim": None,
        "declared": MECH.claim,
        "neighbours": None,
        "width": None,
        "values": 0,
        "batched": False,
        "name": None,
    }
    return rerun_options(**(arguments | given))


def test_the_mechanisms_own_claim_records_no_claim():
    options = _rerun()
    assert options["claim"] is None and options["claim_relation"] is None
    assert "claim_profile" not in options
    assert options["samples"] == 1000 and options["seed"] == 2  # the plan's fields are kept
    assert options["power_factor"] == 1.25 and options["epsilon_only"] is False
    assert json.loads(json.dumps(options)) == options


def test_a_given_claim_is_recorded_with_its_relation():
    declared = PrivacyClaim(2.0, 1e-6, BoundedChange(1))
    options = _rerun(claim=(2.0, 1e-6), declared=declared, neighbours=AddRemoveUser(2))
    assert options["claim"] == [2.0, 1e-6]
    assert relation_from_dict(options["claim_relation"]) == BoundedChange(1)
    assert relation_from_dict(options["neighbours"]) == AddRemoveUser(2)


def test_a_given_curve_claim_is_recorded_whole():
    declared = PrivacyClaim.from_profile(GaussianDP(1.0), AddRemoveUser(), epsilon=1.0)
    options = _rerun(claim=declared, declared=declared)
    assert options["claim_profile"] == {"kind": "gdp", "mu": 1.0}
    assert options["claim"] == [1.0, declared.delta]


def test_how_a_callable_was_wrapped_is_recorded_typed():
    options = _rerun(width=3.0, values=None, batched=1, name="f", epsilon_only=1, black_box=1)
    assert options["width"] == 3 and type(options["width"]) is int
    assert options["values"] == 0
    assert (
        options["batched"] is True
        and options["epsilon_only"] is True
        and options["black_box"] is True
    )
    assert options["name"] == "f"


def test_the_evidence_record_holds_what_a_reviewer_needs():
    before = datetime.now(UTC).replace(microsecond=0)
    record = evidence_record(
        AddRemoveUser(3), 7, {"class": "x:Y"}, "local (1 process)", {"extra": 1}
    )
    after = datetime.now(UTC)
    assert relation_from_dict(record["relation"]) == AddRemoveUser(3)
    assert record["seed"] == 7 and record["mechanism_spec"] == {"class": "x:Y"}
    assert record["engine"] == "local (1 process)" and record["extra"] == 1
    assert {"python", "dpaudit", "numpy"} <= set(record["versions"])
    assert before <= datetime.fromisoformat(record["date"]) <= after


def test_extra_entries_override_the_defaults():
    assert evidence_record(AddRemoveUser(), 0, None, "e", {"seed": 9})["seed"] == 9


def test_audit_evidence_records_a_rebuildable_spec_and_the_executors_description():
    executor = LocalExecutor(MECH)
    record = audit_evidence(MECH, MECH.claim.neighbours, 4, executor)
    assert rebuild_mechanism(record["mechanism_spec"]) == MECH
    assert record["engine"] == "local (1 process)"

    class Bare:
        pass

    assert audit_evidence(MECH, MECH.claim.neighbours, 4, Bare())["engine"] == "Bare"
