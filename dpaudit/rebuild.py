"""The audited mechanism of a result file, rebuilt as the audit built it (for recheck and rerun).

The mechanism comes from what the audit recorded
([`dpaudit.auditor.results.evidence`][dpaudit.auditor.results.evidence]'s spec of a built-in or catalog mechanism,
``dpaudit.user_source``'s record of the user's own code) or from the caller; the claim from the
rebuilt mechanism (or from the claim the audit was explicitly told to audit), never from the file's
``claim`` block.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["CannotRecheck", "audited_mechanism"]


class CannotRecheck(Exception):
    """The audited mechanism cannot be rebuilt, or raised when run (``dpaudit recheck``: exit 4)."""


def _rebuilt(evidence: dict, allow_command: bool):
    """The mechanism of ``evidence``: from its source (``module:attr`` or ``--command``), else its
    spec; [`CannotRecheck`][dpaudit.rebuild.CannotRecheck] when neither can be rebuilt."""
    from dpaudit.provenance import rebuild_mechanism

    spec = evidence.get("mechanism_spec")
    source = evidence.get("mechanism_source")
    child = str((spec or {}).get("class", "")).endswith(":SubprocessMechanism")
    try:
        if source is not None:
            from dpaudit.user_source import rebuild_user_mechanism

            return rebuild_user_mechanism(source, allow_command=allow_command)
        if child and not allow_command:
            raise CannotRecheck(
                "the audit ran a child process whose command the result file names; a "
                "recheck runs it again only when allowed (--allow-command, "
                "allow_command=True)"
            )
        if spec is None:
            raise CannotRecheck(
                "the result records no rebuildable mechanism (a black box from Python?): "
                "recheck it from Python with recheck(result, mechanism=...)"
            )
        mechanism = rebuild_mechanism(spec)
        if child:  # the spec keeps its claim as a plain tuple
            from dpaudit.auditor.sources.blackbox import make_claim

            mechanism = dataclasses.replace(
                mechanism, declared_claim=make_claim(mechanism.declared_claim)
            )
        return mechanism
    except (ValueError, TypeError, ImportError, AttributeError) as error:
        raise CannotRecheck(f"cannot rebuild the audited mechanism: {error}") from None


def _audited_claim(data: dict, options: dict, mechanism, notes: list) -> Any:
    """The claim the audit was told to audit (``evidence.options``), the file's own for a plain
    callable (said in ``notes``), else None: the mechanism's own."""
    from dpaudit.provenance import relation_from_dict

    if options.get("claim_profile") is not None:
        from mechanisms.claims import PrivacyClaim
        from mechanisms.profiles import profile_from_dict

        return PrivacyClaim.from_profile(
            profile_from_dict(options["claim_profile"]),
            relation_from_dict(options.get("claim_relation") or {"kind": "add-remove"}),
            delta=float(options["claim"][1]),
        )
    if options.get("claim") is not None:
        return (
            *map(float, options["claim"]),
            relation_from_dict(options.get("claim_relation") or {"kind": "add-remove"}),
        )
    if not hasattr(mechanism, "claim"):
        # A plain callable has no claim of its own; only the file can say what was claimed.
        recorded = data["claim"]
        notes.append("a plain callable has no claim of its own: the recorded claim is used")
        return (float(recorded["epsilon"]), float(recorded["delta"]))
    return None


def audited_mechanism(data: dict, mechanism=None, *, allow_command: bool = False):
    """``(mechanism as given to audit, sampler, claim, relation, notes)`` of a result dict.

    The mechanism is ``mechanism`` if given (anything [`dpaudit.audit`][dpaudit.auditor.audit]
    accepts), else rebuilt from ``evidence.mechanism_spec`` (built-in and catalog classes) or
    ``evidence.mechanism_source`` (``module:attr`` or ``--command`` of the CLI,
    ``dpaudit.user_source``). The claim is the mechanism's own, or the one the audit
    was told to audit (``evidence.options.claim``); never the file's ``claim`` block.
    A recorded ``--command`` is run again only with ``allow_command=True``. Raises
    [`CannotRecheck`][dpaudit.rebuild.CannotRecheck] when nothing can be rebuilt.
    """
    from dpaudit.auditor.sources.blackbox import as_auditable
    from dpaudit.provenance import relation_from_dict

    evidence = data.get("evidence") or {}
    options = evidence.get("options") or {}
    notes: list = []
    if mechanism is None:
        mechanism = _rebuilt(evidence, allow_command)
    claim = _audited_claim(data, options, mechanism, notes)
    try:
        target = as_auditable(
            mechanism,
            claim,
            options.get("width"),
            options.get("name"),
            bool(options.get("batched", False)),
            int(options.get("values", 0) or 0),
        )
    except (ValueError, TypeError) as error:
        raise CannotRecheck(f"cannot audit the rebuilt mechanism: {error}") from None
    sampler, declared = target.mechanism, target.claim
    relation = declared.neighbours
    if options.get("neighbours") is not None:
        relation = relation_from_dict(options["neighbours"])
    if options.get("claim") is not None:
        notes.append(
            f"the audit was told to audit the claim ({declared.epsilon:g}, {declared.delta:g})"
            + (
                f" instead of the mechanism's own ({mechanism.claim.epsilon:g}, "
                f"{mechanism.claim.delta:g})"
                if hasattr(mechanism, "claim")
                else ""
            )
        )
    return mechanism, sampler, declared, relation, tuple(notes)
