"""Confirmation: bound the chosen events on fresh samples; witnesses and the audit's power.

The tester role of DESIGN.md's auditor, second half. Every chosen event gets one-sided
Clopper–Pearson intervals at ``alpha_each`` on samples drawn after it was chosen, so all
bounds hold together with probability ``>= 1 − alpha`` (Bonferroni over the events,
both sides of each). Each witness also records whether it separates its two histograms
and the smallest true ε it would have flagged (:func:`.statistics.detectable_epsilon`).
"""

from __future__ import annotations

import math

from .events import events_hits
from .result import Witness
from .statistics import detectable_epsilon, event_bounds

__all__ = ["confirm_events", "summarise"]


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
            )
        )
    return witnesses


def summarise(witnesses, claim) -> dict:
    """Headline numbers: the best ε and δ witnesses, violation, separation, detectable ε."""
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
    }
