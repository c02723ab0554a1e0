"""Refine: spend the rest of a budget on one fresh, full-α estimate of the audit's witness.

DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box Discovery of
Differential Privacy Violations using Classifiers", IEEE S&P 2021, Sec. V) builds its
attack on one set of samples and estimates its final ε lower bound on fresh ones. With
``refine=True`` an audit does the same: the usual audit on a first share of the budget
([`first_share`][dpaudit.auditor.run.refine.first_share]) only *chooses* the witness — one event on one
pair ([`choose_witness`][dpaudit.auditor.run.refine.choose_witness]) — and the rest of the budget draws
fresh samples of that pair on its own seed streams (phase ``refine`` of ``plan.PHASES``), on which
the one event is bounded at the full ``alpha`` (two one-sided Clopper–Pearson intervals at
``alpha / 2`` each). The event is fixed before the data it is bounded on (sample
splitting), so no multiplicity correction is due, and the first phase's own bounds are
not counted in the verdict (that would be a second test at ``alpha``): the verdict, the
bounds and the power of a refined audit are those of the refined event alone
([`refined_witness`][dpaudit.auditor.run.refine.refined_witness]). The first phase's summary stays in
the evidence (``evidence["refine"]``) to show what chose the witness.

So with refine on: VIOLATION means the refined event's bounds exceed the claim;
PASSED that they do not, the event tells its two histograms apart, and *on that
event* a true ε above ``power_factor ×`` the claim (and a true δ above ``power_factor ×``
the claimed δ) would have been flagged with probability 0.9; INCONCLUSIVE otherwise.
Refining trades breadth for depth: a pass speaks for one event, where the plain audit's
speaks for all its confirmed events.

Mechanisms that release real values are refused (their events read an encoder fitted
on the first phase's samples per pair; refine them by auditing without ``refine``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..bounds.statistics import (
    detectable_delta,
    detectable_epsilon,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)
from ..confirm.confirmation import summarise
from ..confirm.focus import nearness
from ..planning.plan import MIN_PER_HISTOGRAM
from ..results.witness import Witness
from ..values.outcome_events import events_hits

__all__ = [
    "REFINE_PHASE",
    "RefinePlan",
    "choose_witness",
    "first_share",
    "phase_summary",
    "refine_plan",
    "refined_witness",
]

#: The plan phase (``plan.PHASES``) of the refined draw.
REFINE_PHASE = "refine"


def first_share(samples: int, default: int) -> int:
    """Samples of the first phase, which chooses the witness: ``min(samples // 2,
    max(default, samples // 3))`` — half of a budget up to twice the default, the default
    up to three times it, a third beyond.

    The refined bound falls short of the chosen event's true ε by about ``c / √n`` for
    ``n`` refined samples per side, so moving budget from the refined draw to the choice
    costs little: a third instead of a sixth of ``3e8`` widens the gap by 12 %
    (0.0030 to 0.0034 on Lee & Clifton's sparse vector), while the first phase's pair
    search and screening grow with their budget and find better pairs. Measured on that
    case (seed 1): a first phase of 5e7 keeps pairs whose best event has exact
    ln(P/Q) = 0.1476, one of 1e8 keeps two of 0.1734 and 0.1722 (the worst pairs known).
    """
    return min(int(samples) // 2, max(int(default), int(samples) // 3))


@dataclass(frozen=True)
class RefinePlan:
    """The two phases of a refined audit: the first phase's budget and the whole one."""

    samples: int
    first: int

    def per_side(self, spent: int) -> int:
        """Samples per histogram of the refined draw, once the first phase has ``spent``."""
        return max(int(self.samples) - int(spent), 0) // 2


def refine_plan(samples: int, default: int, first_minimum: int) -> RefinePlan:
    """The refined audit's plan, or a ValueError naming ``samples``/``refine`` and the fix.

    ``first_minimum`` is the smallest budget a valid first phase needs
    ([`plan.AuditPlan.minimum_samples`][dpaudit.auditor.planning.plan.AuditPlan.minimum_samples]); the
    refined draw needs at least ``plan.MIN_PER_HISTOGRAM`` samples per side on top of it.
    """
    first = first_share(samples, default)
    need = max(2 * int(first_minimum), int(first_minimum) + 2 * MIN_PER_HISTOGRAM)
    if first < first_minimum or int(samples) - first < 2 * MIN_PER_HISTOGRAM:
        raise ValueError(
            f"samples={int(samples):,} with refine=True: the first phase gets {first:,}, "
            f"below the {int(first_minimum):,} a valid audit needs, and the refined draw the "
            f"rest; raise samples to at least {need:,}, or drop refine"
        )
    return RefinePlan(int(samples), first)


def _predicted(w: Witness, per_side: int, alpha: float, claim) -> tuple[float, float]:
    """``(ε bound, δ bound)`` the refined draw would give if the truth were ``w``'s
    estimates moved one standard error toward each other (``P̂ − se``, ``Q̂ + se``): a
    lucky estimate on few samples does not outrank a steady one on many."""
    p = max(w.p_hat - math.sqrt(w.p_hat * (1 - w.p_hat) / max(w.samples_p, 1)), 0.0)
    q = min(w.q_hat + math.sqrt(max(w.q_hat, 1 / max(w.samples_q, 1)) / max(w.samples_q, 1)), 1.0)
    _, _, eps_b, delta_b = event_bounds(
        round(p * per_side),
        per_side,
        round(q * per_side),
        per_side,
        alpha / 2,
        claim.epsilon,
        claim.delta,
    )
    return float(eps_b), float(delta_b)


def choose_witness(witnesses, claim, per_side: int, alpha: float) -> Witness | None:
    """The witness whose refined bound promises to go furthest toward (or beyond) the claim.

    Each witness's refined bound is predicted at ``per_side`` samples and the full level
    (``_predicted``). For an ε-only claim (δ = 0) the predicted ε bound ranks them;
    for δ > 0 the predicted hockey-stick bound ``P − e^ε Q`` at the claimed ε (its δ
    lower bound) over the claimed δ, or the ε bound over the claimed ε where that is
    larger (both exceed 1 exactly when the event violates the claim). Ties (all 0, as on
    a mechanism whose events barely move) go to
    [`focus.nearness`][dpaudit.auditor.confirm.focus.nearness] and then the smallest
    detectable ε. Only the first phase's tallies are read.
    """
    eps, delta = float(claim.epsilon), float(claim.delta)

    def score(w: Witness):
        eps_b, delta_b = _predicted(w, per_side, alpha, claim)
        reach = eps_b / max(eps, 1e-12)
        if delta > 0:
            reach = max(reach, delta_b / delta)
        return (reach, nearness([w], claim, assured=True), -w.detectable_epsilon)

    return max(witnesses, key=score, default=None)


def refined_witness(chosen: Witness, tallies: dict, alpha: float, claim) -> Witness:
    """``chosen``'s event bounded on the fresh ``tallies[histogram] = (Counter, n)`` at the
    full ``alpha`` (each one-sided interval at ``alpha / 2``)."""
    counter_p, n_p = tallies[chosen.counts]
    counter_q, n_q = tallies[chosen.counts2]
    hits_p = int(events_hits([chosen.event], counter_p)[0])
    hits_q = int(events_hits([chosen.event], counter_q)[0])
    level = float(alpha) / 2
    p_low, q_high, eps_b, delta_b = event_bounds(
        hits_p, n_p, hits_q, n_q, level, claim.epsilon, claim.delta
    )
    return Witness(
        chosen.counts,
        chosen.counts2,
        chosen.event,
        hits_p,
        int(n_p),
        hits_q,
        int(n_q),
        float(p_low),
        float(q_high),
        float(eps_b),
        float(delta_b),
        chosen.family,
        float(detectable_epsilon(hits_q, n_p, n_q, level, claim.epsilon, claim.delta)),
        float(detectable_delta(hits_q, n_p, n_q, level, claim.epsilon, claim.delta)),
        float(one_sided_lower(hits_q, n_q, level)),
        float(one_sided_upper(hits_p, n_p, level)),
    )


def phase_summary(witnesses, claim, samples: int, looks, chosen: Witness | None) -> dict:
    """The first phase in the evidence: its headline, its samples, the witness it chose
    among its confirmed ones (all kept, for a reader to weigh the choice)."""
    summary = summarise(witnesses, claim)
    record = {
        "samples": int(samples),
        "events_confirmed": len(witnesses),
        "epsilon_lower": float(summary["epsilon_lower"]),
        "delta_lower": float(summary["delta_lower"]),
        "violation": bool(summary["violation"]),
        "chosen": None if chosen is None else chosen.to_dict(),
        "witnesses": [w.to_dict() for w in witnesses],
    }
    if looks is not None:
        record["confirmation_looks"] = looks
    return record


def first_phase(options, mech, relation, default: int):
    """``(options of the first phase, RefinePlan)`` of a refined audit, or a ValueError.

    The first phase is the audit as usual on [`first_share`][dpaudit.auditor.run.refine.first_share] of
    ``options.samples`` (same seed streams, ``refine`` off); a release of real values is refused.
    """
    import dataclasses

    from ..values import value_width_of
    from .budgeting import minimum_budget

    if value_width_of(mech):
        raise ValueError(
            "refine=True: this mechanism releases real values, whose events read an encoder "
            "fitted per pair on the first phase's samples; refining them is not supported, "
            "audit without refine (--refine) and raise samples instead"
        )
    plan = refine_plan(options.samples, default, 0)
    first = dataclasses.replace(options, samples=max(plan.first, 1000), refine=False)
    # The first phase is an audit of its own: at least AuditPlan's 1000 samples.
    minimum = max(minimum_budget(first, mech, relation), 1000)
    plan = refine_plan(options.samples, default, minimum)
    return dataclasses.replace(options, samples=plan.first, refine=False), plan


def refine_findings(source, findings, claim, plan: RefinePlan, alpha: float):
    """``(findings, record)``: the first phase's ``findings`` with its witnesses replaced by
    the chosen one bounded on a fresh draw (round 0 of phase ``refine``, every sample the
    first phase left), and the first phase's summary for the evidence."""
    from dataclasses import replace

    spent = source.samples
    per_side = plan.per_side(spent)
    chosen = choose_witness(findings.witnesses, claim, per_side, alpha)
    record = phase_summary(findings.witnesses, claim, spent, findings.looks, chosen)
    record["samples_per_side"] = per_side
    if chosen is None:
        return replace(findings, witnesses=(), looks=None), record
    tallies = source.draw(REFINE_PHASE, 0, [chosen.counts, chosen.counts2], per_side)
    refined = refined_witness(chosen, tallies, alpha, claim)
    return replace(findings, witnesses=(refined,), looks=None), record
