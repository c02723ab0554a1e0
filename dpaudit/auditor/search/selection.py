"""Selection: the events to confirm on each kept pair, chosen on pre-confirmation samples.

Per pair, the best events by the bounds they predict
([`screening.score_pairs`][dpaudit.auditor.search.screening.score_pairs]) on ε and on δ, or on
the power to resolve ε when the claim has δ = 0.
"""

from __future__ import annotations

import math

from ..bounds.statistics import detectable_epsilon
from ..interfaces import ChosenEvent
from .screening import score_pairs

__all__ = ["POWER_CANDIDATES", "SELECT_CAUTION", "choose_events"]

#: One-sided level of the cautious frequencies that rank a value release's events.
SELECT_CAUTION = 0.1

#: Events per pair and direction whose detectable ε ``_by_power`` computes (the likeliest).
POWER_CANDIDATES = 12


def _by_power(cands, n_target, alpha_each, claim, suspects_first=False):
    """``cands`` best first by the detectable ε they would give on ``n_target`` samples.

    Under a claim with δ = 0 an event whose ``Q`` is 0 is an ε violation, which the ε
    ranking finds; the pick left for δ gives the audit its power instead. On a correct
    mechanism the events nearest the claim are rare, and a true ε of 1.25 times the claim
    on them is beyond reach; a likely event (``Q`` of a few tens of percent) resolves it
    ([`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon]). Only the
    ``POWER_CANDIDATES`` likeliest events of each direction are bounded, the rest follow in the δ
    order. ``suspects_first``: an event whose predicted δ bound at the claimed ε is positive (a
    δ violation in view) comes before every event ranked by power.
    """
    likely = sorted((c for c in cands if c[4] > 0 and c[5] > 0), key=lambda c: -min(c[4], c[5]))
    heads: dict = {}
    for c in likely:
        if len(heads.setdefault(c[2], [])) < POWER_CANDIDATES:
            heads[c[2]].append(c)
    power = {
        id(c): detectable_epsilon(
            round(c[5] * n_target), n_target, n_target, alpha_each, claim.epsilon, claim.delta
        )
        for group in heads.values()
        for c in group
    }

    def rank(c):
        suspect = (-c[1],) if suspects_first else ()
        return (*suspect, power.get(id(c), math.inf), -c[1], c[4] <= 0, c[5], -c[4], -c[0])

    return sorted(cands, key=rank)


def choose_events(
    kept, pooled, n_target, alpha_each, claim, events_per_pair, encoder=None, *, chase_delta=True
):
    """The events to confirm: ``[ChosenEvent(pair, pair oriented P -> Q, event), ...]``.

    Per kept pair, the best events by predicted ε bound at the claimed δ, then by
    predicted δ bound at the claimed ε, in both directions, on the pooled
    pre-confirmation samples ``pooled[histogram] = (Counter, n)``. Among events whose
    predicted δ bounds tie (all 0 on a correct mechanism), the δ pick is the one with
    the smallest ``Q̂`` and then the largest ``P̂``: an event near ``Q = 0`` is where
    the audit can resolve the smallest δ
    ([`statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta]). Under a claim
    with δ = 0 that pick is the event with the smallest predicted detectable ε (``_by_power``),
    and so it is when ``chase_delta`` is False (δ is not to be resolved by sampling: a pass on ε
    alone is accepted, or the grey-box stage resolved it), after any event whose predicted δ
    bound is positive. The rarest events, which resolve the smallest δ, cannot end with ε power
    (one outcome of probability 5e-5 on the README's default audit): where δ needs no resolving,
    their slot goes to the event that gives the audit its power.
    """
    chosen = []
    # A value release's candidates include hundreds of small learned regions: ranked by
    # plug-in frequencies, one seen a few tens of times wins on its noise (SELECT_CAUTION).
    caution = None if encoder is None else SELECT_CAUTION
    scored = score_pairs(kept, pooled, n_target, alpha_each, claim, encoder, caution=caution)
    for pair, cands in zip(kept, scored):
        picks: list = []
        by_eps = sorted(cands, key=lambda c: (-c[0], -c[1]))
        if float(claim.delta) > 0 and chase_delta:
            by_delta = sorted(cands, key=lambda c: (-c[1], c[4] <= 0, c[5], -c[4], -c[0]))
        else:
            suspects = float(claim.delta) > 0
            by_delta = _by_power(cands, n_target, alpha_each, claim, suspects_first=suspects)
        n_eps = max(1, events_per_pair - 1)
        for c in by_eps[:n_eps] + by_delta[: events_per_pair - n_eps]:
            if (c[2], c[3]) not in [(p[2], p[3]) for p in picks]:
                picks.append(c)
        for c in by_eps[n_eps:]:
            if len(picks) >= events_per_pair:
                break
            if (c[2], c[3]) not in [(p[2], p[3]) for p in picks]:
                picks.append(c)
        for c in picks:
            oriented = pair if c[2] == 0 else pair.swapped()
            chosen.append(ChosenEvent(pair, oriented, c[3]))
    return chosen
