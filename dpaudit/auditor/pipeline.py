"""One audit pipeline over any sample source: screen -> select -> confirm.

DESIGN.md, "How the auditor is organised". The candidate pairs come from the pair
sources (:mod:`dpaudit.neighbours.candidates`, the search drawing on its own streams);
then, each phase on samples the earlier ones did not choose from:

1. screen — successive halving over the candidates, keeping the best of three rankings
   in turn (:func:`.screening.screen_scores`, :func:`.screening.survivors`);
2. select — events chosen on everything drawn before confirmation
   (:func:`.screening.choose_events`); a value release fits each kept pair's encoder on
   raw samples first (:mod:`.value_encoding`);
3. confirm — the tester bounds the chosen events on fresh tallies at ``alpha / (2 M)``
   each for ``M`` events (Bonferroni), so all bounds hold together w.p. ``>= 1 − alpha``
   (:func:`.confirmation.confirm_events`).

A :class:`Schedule` says how much each phase draws: a live audit's follows its budgets
(:class:`.live.LiveSchedule`), an offline one's is fixed by its plan
(:class:`.offline.source.FileSchedule`), whose source serves the confirm split only
after every choice is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mechanisms import MixedBatch, PrivacyClaim

from .confirmation import confirm_events
from .interfaces import ChosenEvent, SampleSource, Tally, Tester
from .result import Witness
from .screening import choose_events, screen_scores, survivors
from .value_encoding import fit_encoder

__all__ = ["Findings", "Schedule", "Screening", "histograms_of", "pool_into", "run_pipeline"]


class Schedule(Protocol):
    """How much each phase draws and at which levels; None sizes mean "as planned"."""

    @property
    def keep(self) -> int: ...
    @property
    def events_per_pair(self) -> int: ...
    @property
    def alpha_each(self) -> float:
        """The level the screening and selection predictions assume."""
        ...

    def screen_rounds(self, n_candidates: int) -> int: ...
    def screen_size(self, rounds: int, n_histograms: int) -> int | None: ...
    def screen_target(self, candidates: Sequence) -> int: ...
    def select_size(self, n_histograms: int, screened: bool) -> int | None: ...
    def select_target(self, pairs: Sequence, n_kept: int) -> int: ...
    def confirm_size(self, n_histograms: int) -> int | None: ...
    def confirm_alpha(self, n_chosen: int) -> float: ...
    def pilot(self, histograms: Sequence[tuple]) -> tuple[list, int | None]: ...
    def learn_size(self, n_kept: int) -> int | None: ...
    def select_extra(self, n_kept: int) -> int: ...
    def pair_confirm_size(self, n_kept: int) -> int | None: ...


@dataclass(frozen=True)
class Screening:
    """What screening leaves: the kept pairs, their tallies so far, the rounds it ran."""

    kept: tuple
    tallies: dict
    rounds: int


@dataclass(frozen=True)
class Selection:
    """Events chosen for one group of kept pairs, and the encoder their tallies need."""

    pairs: tuple
    chosen: tuple
    encoder: Any = None


@dataclass(frozen=True)
class Findings:
    """The pipeline's outcome: kept pairs, chosen events and their confirmed witnesses."""

    kept: tuple
    chosen: tuple
    witnesses: tuple


def histograms_of(pairs) -> list[tuple]:
    """The distinct histograms of ``pairs`` in order of appearance (their stream indices)."""
    found: dict[tuple, None] = {}
    for pair in pairs:
        found.setdefault(pair.counts)
        found.setdefault(pair.counts2)
    return list(found)


def pool_into(pooled: dict, drawn: dict) -> None:
    """Add the tallies ``drawn`` to ``pooled`` (both ``{histogram: Tally}``)."""
    for h, (counter, n) in drawn.items():
        if h in pooled:
            old, m = pooled[h]
            merged = old.copy()
            merged.update(counter)
            pooled[h] = Tally(merged, m + n)
        else:
            pooled[h] = Tally(counter, n)


def run_pipeline(
    source: SampleSource,
    candidates: Sequence,
    claim: PrivacyClaim,
    schedule: Schedule,
    tester: Tester = confirm_events,
) -> Findings:
    """Screen ``candidates``, choose events on the kept pairs, confirm them with ``tester``."""
    screening = screen(source, candidates, claim, schedule)
    if source.value_width:
        selections = select_with_values(source, screening.kept, claim, schedule)
    else:
        selections = [select(source, screening, claim, schedule)]
    chosen = tuple(c for s in selections for c in s.chosen)
    alpha_each = schedule.confirm_alpha(len(chosen))
    witnesses: list[Witness] = []
    n_kept = len(screening.kept)
    for position, selection in enumerate(selections):
        histograms = histograms_of(selection.pairs)
        if selection.encoder is None:
            size, round_ = schedule.confirm_size(len(histograms)), 0
        else:
            size, round_ = schedule.pair_confirm_size(n_kept), 1 + position
        tallies = source.draw("confirm", round_, histograms, size, selection.encoder)
        witnesses += tester(selection.chosen, tallies, alpha_each, claim)
    return Findings(screening.kept, chosen, tuple(witnesses))


def screen(source: SampleSource, candidates, claim, schedule: Schedule) -> Screening:
    """Successive halving over ``candidates``, tallies pooled across rounds."""
    rounds = schedule.screen_rounds(len(candidates))
    if not rounds:
        return Screening(tuple(candidates[: schedule.keep]), {}, 0)
    encoder = screening_encoder(source, candidates, schedule) if source.value_width else None
    target = schedule.screen_target(candidates)
    pooled: dict = {}
    kept = list(candidates)
    for round_ in range(rounds):
        histograms = histograms_of(kept)
        size = schedule.screen_size(rounds, len(histograms))
        pool_into(pooled, source.draw("screen", round_, histograms, size, encoder))
        scores = screen_scores(kept, pooled, target, schedule.alpha_each, claim, encoder=encoder)
        last = round_ == rounds - 1
        kept = survivors(
            kept, scores, schedule.keep if last else max(schedule.keep, len(kept) // 4)
        )
    wanted = set(histograms_of(kept))
    return Screening(tuple(kept), {h: t for h, t in pooled.items() if h in wanted}, rounds)


def screening_encoder(source: SampleSource, candidates, schedule: Schedule):
    """Coarse quantile bins of a value release, from raw samples of a spread of histograms."""
    histograms, size = schedule.pilot(histograms_of(candidates))
    pooled = MixedBatch.stack(source.raw("learn", 0, histograms, size))
    return fit_encoder(source.width, source.value_width, pooled, None, bins=32, score=False)


def select(source: SampleSource, screening: Screening, claim, schedule: Schedule) -> Selection:
    """Events of the kept pairs, chosen on the screening tallies and a selection draw."""
    kept, pooled = screening.kept, dict(screening.tallies)
    histograms = histograms_of(kept)
    size = schedule.select_size(len(histograms), screening.rounds > 0)
    if size != 0:
        pool_into(pooled, source.draw("select", 0, histograms, size))
    target = schedule.select_target(kept, len(kept))
    chosen = choose_events(
        list(kept), pooled, target, schedule.alpha_each, claim, schedule.events_per_pair
    )
    return Selection(kept, tuple(chosen), None)


def select_with_values(source: SampleSource, kept, claim, schedule: Schedule) -> list[Selection]:
    """Per kept pair: an encoder fitted on raw samples, then its events chosen."""
    n_kept = len(kept)
    learn, extra = schedule.learn_size(n_kept), schedule.select_extra(n_kept)
    selections = []
    for position, pair in enumerate(kept):
        raw_p, raw_q = source.raw("learn", 1 + position, [pair.counts, pair.counts2], learn)
        encoder = fit_encoder(source.width, source.value_width, raw_p, raw_q)
        pooled = {
            pair.counts: Tally(encoder.count(raw_p), len(raw_p)),
            pair.counts2: Tally(encoder.count(raw_q), len(raw_q)),
        }
        if extra:
            drawn = source.draw("select", 1 + position, histograms_of([pair]), extra, encoder)
            pool_into(pooled, drawn)
        chosen: list[ChosenEvent] = choose_events(
            [pair],
            pooled,
            schedule.select_target([pair], n_kept),
            schedule.alpha_each,
            claim,
            schedule.events_per_pair,
            encoder=encoder,
        )
        selections.append(Selection((pair,), tuple(chosen), encoder))
    return selections
