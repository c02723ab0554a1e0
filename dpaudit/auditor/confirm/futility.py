"""Futility: stop a sequential confirmation whose remaining looks cannot change its verdict.

Confirmation in looks ([`sequential`][dpaudit.auditor.bounds.sequential]) stops on a confirmed violation or
reached power. A correct mechanism whose claim the budget cannot resolve would otherwise spend
every look to end INCONCLUSIVE anyway. After a look ``j`` (not the last), the
confirmation stops for futility when both hold:

1. power cannot be reached: each event still going on is predicted at the last look's size
   and level with its ``P̂`` and ``Q̂`` unchanged
   ([`predicted_witness`][dpaudit.auditor.confirm.futility.predicted_witness]: its detectable ε and δ,
   the computation of
   [`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon] and
   [`statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta], and its own
   confidence limits), and the pass rule the verdict applies
   ([`power.events_shortfall`][dpaudit.auditor.results.power.events_shortfall] on the events'
   [`power.event_power`][dpaudit.auditor.results.power.event_power] labels, with the user's
   ``epsilon_only``) still finds the audit short: some event would be left with neither power
   nor bounds below ``power_factor ×`` the claim, or δ unresolved, or no event telling its two
   histograms apart (a pass needs one: ``AuditResult.separated``). It must find it short
   whichever pair going on is the one drawn to the end: the focus rule may leave the others at a
   later look, and a pass does not need their events (``"left"``). The verdict can then only be
   VIOLATION or INCONCLUSIVE, and the text names what is short by the rule that decides it;
2. nothing can be confirmed: every event still going on is far from the claim
   ([`far_from_claim`][dpaudit.auditor.confirm.futility.far_from_claim]). Its one-sided Clopper–Pearson
   limits ``p_high`` on ``P`` and ``q_low`` on ``Q`` at the look's own level ``γ_j`` (that of the
   look's bounds) give the most violating truth its tallies allow (``P − e^ε Q`` grows with ``P``
   and falls with ``Q``). The event is far when even that truth leaves ``P − e^ε Q <= δ``, or when
   the looks ahead would flag it at that truth with probability at most
   ``FLAG_CHANCE`` (0.001, [`flag_chance`][dpaudit.auditor.confirm.futility.flag_chance]). A bug whose best
   event sits below the claim by noise has its limits above the claim, by ``z_γ`` standard errors
   (about 3.3 at the default level), and the looks ahead flag such a truth often: it
   goes on.

Why this is conservative: an event's limits are on the wrong side of its truth at look
``j`` with probability at most ``2 γ_j``, at any look at most ``2 Σ_j γ_j = 2
alpha_each`` (union bound). When they are not, the looks dropped would have flagged the
event with probability at most ``FLAG_CHANCE`` (the flag probability grows with
``P`` and falls with ``Q``), and futility stops once. So for each event, the chance that
futility drops looks that would have flagged it is at most ``2 alpha_each +
FLAG_CHANCE`` (0.0066 at the default ``alpha = 0.05`` over 9 events), whatever its truth.

Stopping early only drops looks: every bound read is one of the fixed schedule's at its
α-spending level, and the α of the looks not taken is left unspent, so the bounds hold
with probability ``>= 1 − alpha`` as before (Lan & DeMets, Biometrika 70(3), 1983, eq.
(2.2): the spent α bounds the probability of a wrong bound at any look taken, whatever
the stopping time; here the union bound of [`sequential`][dpaudit.auditor.bounds.sequential]). The rule is
non-binding: the bounds were set without it and do not depend on it. It reads the tallies only, so
it is the same for every executor.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from mechanisms.claims import ProfileClaim

from ..bounds.statistics import (
    detectable_delta,
    detectable_epsilon,
    hits_needed,
    one_sided_lower,
    one_sided_upper,
)
from ..results.power import event_power, events_shortfall
from .curves import curve_exceeded

#: The most probability with which the looks that futility drops could have flagged an event
#: whose truth lies at its confidence limits.
FLAG_CHANCE = 0.001

__all__ = [
    "FLAG_CHANCE",
    "Futility",
    "far_from_claim",
    "flag_chance",
    "futility",
    "predicted_power",
    "predicted_witness",
    "reaches_claim",
]


@dataclass(frozen=True)
class Futility:
    """Why a confirmation stopped for futility (recorded in the result's evidence).

    Parameters
    ----------
    look : the look after which it stopped (0-based).
    lacking : what a pass would still lack at the last look: ``"epsilon"`` or ``"delta"`` (power,
        [`power.events_shortfall`][dpaudit.auditor.results.power.events_shortfall]) or ``"separation"``
        (no event would tell its two histograms apart).
    detectable_epsilon, detectable_delta : the best the audit could reach by the last look.
    level : the one-sided level of the confidence limits judged at that look.
    flag_chance : the most probability with which the looks dropped could have flagged an
        event whose truth lies at those limits (``FLAG_CHANCE``).
    """

    look: int
    lacking: str
    detectable_epsilon: float
    detectable_delta: float
    level: float
    flag_chance: float = FLAG_CHANCE

    def to_dict(self) -> dict:
        def finite(x):
            return float(x) if math.isfinite(x) else None

        return {
            "look": int(self.look),
            "lacking": self.lacking,
            "detectable_epsilon_at_last_look": finite(self.detectable_epsilon),
            "detectable_delta_at_last_look": finite(self.detectable_delta),
            "level": float(self.level),
            "flag_chance": float(self.flag_chance),
        }


def reaches_claim(witness, claim, level: float) -> bool:
    """The event's confidence limits at ``level`` reach the claim: ``p_high − e^ε q_low >= δ``.

    ``p_high`` is the one-sided upper Clopper–Pearson limit on ``P``, ``q_low`` the lower
    one on ``Q``: the most violating values the event's tallies allow (``P − e^ε Q``
    grows with ``P`` and falls with ``Q``). A curve claim is reached also where
    [`curves.curve_exceeded`][dpaudit.auditor.confirm.curves.curve_exceeded] holds at those
    limits.
    """
    p_high, q_low = _limits(witness, level)
    if p_high - math.exp(float(claim.epsilon)) * q_low >= float(claim.delta):
        return True
    return curve_exceeded(claim, p_high, q_low)


def _limits(witness, level):
    return (
        float(one_sided_upper(witness.hits_p, witness.samples_p, level)),
        float(one_sided_lower(witness.hits_q, witness.samples_q, level)),
    )


def flag_chance(witness, p: float, q: float, sizes_ahead, level: float, claim) -> float:
    """At most the probability that a later look flags the event when its truth is ``(p, q)``.

    Look ``k`` brings both histograms to ``n_k`` samples (``sizes_ahead``), the tallies
    growing by independent ``Bin(n_k − n, p)`` and ``Bin(n_k − n, q)`` draws, and flags the
    event when ``p_low(X_k) − e^ε q_high(Y_k) > δ`` (bounds at ``level``). With ``y_k``
    the ``b``-quantile of ``Y_k`` (``P(Y_k < y_k) <= b``) and ``q_high`` increasing, a
    flag needs ``Y_k < y_k`` or ``X_k >=``
    [`statistics.hits_needed`][dpaudit.auditor.bounds.statistics.hits_needed] of ``δ + e^ε q_high(y_k)``;
    the union bound over the looks sums both, ``b`` being ``FLAG_CHANCE`` split over twice the looks
    ahead.
    """
    from scipy.stats import binom

    x, y, n = int(witness.hits_p), int(witness.hits_q), int(witness.samples_p)
    sizes_ahead = [int(size) for size in sizes_ahead if size > n]
    if not sizes_ahead:
        return 0.0
    tail = FLAG_CHANCE / (2 * len(sizes_ahead))
    eps, delta = float(claim.epsilon), float(claim.delta)
    chance = 0.0
    for size in sizes_ahead:
        more = size - n
        y_k = y + float(binom.ppf(tail, more, min(max(q, 0.0), 1.0)))
        need = hits_needed(delta + math.exp(eps) * one_sided_upper(y_k, size, level), size, level)
        chance += tail
        if need is not None:
            chance += float(binom.sf(need - x - 1, more, min(max(p, 0.0), 1.0)))
    return chance


def far_from_claim(witness, claim, level: float, sizes_ahead) -> bool:
    """The later looks could flag the event only with small probability, whatever its truth
    within its confidence limits at ``level`` (module docstring).

    Far: its limits do not reach the claim
    ([`reaches_claim`][dpaudit.auditor.confirm.futility.reaches_claim]), or even at those limits
    ``(p_high, q_low)``, the most violating truth they allow, the looks ``sizes_ahead`` flag it with
    probability at most ``FLAG_CHANCE`` ([`flag_chance`][dpaudit.auditor.confirm.futility.flag_chance]). A
    curve claim, violated at any ε, is judged on its limits alone.
    """
    if not reaches_claim(witness, claim, level):
        return True
    if isinstance(claim, ProfileClaim):
        return False
    p_high, q_low = _limits(witness, level)
    return flag_chance(witness, p_high, q_low, sizes_ahead, level, claim) <= FLAG_CHANCE


def predicted_power(witness, size: int, level: float, claim, q=None) -> tuple[float, float]:
    """The event's ``(detectable ε, detectable δ)`` had both histograms ``size`` samples.

    ``q`` is taken as the truth (``Q̂`` by default, as
    [`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon] does at the
    samples drawn), the bounds at ``level``.
    """
    if witness.samples_q <= 0:
        return math.inf, math.inf
    hits_q = (witness.q_hat if q is None else q) * size
    args = (hits_q, size, size, level, claim.epsilon, claim.delta)
    return detectable_epsilon(*args), detectable_delta(*args)


def predicted_witness(witness, size: int, level: float, claim, truth=None, power: bool = True):
    """The event's witness as the last look would leave it, had both histograms ``size`` samples.

    ``truth = (P, Q)`` is taken as the truth (``(P̂, Q̂)`` by default): the detectable ε and δ of
    [`predicted_power`][dpaudit.auditor.confirm.futility.predicted_power] and the one-sided limits at
    ``level`` of the expected hits, each kept where the witness is already better (the
    prediction is of what the looks could still reach, so it errs towards power and never stops
    a confirmation that might get it; [`futility`][dpaudit.auditor.confirm.futility.futility] takes the
    truth at the event's own confidence limits for the same reason). With ``power`` false the
    detectable ε and δ are the witness's own (only the limits are predicted: what telling the
    histograms apart needs).
    """
    if witness.samples_p <= 0 or witness.samples_q <= 0:
        return witness
    p, q = (witness.p_hat, witness.q_hat) if truth is None else truth
    if power:
        epsilon, delta = predicted_power(witness, size, level, claim, q)
    else:
        epsilon, delta = witness.detectable_epsilon, witness.detectable_delta
    hits_p = p * size
    hits_q = q * size
    return dataclasses.replace(
        witness,
        samples_p=int(size),
        samples_q=int(size),
        detectable_epsilon=min(witness.detectable_epsilon, epsilon),
        detectable_delta=min(witness.detectable_delta, delta),
        q_high=min(witness.q_high, float(one_sided_upper(hits_q, size, level))),
        q_low=max(witness.q_low, float(one_sided_lower(hits_q, size, level))),
        p_low=max(witness.p_low, float(one_sided_lower(hits_p, size, level))),
        p_high=min(witness.p_high, float(one_sided_upper(hits_p, size, level))),
    )


#: The one-sided level of the limits at which futility takes an event's truth
#: ([`favourable`][dpaudit.auditor.confirm.futility.favourable]).
TRUTH_LEVEL = 0.2


def favourable(witness, power: bool) -> tuple[float, float]:
    """The truth ``(P, Q)`` most favourable to a pass that the event's tallies leave plausible.

    Each is its one-sided Clopper–Pearson limit at ``TRUTH_LEVEL`` (0.2, about 0.84 standard
    errors): for power and the event's own bounds (``power``) low ``P`` and high ``Q``, for
    telling the histograms apart high ``P`` and low ``Q``. Point estimates stopped confirmations
    whose rare event had a handful of hits (``GumbelTopK(k=2, ε=1)`` at counts ``[2, 1, 1, 0]``,
    100k samples, seed 0: 5 hits on ``Q`` at look 4, 35 at the last, where it passed); limits at
    the looks' own level (about 4 standard errors) would leave futility nothing to stop, since
    any event may then be far from where it is.
    """
    n_p, n_q = witness.samples_p, witness.samples_q
    lower_p = float(one_sided_lower(witness.hits_p, n_p, TRUTH_LEVEL))
    upper_p = float(one_sided_upper(witness.hits_p, n_p, TRUTH_LEVEL))
    lower_q = float(one_sided_lower(witness.hits_q, n_q, TRUTH_LEVEL))
    upper_q = float(one_sided_upper(witness.hits_q, n_q, TRUTH_LEVEL))
    return (lower_p, upper_q) if power else (upper_p, lower_q)


def futility(
    witnesses,
    going_on,
    claim,
    look: int,
    sizes,
    level: float,
    power_factor: float,
    epsilon_only: bool,
) -> Futility | None:
    """A [`Futility`][dpaudit.auditor.confirm.futility.Futility] when the confirmation should stop (module docstring), else None.

    Parameters
    ----------
    witnesses : every event's witness at its pair's latest look.
    going_on : the witnesses of the events whose pairs the next look may draw.
    claim : the privacy claim tested.
    look : this look (0-based).
    sizes : samples per histogram of every look (cumulative).
    level : the one-sided level of each look's bounds (α spent evenly over the looks).
    power_factor, epsilon_only : what a pass needs
        ([`power.events_shortfall`][dpaudit.auditor.results.power.events_shortfall]).
    """
    going_on = list(going_on)
    ahead = sizes[look + 1 :]
    # The cheap condition first: an event that the later looks could still flag keeps them going.
    if not all(far_from_claim(w, claim, level, ahead) for w in going_on):
        return None
    last_look = _AtLastLook(witnesses, claim, sizes[-1], level, (power_factor, epsilon_only))
    predicted, lacking = last_look.shortfall(going_on)
    if lacking is None:
        return None
    # The focus rule may leave a pair at a later look: its events are then "left", and a pass
    # needs only the pairs drawn to the end. So the looks are futile only when every pair going
    # on, were it the one drawn to the end, would leave the verdict short.
    pairs: dict = {}
    for w in going_on:
        pairs.setdefault((w.counts, w.counts2), []).append(w)
    if len(pairs) > 1 and any(last_look.shortfall(g)[1] is None for g in pairs.values()):
        return None
    best_epsilon = min((w.detectable_epsilon for w in predicted), default=math.inf)
    best_delta = min((w.detectable_delta for w in predicted), default=math.inf)
    return Futility(int(look), lacking, best_epsilon, best_delta, float(level))


class _AtLastLook:
    """The witnesses as the last look would leave them, had some events been drawn to it.

    Each event's prediction depends only on the event (not on which others finish), so it is
    made once per event and kind, however many groups ask for it.
    """

    def __init__(self, witnesses, claim, size: int, level: float, needs: tuple):
        self.witnesses, self.claim, self.size, self.level = witnesses, claim, size, level
        self.power_factor, self.epsilon_only = needs
        self.made: dict = {}

    def predicted(self, finishing, power: bool) -> list:
        """Every witness, those of ``finishing`` predicted at the last look
        ([`predicted_witness`][dpaudit.auditor.confirm.futility.predicted_witness] at the
        [`favourable`][dpaudit.auditor.confirm.futility.favourable] truth for ``power``)."""
        later = {id(w) for w in finishing}
        out = []
        for w in self.witnesses:
            if id(w) in later:
                if (id(w), power) not in self.made:
                    self.made[id(w), power] = predicted_witness(
                        w, self.size, self.level, self.claim, favourable(w, power), power=power
                    )
                w = self.made[id(w), power]
            out.append(w)
        return out

    def shortfall(self, finishing) -> tuple[list, str | None]:
        """``(predicted witnesses, what a pass would lack)`` were ``finishing`` drawn to the end."""
        # Each criterion at the truth its own limits allow that favours a pass most: power and
        # bounds at low P and high Q, telling the histograms apart at high P and low Q.
        claim, factor = self.claim, self.power_factor
        predicted = self.predicted(finishing, power=True)
        best_delta = min((w.detectable_delta for w in predicted), default=math.inf)
        labels = event_power(predicted, claim.epsilon, claim.delta, factor)
        lacking = events_shortfall(labels, best_delta, claim.delta, factor, self.epsilon_only)
        if lacking is None and not any(w.separates for w in self.predicted(finishing, power=False)):
            lacking = "separation"
        return predicted, lacking
