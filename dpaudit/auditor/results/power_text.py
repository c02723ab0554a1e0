"""What a result's power covers and why confirmation stopped, in words.

Sentences shared by the explanation ([`explanation`][dpaudit.auditor.results.explanation]), the
text summary and the HTML table ([`result_text`][dpaudit.auditor.results.result_text]), and the
report.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .grey_text import grey_delta_record

if TYPE_CHECKING:
    from .result import AuditResult

__all__ = ["events_text", "futility_text", "needed_text", "power_sentence"]


def events_text(indices) -> str:
    """``witnesses[0, 2]``: the confirmed events by their index in the result."""
    return f"witnesses[{', '.join(str(i) for i in indices)}]"


def power_sentence(result: AuditResult) -> str:
    """What a pass covers, event by event, in the words of
    [`AuditResult.event_power`][dpaudit.auditor.results.result.AuditResult.event_power]: the text, the
    HTML report and ``assert_private`` all use this sentence."""
    chance = f"{result.detection_probability:.0%}"
    labels = result.event_power
    of = {kind: [i for i, label in enumerate(labels) if label == kind] for kind in set(labels)}
    parts = []
    if of.get("epsilon"):
        parts.append(
            f"at every Q in the event's confidence interval it would have flagged, with "
            f"probability {chance}, a true ε of {result.detectable_epsilon:.3g} or more "
            f"(<= {result.power_factor:g} × the claim) on {events_text(of['epsilon'])}"
        )
    delta_events = of.get("delta", [])
    if delta_events:
        worst = max(result.witnesses[i].detectable_delta for i in delta_events)
        parts.append(
            f"a true δ of {worst:.3g} or more at ε (<= {result.power_factor:g} × the claimed δ) "
            f"on {events_text(delta_events)}"
        )
    if of.get("bounded"):
        parts.append(
            f"no mechanism can carry a true ε above {result.power_factor:g} × the claim on "
            f"{events_text(of['bounded'])} (Q is too large there)"
        )
    if of.get("below"):
        parts.append(
            f"the event's own confidence bounds put its ε at most {result.power_factor:g} × the "
            f"claim on {events_text(of['below'])}"
        )
    if of.get("left"):
        parts.append(
            f"not covered: {events_text(of['left'])}, whose pairs confirmation left at an earlier "
            "look for pairs nearer the claim (fewer samples), without power or bounds there"
        )
    if (delta := _delta_part(result, of, delta_events)) is not None:
        parts.append(delta)
    return "; ".join(parts)


def _delta_part(result: AuditResult, of: dict, delta_events: list) -> str | None:
    """The part of ``power_sentence`` on the δ the audit resolves, when not on δ-powered events."""
    if result.claim_delta > 0 and not result.delta_resolved:
        return (
            f"ε only, as asked: it could resolve a δ of {result.detectable_delta:.3g}, "
            f"not the claimed {result.claim_delta:.3g}"
        )
    grey = grey_delta_record(result)
    if grey is not None and float(grey["detectable_delta"]) <= min(
        (w.detectable_delta for w in result.witnesses), default=math.inf
    ):
        return (
            f"a true δ of {result.detectable_delta:.3g} or more at ε on the grey-box pair "
            "(evidence.greybox.delta)"
        )
    if (
        result.claim_delta > 0
        and not delta_events
        and len(of.get("left", [])) < len(result.witnesses)
    ):
        # The headline detectable δ is the smallest over the covered events: name one of them.
        left = set(of.get("left", []))
        covered = [i for i in range(len(result.witnesses)) if i not in left]
        best = min(covered, key=lambda i: result.witnesses[i].detectable_delta)
        return f"a true δ of {result.detectable_delta:.3g} or more at ε on {events_text([best])}"
    return None


def needed_text(result: AuditResult) -> str:
    """The budget power needs, in words ([`result.AuditResult.samples_for_power`][dpaudit.auditor.results.result.AuditResult.samples_for_power])."""
    needed = result.samples_for_power
    return f"roughly {needed:.2g} samples" if math.isfinite(needed) else "far more samples"


def futility_text(result: AuditResult) -> str | None:
    """Where and why confirmation stopped for futility ([`futility`][dpaudit.auditor.confirm.futility]), or None."""
    record = result.futility
    if record is None:
        return None
    looks = len(((result.evidence or {}).get("confirmation_looks") or {}).get("sizes", []))
    return (
        f"for futility after look {int(record['look']) + 1} of {looks}: the looks ahead "
        f"could flag no event going on (probability <= {record['flag_chance']:g} even at its "
        f"confidence limits), and even the last look would have left {_LACKING[record['lacking']]}"
    )


# What a pass would still lack, as futility records it (futility.Futility.lacking).
_LACKING = {
    "epsilon": "an event with neither ε power nor bounds below the power factor × the claim",
    "delta": "δ short of power",
    "separation": "no event telling its two histograms apart",
}
