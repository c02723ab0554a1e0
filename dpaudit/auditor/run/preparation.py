"""The first phase of an audit: the mechanism as the auditor sees it, and the options it is
audited under, with the budget fixed, checked and split for a refined audit."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mechanisms.claims import RELATIONS

from ..greybox.delta_stage import plans_grey_delta
from ..planning.options import DEFAULT_SAMPLES, AuditOptions
from ..sources.blackbox import AuditTarget, as_auditable
from .budgeting import budgeted, check_minimum
from .refine import first_phase
from .request import AuditRequest

__all__ = ["PreparedAudit", "prepare"]


@dataclass(frozen=True)
class PreparedAudit:
    """An audit ready to run: what is audited, under which relation and options."""

    target: AuditTarget
    """The mechanism as the auditor sees it, the claim audited and its name."""
    relation: Any
    """The neighbour relation audited under."""
    options: AuditOptions
    """The options, with the samples a seconds budget buys and the grey-box δ stage's share."""
    first: AuditOptions
    """The options of the first audit (``options`` itself unless it is refined)."""
    refining: Any
    """What a refined audit spends after the first one (None: not refined;
    [`refine.first_phase`][dpaudit.auditor.run.refine.first_phase])."""
    calibration: dict
    """The evidence of a seconds budget's timed pilot (empty for a samples budget)."""


def relation_of(neighbours, declared):
    """The relation audited under: ``neighbours`` if given, else the claim's."""
    relation = neighbours if neighbours is not None else declared.neighbours
    if not isinstance(relation, RELATIONS):
        raise ValueError(
            f"neighbours must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
        )
    return relation


def prepare(request: AuditRequest) -> PreparedAudit:
    """The [`PreparedAudit`][dpaudit.auditor.run.preparation.PreparedAudit] of ``request``,
    refused (naming the argument) before any sampling when it cannot be audited."""
    target = as_auditable(
        request.mechanism,
        request.claim,
        request.width,
        request.name,
        request.batched,
        request.values,
    )
    mechanism = target.mechanism
    request.options.check_design(mechanism)
    options, calibration = budgeted(
        request.budget, mechanism, request.options.for_mechanism(mechanism)
    )
    # The grey-box δ stage holds its share of α from the plan on (greybox.delta_stage).
    grey = plans_grey_delta(mechanism, bool(request.black_box))
    options = dataclasses.replace(options, grey_delta=grey)
    relation = relation_of(request.neighbours, target.claim)
    first, refining = (
        first_phase(options, mechanism, relation, DEFAULT_SAMPLES)
        if options.refine
        else (options, None)
    )
    check_minimum(first, mechanism, relation)
    return PreparedAudit(target, relation, options, first, refining, calibration)
