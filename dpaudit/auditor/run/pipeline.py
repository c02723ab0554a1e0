"""One audit pipeline over any sample source: screen -> select -> confirm.

DESIGN.md, "How the auditor is organised". The candidate pairs come from the pair
sources ([`dpaudit.neighbours.candidates`][dpaudit.neighbours.candidates], the search drawing on its
own streams); then, each phase on samples the earlier ones did not choose from:

1. screen — successive halving over the candidates, keeping the best of three rankings
   in turn ([`screening.screen_scores`][dpaudit.auditor.search.screening.screen_scores],
   [`screening.survivors`][dpaudit.auditor.search.screening.survivors]);
2. select — events chosen on everything drawn before confirmation
   ([`selection.choose_events`][dpaudit.auditor.search.selection.choose_events]); a value release fits each
   kept pair's encoder on raw samples first ([`value_encoding`][dpaudit.auditor.values]);
3. confirm — the tester bounds the chosen events on fresh tallies at ``alpha / (2 M)``
   each for ``M`` events (Bonferroni), so all bounds hold together w.p. ``>= 1 − alpha``
   ([`confirmation.confirm_events`][dpaudit.auditor.confirm.confirmation.confirm_events]); a live audit
   confirms in looks, each at an α-spending share of that level, stopping on a confirmed violation,
   reached power or futility ([`confirm_in_looks`][dpaudit.auditor.run.pipeline.confirm_in_looks],
   [`sequential`][dpaudit.auditor.bounds.sequential], [`futility`][dpaudit.auditor.confirm.futility]), a value
   release's selections together, each on its own encoder and streams
   ([`confirm_values_in_looks`][dpaudit.auditor.run.pipeline.confirm_values_in_looks]).

A [`Schedule`][dpaudit.auditor.run.schedule.Schedule] says how much each phase draws: a live audit's
follows its budgets ([`live.LiveSchedule`][dpaudit.auditor.run.live.LiveSchedule]), an offline one's is
fixed by its plan ([`offline.source.FileSchedule`][dpaudit.auditor.offline.source.FileSchedule]),
whose source serves the confirm split only after every choice is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from mechanisms import PrivacyClaim

from ..confirm.confirmation import confirm_events, confirm_sequentially
from ..confirm.value_looks import LookRules, confirm_selections_in_looks, value_stream_round
from ..interfaces import SampleSource, Tester
from ..results.result import Witness
from ..sources.tallies import pool_into
from .schedule import Looks, Schedule, histograms_of
from .selecting import screen, select, select_with_values

__all__ = [
    "Findings",
    "confirm_in_looks",
    "confirm_values_in_looks",
    "draw_up_to",
    "run_pipeline",
    "with_samples_left",
]


@dataclass(frozen=True)
class Findings:
    """The pipeline's outcome: kept pairs, chosen events and their confirmed witnesses.

    ``looks`` records a sequential confirmation (its sizes, where each pair stopped, the
    level of each look's bounds), None when confirmation was one draw.
    """

    kept: tuple
    chosen: tuple
    witnesses: tuple
    looks: dict | None = None


def with_samples_left(looks: Looks | None, schedule: Schedule, drawn: int) -> Looks | None:
    """``looks`` with the samples the phases before it left unspent added to its budget.

    The phases before confirmation draw at most their shares, often less (a pilot or a
    search that stopped early, screening thinned to fit, sizes rounded down); what they
    leave goes to confirmation, whose looks are as planned (their sizes and levels are
    fixed before any is drawn, so every bound keeps its level) but which can then bring
    more pairs further. The audit still never draws more than its budget.
    """
    left = schedule.samples_left(drawn)
    if looks is None or left is None or left <= looks.budget:
        return looks
    return replace(looks, budget=int(left))


def run_pipeline(
    source: SampleSource,
    candidates: Sequence,
    claim: PrivacyClaim,
    schedule: Schedule,
    tester: Tester = confirm_events,
) -> Findings:
    """Screen ``candidates``, choose events on the kept pairs, confirm them with ``tester``
    (in looks, with what the phases before left unspent:
    [`with_samples_left`][dpaudit.auditor.run.pipeline.with_samples_left])."""
    screening = screen(source, candidates, claim, schedule)
    if source.value_width:
        selections = select_with_values(source, screening.kept, claim, schedule)
    else:
        selections = [select(source, screening, claim, schedule)]
    chosen = tuple(c for s in selections for c in s.chosen)
    alpha_each = schedule.confirm_alpha(len(chosen))
    n_kept = len(screening.kept)
    if source.value_width and selections:
        looks = with_samples_left(schedule.value_looks(n_kept), schedule, source.samples)
        if looks is not None:
            found, looked = confirm_values_in_looks(
                source, selections, claim, looks, alpha_each, tester
            )
            return Findings(screening.kept, chosen, tuple(found), looked)
    witnesses: list[Witness] = []
    record = None
    for position, selection in enumerate(selections):
        histograms = histograms_of(selection.pairs)
        looks = None
        if selection.encoder is None:
            looks = with_samples_left(
                schedule.confirm_looks(len(histograms)), schedule, source.samples
            )
        if looks is not None:
            found, record = confirm_in_looks(source, selection, claim, looks, alpha_each, tester)
            witnesses += found
            continue
        if selection.encoder is None:
            size, round_ = schedule.confirm_size(len(histograms)), 0
        else:
            size, round_ = schedule.pair_confirm_size(n_kept), 1 + position
        tallies = source.draw("confirm", round_, histograms, size, selection.encoder)
        witnesses += tester(selection.chosen, tallies, alpha_each, claim)
    return Findings(screening.kept, chosen, tuple(witnesses), record)


def confirm_in_looks(
    source: SampleSource, selection, claim, looks: Looks, alpha_each, tester=confirm_events
) -> tuple[list, dict]:
    """Confirm ``selection``'s events in looks; ``(witnesses, record of the looks)``.

    Look ``j`` brings the histograms of the pairs going on to the look's size
    ([`draw_up_to`][dpaudit.auditor.run.pipeline.draw_up_to]) and bounds their events at
    ``looks.schedule.alpha_at(alpha_each, j)``
    ([`confirmation.confirm_sequentially`][dpaudit.auditor.confirm.confirmation.confirm_sequentially]).
    Confirmation stops at a confirmed violation, or once the audit has power
    ([`power.power_shortfall`][dpaudit.auditor.results.power.power_shortfall]) and no event's estimate is
    beyond the claim; after the focus look only the pairs nearest the claim and best powered go on
    ([`focus.focus_pairs`][dpaudit.auditor.confirm.focus.focus_pairs]), chosen after each look
    among every pair's latest witnesses, so that a pair left behind comes back when a pair that went
    on collapses; first a pair whose ``Q = 0`` events (a key present against the key absent) would
    more likely than not be flagged at the last look as large as they look, when the claim has
    ``δ > 0`` ([`focus.delta_promise`][dpaudit.auditor.confirm.focus.delta_promise]); else one
    pair alone once its estimate is a standard error beyond the claim. Power alone does not stop
    confirmation before the focus look while a key's release is confirmed. A claimed δ that even the
    last look on a ``Q = 0`` event cannot resolve does not hold confirmation back (the verdict still
    says INCONCLUSIVE for δ). Confirmation stops for futility when even the last look would leave
    the audit short of a pass (an event without power or bounds, δ unresolved, or no event
    telling its histograms apart) and the looks ahead could flag no event going on but with small
    probability ([`value_looks.LookRules.futile`][dpaudit.auditor.confirm.value_looks.LookRules.futile]);
    the record then says why (``futility``).
    """
    schedule = looks.schedule
    rules = LookRules.of(claim, looks, alpha_each)
    tallies: dict = {}

    def draw_look(step, moves, active):
        pool_into(tallies, draw_up_to(source, schedule.sizes(), step, moves))
        return tallies

    witnesses, last_look, stopped = confirm_sequentially(
        selection.chosen,
        draw_look,
        schedule,
        alpha_each,
        claim,
        rules.enough,
        looks.budget,
        rules.focus,
        looks.focus_look,
        tester,
        reserve=rules.reserve,
        futile=rules.futile,
    )
    return witnesses, rules.record(last_look, stopped)


def draw_up_to(source: SampleSource, sizes, step: int, moves: dict) -> dict:
    """Fresh draws that bring each histogram from look ``a`` to look ``b`` of ``sizes``
    (``moves[histogram] = (a, b)``, ``a = -1`` before any), at confirmation step ``step``.

    Histograms moved from look ``step − 1`` to look ``step`` (every one while all pairs go
    on) draw round ``step`` of the ``confirm`` streams, indexed by their position among
    them. Any other move draws round ``(step · L + a + 1) · L + b`` of the ``resume``
    streams (``L`` looks): the round differs for every step and move, so no stream of a
    histogram position is drawn twice and every draw is fresh.
    """
    grouped: dict[tuple, list] = {}
    for h, move in moves.items():
        grouped.setdefault(move, []).append(h)
    drawn: dict = {}
    looks = len(sizes)
    for (start, end), group in grouped.items():
        size = sizes[end] - (sizes[start] if start >= 0 else 0)
        if start == step - 1 and end == step:
            drawn.update(source.draw("confirm", step, group, size))
        else:
            round_ = ((step * looks) + start + 1) * looks + end
            drawn.update(source.draw("resume", round_, group, size))
    return drawn


def confirm_values_in_looks(
    source: SampleSource, selections, claim, looks: Looks, alpha_each, tester=confirm_events
) -> tuple[list, dict]:
    """Confirm a value release's selections in looks; ``(witnesses, record of the looks)``.

    Each selection draws with its own encoder on its own ``confirm`` stream per look
    ([`value_looks.value_stream_round`][dpaudit.auditor.confirm.value_looks.value_stream_round]), its
    tallies pooled over the looks; the looks, their α-spending levels and the stopping rules are
    those of
    [`value_looks.confirm_selections_in_looks`][dpaudit.auditor.confirm.value_looks.confirm_selections_in_looks].
    """
    pooled: list[dict] = [{} for _ in selections]

    def draw(position, look, size):
        selection = selections[position]
        round_ = value_stream_round(position, look, len(selections))
        histograms = histograms_of(selection.pairs)
        pool_into(
            pooled[position], source.draw("confirm", round_, histograms, size, selection.encoder)
        )
        return pooled[position]

    return confirm_selections_in_looks(selections, draw, looks, alpha_each, claim, tester)
