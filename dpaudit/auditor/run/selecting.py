"""The pipeline's first phases: screening the candidate pairs, then choosing the events to confirm.

Each on samples the later phases do not reuse for a bound
([`pipeline`][dpaudit.auditor.run.pipeline]): screening by successive halving
([`screening`][dpaudit.auditor.search.screening]), selection on the screening tallies and a
selection draw ([`selection`][dpaudit.auditor.search.selection]), a value release's per pair on
an encoder fitted on learning samples ([`fitting`][dpaudit.auditor.values.fitting]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mechanisms import MixedBatch

from ..interfaces import ChosenEvent, SampleSource, Tally
from ..search.screening import screen_scores, survivors
from ..search.selection import choose_events
from ..search.slots import with_delta_slot, with_epsilon_slot, with_named_pairs
from ..sources.tallies import pool_into
from ..values import fit_encoder
from .schedule import Schedule, histograms_of

__all__ = ["Screening", "Selection", "screen", "screening_encoder", "select", "select_with_values"]


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


def screen(source: SampleSource, candidates, claim, schedule: Schedule) -> Screening:
    """Successive halving over ``candidates``, tallies pooled across rounds."""
    rounds = schedule.screen_rounds(len(candidates))
    if not rounds:
        return Screening(tuple(candidates[: schedule.keep]), {}, 0)
    encoder = screening_encoder(source, candidates, schedule) if source.value_width else None
    target = schedule.screen_target(candidates)
    pooled: dict = {}
    scored: dict = {}
    kept = list(candidates)
    for round_ in range(rounds):
        histograms = histograms_of(kept)
        size = schedule.screen_size(rounds, len(histograms))
        pool_into(pooled, source.draw("screen", round_, histograms, size, encoder))
        scores = screen_scores(kept, pooled, target, schedule.alpha_each, claim, encoder=encoder)
        scored.update(zip(kept, scores))
        last = round_ == rounds - 1
        kept = survivors(
            kept, scores, schedule.keep if last else max(schedule.keep, len(kept) // 4)
        )
    kept = with_named_pairs(kept, scored, schedule.keep)
    kept = with_epsilon_slot(with_delta_slot(kept, scored, claim), scored, claim)
    wanted = set(histograms_of(kept))
    return Screening(tuple(kept), {h: t for h, t in pooled.items() if h in wanted}, rounds)


def screening_encoder(source: SampleSource, candidates, schedule: Schedule):
    """Coarse quantile bins of a value release, from raw samples of a spread of histograms
    (and the grid of released doubles:
    [`values.fitting.fit_encoder`][dpaudit.auditor.values.fitting.fit_encoder] on one side)."""
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
        list(kept),
        pooled,
        target,
        schedule.alpha_each,
        claim,
        schedule.events_per_pair,
        chase_delta=schedule.chases_delta,
    )
    return Selection(kept, tuple(chosen), None)


def select_with_values(source: SampleSource, kept, claim, schedule: Schedule) -> list[Selection]:
    """Per kept pair: an encoder fitted on learning samples, its events chosen on others.

    The encoder's regions are likelihood-ratio prefixes of cells ranked on the learning
    samples; scored on those same samples, a prefix of many cells that fell on one side
    by chance looks violating (winner's curse) and crowds out the events that leak. So
    the events are chosen on the selection draw alone (the learning samples' tallies
    only when there is no selection draw).
    """
    n_kept = len(kept)
    learn, extra = schedule.learn_size(n_kept), schedule.select_extra(n_kept)
    selections = []
    for position, pair in enumerate(kept):
        raw_p, raw_q = source.raw("learn", 1 + position, [pair.counts, pair.counts2], learn)
        encoder = fit_encoder(source.width, source.value_width, raw_p, raw_q)
        if extra:
            pooled = source.draw("select", 1 + position, histograms_of([pair]), extra, encoder)
        else:
            pooled = {
                pair.counts: Tally(encoder.count(raw_p), len(raw_p)),
                pair.counts2: Tally(encoder.count(raw_q), len(raw_q)),
            }
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
