"""What a second reviewer needs to re-check an audit: mechanism spec, relation, versions.

The spec, relation and version records themselves are ``dpaudit.provenance`` (shared with
``verify``); this module assembles them into an audit's evidence block and rerun options.
"""

from __future__ import annotations

from datetime import UTC, datetime

from dpaudit.provenance import mechanism_spec, relation_to_dict, versions

__all__ = ["audit_evidence", "evidence_record", "rerun_options"]


def rerun_options(
    plan_options,
    power_factor,
    claim,
    declared,
    neighbours,
    width,
    values,
    batched,
    name,
    epsilon_only=False,
    black_box=False,
) -> dict:
    """The options of [`dpaudit.audit`][dpaudit.auditor.audit] that fix its result, as JSON (``evidence.options``).

    ``plan_options`` are the sampling options
    ([`options.AuditOptions.plan_fields`][dpaudit.auditor.planning.options.AuditOptions.plan_fields]); the
    rest are what the runner takes besides them: the claim audited when it is not the mechanism's
    own (``claim``, with its relation, and ``claim_profile`` when it is a curve), the relation given
    by ``neighbours=``, and how a plain callable was wrapped (``width``, ``values``, ``batched``,
    ``name``), whether an ε-only pass was accepted (``epsilon_only``), and whether the mechanism
    was sampled as a black box only (``black_box``).
    """
    from mechanisms.claims import ProfileClaim
    from mechanisms.profiles import profile_to_dict

    # A curve claim given to the audit is recorded whole, so that recheck tests the curve.
    curve = (
        {"claim_profile": profile_to_dict(declared.profile)}
        if claim is not None and isinstance(declared, ProfileClaim)
        else {}
    )
    return dict(
        plan_options,
        **curve,
        power_factor=float(power_factor),
        epsilon_only=bool(epsilon_only),
        black_box=bool(black_box),
        claim=None if claim is None else [float(declared.epsilon), float(declared.delta)],
        claim_relation=None if claim is None else relation_to_dict(declared.neighbours),
        neighbours=None if neighbours is None else relation_to_dict(neighbours),
        width=None if width is None else int(width),
        values=int(values or 0),
        batched=bool(batched),
        name=name,
    )


def evidence_record(relation, seed, spec, engine: str, extra=None) -> dict:
    """The evidence block of an [`AuditResult`][dpaudit.auditor.AuditResult]: relation, seed, spec, versions, date."""
    evidence = {
        "relation": relation_to_dict(relation),
        "seed": seed,
        "mechanism_spec": spec,
        "versions": versions(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "engine": engine,
    }
    evidence.update(extra or {})
    return evidence


def audit_evidence(mechanism, relation, seed, executor, extra=None) -> dict:
    """The evidence block of a live audit of ``mechanism`` drawn by ``executor``."""
    engine = getattr(executor, "description", type(executor).__name__)
    return evidence_record(relation, seed, mechanism_spec(mechanism), engine, extra)
