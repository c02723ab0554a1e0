"""Confirmation: bound the chosen events on fresh samples; witnesses and the audit's power.

The tester role of DESIGN.md's auditor, second half. Every chosen event gets one-sided
Clopper–Pearson intervals at ``alpha_each`` on samples drawn after it was chosen, so all
bounds hold together with probability ``>= 1 − alpha`` (Bonferroni over the events,
both sides of each). Each witness also records whether it separates its two histograms
and the smallest true ε and δ it would have flagged with probability 0.9
([`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon],
[`statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta]).
Which pairs go on at each look is [`focus`][dpaudit.auditor.confirm.focus]'s; curve claims are
[`curves`][dpaudit.auditor.confirm.curves]'.

Sequential looks: in [`confirm_sequentially`][dpaudit.auditor.confirm.confirmation.confirm_sequentially] each pair
goes through the looks of ``schedule`` on its own: at each step, every pair going on is brought
to its next look ``j``, ``schedule.sizes()[j]`` samples per histogram, and its events are
bounded at ``schedule.alpha_at(alpha_each, j)`` (α-spending,
[`sequential`][dpaudit.auditor.bounds.sequential]). A pair's samples at look ``j`` are the first
``sizes[j]`` of its histograms' streams of fresh draws, and it is bounded at each look at most
once, so its bounds, read at whichever look it stopped, hold with probability
``>= 1 − 2 alpha_each`` per event, whatever the rules decided. While every pair goes
on, step ``j`` is look ``j`` for all of them. After each step ``enough(witnesses)`` may
stop the audit (a violation confirmed, or power reached); otherwise, from step
``focus_look`` on, ``focus(latest, going_on) -> pairs`` chooses the pairs that go on, by
priority, among every pair's latest witnesses: a pair left behind comes back, at the
look after its last, when it ranks first again (a rare event's lucky estimate that took
the looks and collapsed hands them back); once the pairs going on are all at the last
look, ``focus(latest, None)`` chooses among the others, so the budget left goes to
them. A step is drawn for as many of them as its
cost lets fit in ``budget`` samples, the first that fits at least (when none does, the
pairs of the step before go on as far as the budget lets them:
[`affordable`][dpaudit.auditor.confirm.confirmation.affordable]). When
``reserve(witnesses of the first pair)`` holds after ``focus_look``, the others are drawn only
while the first can still reach the last look (the schedule is sized for all pairs up to the
focus look and one pair to the last,
[`plan.AuditPlan.confirm_schedule`][dpaudit.auditor.planning.plan.AuditPlan.confirm_schedule]): a pair
that needs every sample the budget has gets them, instead of an equal share with which no pair
reaches the end. Decisions depend only on the tallies, so the looks are the same for every
executor. ``futile(witnesses, going on, look)``, after each step when the budget can draw the
next one, may stop the looks when the pairs that go on can neither confirm a violation nor give
the audit its power ([`futility.futility`][dpaudit.auditor.confirm.futility.futility]).
"""

from __future__ import annotations

import math

from ..bounds.statistics import (
    detectable_delta,
    detectable_epsilon,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)
from ..results.power import DEFAULT_POWER_FACTOR, event_power
from ..results.result import Witness
from ..values.outcome_events import events_hits
from .curves import curve_violated

__all__ = [
    "affordable",
    "confirm_events",
    "confirm_sequentially",
    "next_looks",
    "summarise",
]


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
                float(one_sided_lower(hits_q, n_q, alpha_each)),
                float(one_sided_upper(hits_p, n_p, alpha_each)),
            )
        )
    return witnesses


def _pair_histograms(pair) -> tuple:
    return (pair.counts, pair.counts2)


def _pair_look(pair, look_of) -> int:
    """The furthest look either histogram of ``pair`` was brought to (-1: none yet)."""
    return max(look_of.get(h, -1) for h in _pair_histograms(pair))


def _histogram_set(pairs) -> set:
    return {h for pair in pairs for h in _pair_histograms(pair)}


def _histograms(pairs) -> int:
    return len(_histogram_set(pairs))


def affordable(chosen, drawn_last, cost, room) -> list:
    """The pairs of ``chosen`` (in order) whose ``cost([pair])`` on its own is within
    ``room``; if none, those of ``drawn_last`` (the pairs drawn the step before) that are."""
    found = [p for p in chosen if cost([p]) <= room]
    return found or [p for p in drawn_last if cost([p]) <= room]


def next_looks(group, look_of, last) -> dict:
    """``{histogram: look}``: the look each histogram of ``group`` is brought to next.

    Each pair goes to the look after the furthest of its histograms (``look_of[h]``, -1
    before any), and a histogram two pairs of the group share goes to the later of their
    looks, so both histograms of a pair always end at the same look. Pairs whose look
    would be past ``last`` are left out.
    """
    target: dict = {}
    pairs = [p for p in group if _pair_look(p, look_of) < last]
    for p in pairs:
        j = _pair_look(p, look_of) + 1
        for h in _pair_histograms(p):
            target[h] = max(target.get(h, -1), j)
    changed = True
    while changed:  # lift each pair to its furthest histogram (shared ones may have moved)
        changed = False
        for p in pairs:
            j = max(target[h] for h in _pair_histograms(p))
            for h in _pair_histograms(p):
                if target[h] < j:
                    target[h], changed = j, True
    return target


def confirm_sequentially(
    chosen,
    draw,
    schedule,
    alpha_each,
    claim,
    enough,
    budget,
    focus,
    focus_look=0,
    tester=confirm_events,
    reserve=None,
    futile=None,
):
    """Confirm in looks; stop on ``enough``, for futility, when the budget is spent, or when
    no pair can go further (the rules: "Sequential looks" in the module docstring).

    Parameters
    ----------
    chosen : the chosen events (``ChosenEvent``) to confirm.
    draw : ``draw(step, {histogram: (from look, to look)}, pairs) -> samples[histogram] =
        (Counter, n)``, cumulative; -1: no look yet.
    schedule, alpha_each, claim : the looks (``sizes()``, ``alpha_at(alpha_each, look)``), the
        level of each one-sided bound, the claim audited.
    enough, futile : ``enough(witnesses)`` stops the audit; ``futile(witnesses, going on, look)``
        may stop the looks ([`futility`][dpaudit.auditor.confirm.futility.futility]; None: never).
    budget, focus, focus_look : samples the looks may draw in all; ``focus(latest, going_on)``
        chooses the pairs that go on, from step ``focus_look``.
    tester, reserve : bounds the events at a look ([`confirm_events`][dpaudit.auditor.confirm.confirmation.confirm_events]);
        ``reserve(witnesses of the first pair)`` keeps the last look for it (None: nothing).

    Returns ``(witnesses, {pair index: last look}, what futile returned, or None)``.
    """
    looks = _Looks(chosen, schedule.sizes())
    bound = _bounder(tester, schedule, alpha_each, claim)
    active = list(looks.pairs)
    stopped = None
    step = 0
    while True:
        if step > 0:
            active = looks.affordable(active, budget)
            if not active:
                break
        keep = step > focus_look and reserve is not None and reserve(looks.latest[active[0]])
        active = looks.fitted(step, active, budget, looks.reserved_for(active[0]) if keep else 0)
        looks.draw(step, active, draw, bound)
        witnesses = looks.witnesses()
        if enough(witnesses):
            break
        if step >= focus_look:
            active = looks.refocus(active, focus)
        # Only a step the budget would draw is dropped for futility.
        going = looks.affordable(active, budget)
        if not going:
            break
        stopped = None if futile is None else futile(*looks.futility_inputs(witnesses, going))
        if stopped is not None:
            break
        step += 1
    return looks.witnesses(), {looks.pairs.index(p): k for p, k in looks.last_look.items()}, stopped


def _bounder(tester, schedule, alpha_each, claim):
    """``bound(chosen, samples, look)``: ``tester`` at the level of ``look``."""

    def bound(chosen, samples, look):
        return tester(chosen, samples, schedule.alpha_at(alpha_each, look), claim)

    return bound


class _Looks:
    """Where each pair and histogram of a sequential confirmation stands, and what it spent.

    ``sizes``: the samples per histogram at each look; ``look_of``: the look each histogram
    was last brought to; ``latest`` and ``last_look``: each pair's witnesses and look at its
    latest step; ``drawn_last``: the pairs drawn the step before.
    """

    def __init__(self, chosen, sizes):
        self.chosen = chosen
        self.pairs = list(dict.fromkeys(pair for pair, _, _ in chosen))
        self.sizes = sizes
        self.last = len(sizes) - 1
        self.latest: dict = {}
        self.last_look: dict = {}
        self.look_of: dict = {}
        self.drawn_last: list = []
        self.spent = 0

    def cost(self, group) -> int:
        """Samples drawn to bring ``group`` to its next looks."""
        target = next_looks(group, self.look_of, self.last)
        sizes, look_of = self.sizes, self.look_of
        return sum(sizes[j] - (sizes[look_of[h]] if h in look_of else 0) for h, j in target.items())

    def movable(self, group) -> list:
        """The pairs of ``group`` not yet at the last look."""
        return [p for p in group if _pair_look(p, self.look_of) < self.last]

    def affordable(self, group, budget) -> list:
        """The pairs of ``group`` the budget left can bring to their next look."""
        # A pair too far behind for the budget is passed over; if every pair focus
        # chose is, those drawn the step before go on, as far as the budget goes.
        movable_last = self.movable(self.drawn_last)
        return affordable(self.movable(group), movable_last, self.cost, budget - self.spent)

    def reserved_for(self, pair) -> int:
        """Samples ``pair`` needs from its next look to the last."""
        first = max(next_looks([pair], self.look_of, self.last).values())
        return (self.sizes[-1] - self.sizes[first]) * _histograms([pair])

    def fitted(self, step, active, budget, reserved) -> list:
        """``active`` less its last pairs until the step fits in ``budget`` with ``reserved``."""
        while step > 0 and len(active) > 1 and self.spent + self.cost(active) + reserved > budget:
            active = active[:-1]
        return active

    def futility_inputs(self, witnesses, going) -> tuple:
        """``(witnesses, the witnesses of the pairs going on, the look of the first)``."""
        return witnesses, [w for p in going for w in self.latest[p]], self.last_look[going[0]]

    def draw(self, step, active, draw, bound) -> None:
        """Bring ``active`` to its next looks and bound its events there (``bound(chosen,
        samples, look)``)."""
        target = next_looks(active, self.look_of, self.last)
        self.spent += self.cost(active)
        samples = draw(step, {h: (self.look_of.get(h, -1), j) for h, j in target.items()}, active)
        self.look_of.update(target)
        self.drawn_last = list(active)
        for pair in active:
            look = target[pair.counts]
            mine = [c for c in self.chosen if c[0] == pair]
            self.latest[pair] = bound(mine, samples, look)
            self.last_look[pair] = look

    def witnesses(self) -> list:
        """Every pair's witnesses at its latest look, in the order of the pairs."""
        return [w for pair in self.pairs if pair in self.latest for w in self.latest[pair]]

    def refocus(self, active, focus) -> list:
        """The pairs ``focus`` sends on after a step; the others once those are all at the end."""
        # The pairs going on first, in their order: ties go to the one drawn so far.
        ranked = active + [p for p in self.pairs if p in self.latest and p not in active]
        active = focus({p: self.latest[p] for p in ranked}, active)
        if not self.movable(active):
            # Those going on are at the last look: the budget left goes to the others.
            rest = self.movable(ranked)
            active = focus({p: self.latest[p] for p in rest}, None) if rest else []
        return active


def summarise(witnesses, claim, power_factor: float = DEFAULT_POWER_FACTOR) -> dict:
    """Headline numbers: the best ε and δ witnesses, violation, separation, detectable ε and δ.

    The headline detectable ε is the LARGEST over the events with ε power within
    ``power_factor`` × the claim ([`power.event_power`][dpaudit.auditor.results.power.event_power]
    ``"epsilon"``), so that "a true ε of X or more would have been flagged" holds on each of them
    (with none such, the largest over the events drawn to the end with some ε power
    ([`Witness.has_epsilon_power`][dpaudit.auditor.results.witness.Witness.has_epsilon_power]), a figure
    to size a rerun). The detectable δ is the smallest over the events a pass covers (the δ the
    audit can resolve on its best δ event, which the text names): those drawn to the end, and
    those whose pairs were left at an earlier look with power or bounds at that look. Events left
    without them are not covered by a pass (``"left"``).
    """
    labels = event_power(witnesses, claim.epsilon, claim.delta, power_factor)
    covered = [w for w, label in zip(witnesses, labels) if label != "left"]
    most = max((w.samples_p + w.samples_q for w in witnesses), default=0)
    to_end = [w for w in witnesses if w.samples_p + w.samples_q == most]
    powered = [w.detectable_epsilon for w, label in zip(witnesses, labels) if label == "epsilon"]
    eps_w = max(witnesses, key=lambda w: (w.epsilon_lower, w.delta_lower), default=None)
    delta_w = max(witnesses, key=lambda w: (w.delta_lower, w.epsilon_lower), default=None)
    # (ε-bound > ε) and (δ-bound > δ) are the same condition on one event
    # (P_low − δ > e^ε Q_high); testing both guards against rounding.
    violation = any(
        w.delta_lower > claim.delta and w.epsilon_lower > claim.epsilon for w in witnesses
    ) or curve_violated(witnesses, claim)
    return {
        "epsilon_witness": eps_w,
        "delta_witness": delta_w,
        "epsilon_lower": eps_w.epsilon_lower if eps_w else 0.0,
        "delta_lower": delta_w.delta_lower if delta_w else 0.0,
        "violation": bool(violation),
        "separated": any(w.separates for w in witnesses),
        "detectable_epsilon": max(powered)
        if powered
        else max((w.detectable_epsilon for w in to_end if w.has_epsilon_power), default=math.inf),
        "detectable_delta": min((w.detectable_delta for w in covered), default=math.inf),
    }
