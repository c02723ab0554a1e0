"""Sequential confirmation of a value release: one selection per kept pair, in looks.

A mechanism that releases real values is confirmed per kept pair, each pair with the
encoder fitted for it
([`selecting.select_with_values`][dpaudit.auditor.run.selecting.select_with_values]), so its tallies
cannot be shared with another pair's. The selections go through the looks of one
[`sequential.LookSchedule`][dpaudit.auditor.bounds.sequential.LookSchedule], each on its own: at each step
every selection going on is brought to its next look ``j``, ``sizes[j]`` samples per histogram (from
look ``j − 1``, or from wherever it stopped when it comes back after others took the looks), and its
events are bounded at the α-spending level ``alpha_at(alpha_each, j)`` (Lan & DeMets, Biometrika
70(3), 1983, eq. (2.2); Bonferroni over the looks, so each event's bounds read at a data-dependent
stopping look hold with probability ``>= 1 − 2 alpha_each``:
[`sequential`][dpaudit.auditor.bounds.sequential]). The stopping and focusing rules are those of the
integer confirmation ([`pipeline.confirm_in_looks`][dpaudit.auditor.run.pipeline.confirm_in_looks]),
read over the witnesses of every selection at once: power established on one pair stops all of them,
since the audit's power is its best event's
([`power.power_shortfall`][dpaudit.auditor.results.power.power_shortfall]), and so does futility
([`futility`][dpaudit.auditor.confirm.futility]).

Steps: in
[`confirm_selections_in_looks`][dpaudit.auditor.confirm.value_looks.confirm_selections_in_looks],
each step brings every selection going on to its next look ``j`` (the look after its last) and
bounds its events at ``looks.schedule.alpha_at(alpha_each, j)``; while all go on, step ``j`` is look
``j``. After each step, [`LookRules.enough`][dpaudit.auditor.confirm.value_looks.LookRules.enough] over
every selection's latest witnesses may stop them all; from step ``looks.focus_look`` on
[`LookRules.focus`][dpaudit.auditor.confirm.value_looks.LookRules.focus] picks the selections that go
on, by priority, among every selection's latest witnesses (one left behind comes back when it
ranks first again; once those going on are all at the last look, it picks among the others, so
the budget left goes to them), and a step is drawn for as many of them
as fit in ``looks.budget`` samples (at least the first that fits; if none does, those
of the step before, as far as they fit:
[`confirmation.affordable`][dpaudit.auditor.confirm.confirmation.affordable]); when
[`LookRules.reserve`][dpaudit.auditor.confirm.value_looks.LookRules.reserve] holds for the first, the
others go on only while it can still reach the last look. The schedule
([`plan.AuditPlan.confirm_schedule`][dpaudit.auditor.planning.plan.AuditPlan.confirm_schedule] over every
selection's histograms) lets every selection reach the focus look and one the last. Selections
without events draw nothing. After each step, when the budget can draw the next one,
[`LookRules.futile`][dpaudit.auditor.confirm.value_looks.LookRules.futile] may stop them all for
futility.

Seed streams: selection ``i`` of ``n`` at look ``j`` draws round
[`value_stream_round`][dpaudit.auditor.confirm.value_looks.value_stream_round] ``= 1 + i + j · n`` of the
``confirm`` phase, so each ``(selection, look)`` has its own
``SeedSequence(seed, spawn_key=(confirm, round, histogram index))`` (look 0 is round ``1 + i``, the
stream of a one-look confirmation). Every decision depends on the tallies only, so an audit is the
same on one process, a pool or a cluster.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mechanisms import PrivacyClaim

from ..bounds.sequential import LookSchedule
from ..bounds.statistics import detectable_delta, p_needed
from ..results.power import event_power, events_shortfall, power_shortfall
from .confirmation import affordable, confirm_events, summarise
from .focus import delta_promise, focus_pairs, nearness, release_unjudged
from .futility import Futility, futility

__all__ = ["LookRules", "confirm_selections_in_looks", "value_stream_round"]


def value_stream_round(position: int, look: int, n_selections: int) -> int:
    """The ``confirm`` round of selection ``position`` (of ``n_selections``) at ``look``.

    Distinct for every ``(position, look)`` with ``position < n_selections``, and never 0
    (round 0 is the integer confirmation's first look).
    """
    if not 0 <= position < n_selections:
        raise ValueError(f"position must be in [0, {n_selections}), got {position!r}")
    return 1 + position + look * n_selections


@dataclass(frozen=True)
class LookRules:
    """When sequential confirmation stops, which pairs go on, and what it reserves.

    Parameters
    ----------
    claim : the privacy claim tested.
    power_factor : the power a pass needs
        ([`power.power_shortfall`][dpaudit.auditor.results.power.power_shortfall]).
    chase_delta : δ's power is sought (the last look can resolve the claimed δ and a pass
        on ε alone was not accepted).
    flagged_at : the ``P`` a ``Q = 0`` event needs to be flagged at the last look more
        likely than not (``inf`` when the claim has no δ).
    focus_size : samples per histogram at the focus look.
    epsilon_only : the user accepted a pass on ε alone (what the verdict's power needs).
    schedule : the looks (their sizes and α-spending levels).
    alpha_each : the level the looks spend
        ([`sequential.LookSchedule.alpha_at`][dpaudit.auditor.bounds.sequential.LookSchedule.alpha_at]).
    """

    claim: PrivacyClaim
    power_factor: float
    chase_delta: bool
    flagged_at: float
    focus_size: int
    epsilon_only: bool
    schedule: LookSchedule
    alpha_each: float

    @classmethod
    def of(cls, claim, looks, alpha_each: float) -> LookRules:
        """The rules of ``looks`` (a [`schedule.Looks`][dpaudit.auditor.run.schedule.Looks]) at level ``alpha_each``."""
        schedule = looks.schedule
        last = schedule.sizes()[-1]
        level_last = schedule.alpha_at(alpha_each, schedule.looks - 1)
        reach = detectable_delta(0, last, last, level_last, claim.epsilon, claim.delta)
        flagged_at = (
            p_needed(0, last, last, level_last, claim.epsilon, claim.delta, probability=0.5)
            if float(claim.delta) > 0
            else math.inf
        )
        return cls(
            claim,
            float(looks.power_factor),
            not looks.epsilon_only and reach <= looks.power_factor * claim.delta,
            float(flagged_at),
            int(schedule.sizes()[looks.focus_look]),
            bool(looks.epsilon_only),
            schedule,
            float(alpha_each),
        )

    def shortfall(self, summary: dict) -> str | None:
        """What the audit still lacks power on (``"epsilon"``, ``"delta"``), or None."""
        return power_shortfall(
            summary["detectable_epsilon"],
            summary["detectable_delta"],
            self.claim.epsilon,
            self.claim.delta,
            self.power_factor,
            not self.chase_delta,
        )

    def enough(self, found) -> bool:
        """A violation is confirmed, or the audit has power and nothing is near the claim.

        Power is the verdict's own rule
        ([`power.events_shortfall`][dpaudit.auditor.results.power.events_shortfall]): no event drawn
        to this look is ``"none"``, and δ is resolved unless only ε is chased. Power alone does not stop while some event's estimate is beyond the claim, or a
        key's release is not yet judged or would be flagged at the last look: more
        samples there may confirm a violation.
        """
        summary = summarise(found, self.claim, self.power_factor)
        labels = event_power(found, self.claim.epsilon, self.claim.delta, self.power_factor)
        return summary["violation"] or (
            summary["separated"]
            and events_shortfall(
                labels,
                summary["detectable_delta"],
                self.claim.delta,
                self.power_factor,
                not self.chase_delta,
            )
            is None
            and nearness(found, self.claim) < 1
            and not (self.flagged_at < math.inf and release_unjudged(found, self.focus_size))
            and delta_promise(found, self.flagged_at) <= 1
        )

    def focus(self, latest: dict, going_on=None) -> list:
        """The pairs that go on after a look, by priority, among every pair's latest
        witnesses ([`focus.focus_pairs`][dpaudit.auditor.confirm.focus.focus_pairs];
        ``going_on`` when nothing is picked)."""
        summary = summarise(
            [w for ws in latest.values() for w in ws], self.claim, self.power_factor
        )
        return focus_pairs(
            latest, self.claim, self.shortfall(summary), self.flagged_at, 1.0, going_on
        )

    def futile(self, found, going_on, look: int) -> Futility | None:
        """Stop for futility after ``look``
        ([`futility.futility`][dpaudit.auditor.confirm.futility.futility]): even the last look would leave
        the verdict short of a pass by the events' labels (with ``epsilon_only`` as the user asked,
        so a claimed δ that the budget cannot resolve counts as lacking), and the looks ahead could
        flag no event of
        ``going_on`` but with small probability."""
        return futility(
            found,
            going_on,
            self.claim,
            look,
            self.schedule.sizes(),
            self.schedule.alpha_at(self.alpha_each, look),
            self.power_factor,
            self.epsilon_only,
        )

    def record(self, last_look: dict, stopped: Futility | None) -> dict:
        """The evidence of the looks: their sizes, each pair's last look, the level of each
        look's bounds, whether δ's power was sought and, when they stopped for futility,
        why (``futility.Futility.to_dict``)."""
        schedule = self.schedule
        record = {
            "sizes": schedule.sizes(),
            "last_look_of_pair": {str(i): int(j) for i, j in sorted(last_look.items())},
            "alpha_each_look": float(schedule.alpha_at(self.alpha_each, 0)),
            "delta_within_reach": bool(self.chase_delta),
        }
        if stopped is not None:
            record["futility"] = stopped.to_dict()
        return record

    def reserve(self, found) -> bool:
        """A key's release that would be flagged at the last look gets the looks it needs."""
        return delta_promise(found, self.flagged_at) > 1


def confirm_selections_in_looks(
    selections: Sequence,
    draw: Callable,
    looks,
    alpha_each: float,
    claim,
    tester=confirm_events,
) -> tuple[list, dict]:
    """Confirm each selection's events in looks; ``(witnesses, record of the looks)``.

    ``draw(position, look, size) -> samples[histogram] = (Counter, n)``: selection
    ``position``'s tallies brought ``size`` samples further per histogram, cumulative,
    on its own stream ([`value_stream_round`][dpaudit.auditor.confirm.value_looks.value_stream_round]).
    The rules of each step: "Steps" in the module docstring.

    The record holds the looks' sizes, each selection's last look, the level of each
    look's bounds, whether δ's power was sought and why the looks stopped for futility, if
    they did ([`LookRules.record`][dpaudit.auditor.confirm.value_looks.LookRules.record], as
    [`pipeline.confirm_in_looks`][dpaudit.auditor.run.pipeline.confirm_in_looks]).
    """
    rules = LookRules.of(claim, looks, alpha_each)
    state = _SelectionLooks(selections, looks.schedule.sizes())
    active = [i for i, s in enumerate(selections) if s.chosen]
    stopped = None
    step = 0
    while active:
        if step > 0:
            active = state.affordable(active, looks.budget)
            if not active:
                break
        keep = step > looks.focus_look and rules.reserve(state.latest[active[0]])
        reserved = state.reserved_for(active[0]) if keep else 0
        active = state.fitted(step, active, looks.budget, reserved)
        state.draw(active, draw, _bounder(tester, looks.schedule, alpha_each, claim))
        if rules.enough(state.witnesses()):
            break
        if step >= looks.focus_look:
            active = state.refocus(active, rules.focus)
        # Only a step the budget would draw is dropped for futility.
        going = state.affordable(active, looks.budget)
        if not going:
            break
        stopped = rules.futile(*state.futility_inputs(going))
        if stopped is not None:
            break
        step += 1
    return state.witnesses(), rules.record(state.last_look, stopped)


def _bounder(tester, schedule, alpha_each, claim):
    """``bound(chosen, samples, look)``: ``tester`` at the level of ``look``."""

    def bound(chosen, samples, look):
        return tester(chosen, samples, schedule.alpha_at(alpha_each, look), claim)

    return bound


class _SelectionLooks:
    """Where each selection of a value release stands in the looks, and what it spent.

    ``cost_of[i]``: selection ``i``'s histograms; ``last_look[i]``: its own last look (one step
    may mix looks); ``latest[i]``: its witnesses there; ``drawn_last``: those drawn the step before.
    """

    def __init__(self, selections, sizes):
        self.selections = selections
        self.sizes = sizes
        self.last = len(sizes) - 1
        self.cost_of = {
            i: len({h for p in s.pairs for h in (p.counts, p.counts2)})
            for i, s in enumerate(selections)
        }
        self.latest: dict = {}
        self.last_look: dict = {}
        self.drawn_last: list = []
        self.spent = 0

    def movable(self, group) -> list:
        """The selections of ``group`` not yet at the last look."""
        return [i for i in group if self.last_look.get(i, -1) < self.last]

    def size_of(self, i, look) -> int:
        """Samples per histogram of selection ``i`` at ``look`` (0 before any)."""
        return self.sizes[look] if look >= 0 else 0

    def cost(self, group) -> int:
        """Samples drawn to bring each selection of ``group`` to its next look."""
        total = 0
        for i in group:
            before = self.last_look.get(i, -1)
            total += (self.sizes[before + 1] - self.size_of(i, before)) * self.cost_of[i]
        return total

    def affordable(self, group, budget) -> list:
        """The selections of ``group`` the budget left can bring to their next look."""
        # A selection too far behind for the budget is passed over; if every one focus
        # chose is, those drawn the step before go on, as far as the budget goes.
        movable_last = self.movable(self.drawn_last)
        return affordable(self.movable(group), movable_last, self.cost, budget - self.spent)

    def reserved_for(self, i) -> int:
        """Samples selection ``i`` needs from its next look to the last."""
        return (self.sizes[-1] - self.sizes[self.last_look[i] + 1]) * self.cost_of[i]

    def fitted(self, step, active, budget, reserved) -> list:
        """``active`` less its last selections until the step fits in ``budget``, ``reserved`` kept."""
        while step > 0 and len(active) > 1 and self.spent + self.cost(active) + reserved > budget:
            active = active[:-1]
        return active

    def draw(self, active, draw, bound) -> None:
        """Bring each of ``active`` to its next look and bound its events there."""
        self.drawn_last = list(active)
        self.spent += self.cost(active)
        for i in active:
            before = self.last_look.get(i, -1)
            look = before + 1
            tallies = draw(i, look, self.sizes[look] - self.size_of(i, before))
            self.latest[i] = bound(self.selections[i].chosen, tallies, look)
            self.last_look[i] = look

    def witnesses(self) -> list:
        """Every selection's witnesses at its latest look, in the order of the selections."""
        return [w for i in sorted(self.latest) for w in self.latest[i]]

    def refocus(self, active, focus) -> list:
        """The selections ``focus`` sends on after a step; the others once those are at the end."""
        # The pairs going on first, in their order: ties go to the one drawn so far.
        ranked = active + [i for i in sorted(self.latest) if i not in active]
        active = focus({i: self.latest[i] for i in ranked}, active)
        if not self.movable(active):
            # Those going on are at the last look: the budget left goes to the others.
            rest = self.movable(ranked)
            active = focus({i: self.latest[i] for i in rest}) if rest else []
        return active

    def futility_inputs(self, going) -> tuple:
        """``(witnesses, the witnesses of the selections going on, the look of the first)``."""
        found = self.witnesses()
        return found, [w for i in going for w in self.latest[i]], self.last_look[going[0]]
