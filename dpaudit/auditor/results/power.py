"""What gives an audit its power: each confirmed event's label, and what a pass still lacks.

The one definition of "the audit had power" (the verdicts of
[`result`][dpaudit.auditor.results.result]), shared by
[`AuditResult`][dpaudit.auditor.results.result.AuditResult] and the sequential confirmation's
stopping rules ([`value_looks`][dpaudit.auditor.confirm.value_looks],
[`futility`][dpaudit.auditor.confirm.futility]).
"""

from __future__ import annotations

import math

__all__ = [
    "DEFAULT_POWER_FACTOR",
    "EVENT_POWER_LABELS",
    "delta_within_power",
    "event_power",
    "events_shortfall",
    "power_shortfall",
]


#: A pass needs detectable ε and δ within this factor of the claim.
DEFAULT_POWER_FACTOR = 1.25


def delta_within_power(detectable_delta, claim_delta, power_factor) -> bool:
    """The detectable δ is within ``power_factor`` × the claimed δ, or the claimed δ is 0."""
    return claim_delta <= 0 or detectable_delta <= power_factor * claim_delta


def power_shortfall(
    detectable_epsilon, detectable_delta, claim_epsilon, claim_delta, power_factor, epsilon_only
) -> str | None:
    """``"epsilon"`` or ``"delta"`` when an audit with these detectable values lacks power.

    The one definition of "the audit had power" (module docstring), shared by
    [`AuditResult.verdict`][dpaudit.auditor.results.result.AuditResult.verdict] and the sequential
    confirmation's stopping rule.
    """
    if not detectable_epsilon <= power_factor * claim_epsilon:
        return "epsilon"
    if not epsilon_only and not delta_within_power(detectable_delta, claim_delta, power_factor):
        return "delta"
    return None


def events_shortfall(labels, detectable_delta, claim_delta, power_factor, epsilon_only):
    """``"epsilon"`` or ``"delta"`` when an audit whose events have these
    [`event_power`][dpaudit.auditor.results.power.event_power] ``labels`` lacks power, else None.

    The one definition of "the audit had power" (module docstring), shared by
    [`AuditResult.verdict`][dpaudit.auditor.results.result.AuditResult.verdict] and the sequential
    confirmation's stopping rule: no confirmed event is ``"none"`` (each has ε power, δ power, or
    bounds that exclude a true ε above ``power_factor`` × the claim, or was left at an earlier
    look), some event was confirmed, and the detectable δ is within ``power_factor`` × the claimed
    δ unless ``epsilon_only``.
    """
    if not labels or "none" in labels:
        return "epsilon"
    if not epsilon_only and not delta_within_power(detectable_delta, claim_delta, power_factor):
        return "delta"
    return None


#: The words of [`event_power`][dpaudit.auditor.results.power.event_power], one per confirmed event.
EVENT_POWER_LABELS = ("epsilon", "delta", "bounded", "below", "left", "none")


def event_power(witnesses, claim_epsilon, claim_delta, power_factor) -> tuple[str, ...]:
    """What each confirmed event gives a pass, one word each (``EVENT_POWER_LABELS``).

    * ``"epsilon"`` — at every ``Q`` in the event's interval, a true ε at or above its
      detectable ε (at most ``power_factor`` × the claim, and at most ``ln(1 / q_high)``,
      so some mechanism can carry it) is flagged with probability 0.9;
    * ``"delta"`` — a true δ at the claimed ε at or above its detectable δ (at most
      ``power_factor`` × the claimed δ) is flagged with that probability;
    * ``"bounded"`` — no mechanism can carry a true ε above ``power_factor`` × the claim on
      it: ``ln(1 / q_low) <= power_factor × ε`` (``P <= 1``), so there is nothing to detect;
    * ``"below"`` — the event's own confidence bounds exclude a true ε above ``power_factor`` ×
      the claim on it: ``ln(p_high / q_low) <= power_factor × ε``
      ([`Witness.epsilon_upper`][dpaudit.auditor.results.witness.Witness.epsilon_upper]); a true ratio
      above that is seen this way with probability at most twice the event's level, and a
      rare event whose ratio may be above the claim never is;
    * ``"left"`` — none of the above, and the event was drawn fewer samples than the most drawn
      event: confirmation left its pair at an earlier look for pairs nearer the claim. A pass does
      not cover it (the headline detectable ε and δ are not taken from it), and says so by name;
    * ``"none"`` — none of the others (on an event drawn to the end): the audit cannot pass.

    An event whose pair was left at an earlier look is labelled by what it has at that look
    first: its bounds and detectable values are those of that look, at that look's level, and
    the look's bounds were read for a violation when they were drawn, so "it would have flagged
    a true ε (δ) of X" is as true of it as of an event drawn to the end. Only an event left
    without any of them is ``"left"``.

    Sequential confirmation stops for power only when no event is ``"none"``
    ([`value_looks.LookRules.enough`][dpaudit.auditor.confirm.value_looks.LookRules.enough]), so a
    ``"none"`` at the end means the budget ran out, never that the looks stopped too soon.
    """
    eps_target = power_factor * claim_epsilon
    most = max((w.samples_p + w.samples_q for w in witnesses), default=0)
    labels = []
    for w in witnesses:
        if w.has_epsilon_power and w.detectable_epsilon <= eps_target:
            labels.append("epsilon")
        elif claim_delta > 0 and w.detectable_delta <= power_factor * claim_delta:
            labels.append("delta")
        elif w.q_low > 0 and -math.log(w.q_low) <= eps_target:
            labels.append("bounded")
        elif w.epsilon_upper <= eps_target:
            labels.append("below")
        elif w.samples_p + w.samples_q < most:
            labels.append("left")
        else:
            labels.append("none")
    return tuple(labels)
