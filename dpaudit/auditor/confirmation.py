"""Confirmation: bound the chosen events on fresh samples; witnesses and the audit's power.

The tester role of DESIGN.md's auditor, second half. Every chosen event gets one-sided
Clopper–Pearson intervals at ``alpha_each`` on samples drawn after it was chosen, so all
bounds hold together with probability ``>= 1 − alpha`` (Bonferroni over the events,
both sides of each). Each witness also records whether it separates its two histograms
and the smallest true ε and δ it would have flagged with probability 0.9
(:func:`.statistics.detectable_epsilon`, :func:`.statistics.detectable_delta`).
"""

from __future__ import annotations

import math

from .events import events_hits
from .result import Witness
from .statistics import detectable_delta, detectable_epsilon, event_bounds

__all__ = ["confirm_events", "confirm_sequentially", "summarise"]


def confirm_events(chosen, samples, alpha_each, claim) -> list[Witness]:
    """Witnesses of the ``chosen`` events on ``samples[histogram] = (Counter, n)``."""
    witnesses = []
    for pair, oriented, event in chosen:
        counter_p, n_p = samples[oriented.counts]
        counter_q, n_q = samples[oriented.counts2]
        hits_p = int(events_hits([event], counter_p)[0])
        hits_q = int(events_hits([event], counter_q)[0])
        p_low, q_high, eps_b, delta_b = event_bounds(
            hits_p, n_p, hits_q, n_q, alpha_each, claim.epsilon, claim.delta
        )
        power = detectable_epsilon(hits_q, n_p, n_q, alpha_each, claim.epsilon, claim.delta)
        power_delta = detectable_delta(hits_q, n_p, n_q, alpha_each, claim.epsilon, claim.delta)
        witnesses.append(
            Witness(
                oriented.counts,
                oriented.counts2,
                event,
                hits_p,
                n_p,
                hits_q,
                n_q,
                float(p_low),
                float(q_high),
                float(eps_b),
                float(delta_b),
                pair.family,
                float(power),
                float(power_delta),
            )
        )
    return witnesses


def confirm_sequentially(chosen, draw, schedule, alpha_each, claim, enough):
    """Witnesses at the first look of ``schedule`` where ``enough(witnesses)``, or the last.

    ``draw(look, size) -> samples[histogram] = (Counter, n)`` adds ``size`` fresh samples per
    histogram and returns the cumulative tallies. Look ``j`` bounds every event at
    ``schedule.alpha_at(alpha_each, j)`` (α-spending, :mod:`.sequential`), so the bounds
    read at the look where the data made the audit stop hold with probability
    ``>= 1 − 2 alpha_each`` per event, whatever ``enough`` decides. Decisions depend only
    on the tallies, so the stopping look is the same for every executor.

    Returns ``(witnesses, look)``.
    """
    previous = 0
    witnesses: list[Witness] = []
    for look, size in enumerate(schedule.sizes()):
        samples = draw(look, size - previous)
        previous = size
        witnesses = confirm_events(chosen, samples, schedule.alpha_at(alpha_each, look), claim)
        if enough(witnesses):
            return witnesses, look
    return witnesses, schedule.looks - 1


def summarise(witnesses, claim) -> dict:
    """Headline numbers: the best ε and δ witnesses, violation, separation, detectable ε and δ."""
    eps_w = max(witnesses, key=lambda w: (w.epsilon_lower, w.delta_lower), default=None)
    delta_w = max(witnesses, key=lambda w: (w.delta_lower, w.epsilon_lower), default=None)
    # (ε-bound > ε) and (δ-bound > δ) are the same condition on one event
    # (P_low − δ > e^ε Q_high); testing both guards against rounding.
    violation = any(
        w.delta_lower > claim.delta and w.epsilon_lower > claim.epsilon for w in witnesses
    )
    return {
        "epsilon_witness": eps_w,
        "delta_witness": delta_w,
        "epsilon_lower": eps_w.epsilon_lower if eps_w else 0.0,
        "delta_lower": delta_w.delta_lower if delta_w else 0.0,
        "violation": bool(violation),
        "separated": any(w.separates for w in witnesses),
        "detectable_epsilon": min((w.detectable_epsilon for w in witnesses), default=math.inf),
        "detectable_delta": min((w.detectable_delta for w in witnesses), default=math.inf),
    }
