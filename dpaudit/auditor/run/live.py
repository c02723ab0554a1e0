"""The live sample source: an executor drawing on the plan's seed streams, and its schedule.

An executor ([`executors`][dpaudit.auditor.sources.executors],
[`dask_executor`][dpaudit.auditor.sources.dask_executor], a checkpointed local one) draws
``SeedSequence(seed, spawn_key=(phase, round, histogram index))`` per histogram
([`plan.AuditPlan.seed_for`][dpaudit.auditor.planning.plan.AuditPlan.seed_for]), so the tallies are the same
in one process, a pool or a cluster. [`LiveSchedule`][dpaudit.auditor.run.live.LiveSchedule] sizes each
phase from the plan's budgets.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from mechanisms import MixedBatch

from ..greybox.replay import check_draws_only_from_rng
from ..interfaces import Tally
from ..planning.plan import PHASES, AuditPlan
from ..search.screening import screen_rounds
from ..sources.sampling import chunk_sizes, draw_mixed
from ..values import items_only_encoder, value_width_of
from .schedule import Looks

__all__ = [
    "LEARN_CAP",
    "LOCAL_PER_HISTOGRAM",
    "LOCAL_SHARE",
    "PILOT_HISTOGRAMS",
    "PILOT_SAMPLES",
    "LiveSchedule",
    "LiveSource",
    "local_search_share",
    "with_local_search",
]

#: Spawn key of the replay check's stream (apart from every phase's, the pairs' 99).
REPLAY_CHECK_KEY = 98
#: Outcomes per run of the replay check: two runs of this many on the first histogram drawn.
REPLAY_CHECK_SIZE = 200
#: Raw samples per histogram of the screening encoder's pilot, and histograms it uses.
PILOT_SAMPLES, PILOT_HISTOGRAMS = 2_000, 16
#: Cap on a kept pair's raw learning samples per side (memory O(cap · (width + values))).
LEARN_CAP = 200_000
#: Share of the total budget the local search over histograms draws (taken from
#: confirmation), and its draws per histogram scored (``dpaudit.neighbours.local_search``).
LOCAL_SHARE, LOCAL_PER_HISTOGRAM = 0.30, 500


@contextmanager
def local_search_share(share: float) -> Iterator[None]:
    """Within the block, the local search takes ``share`` of each audit's budget (0: it does
    not run, its share staying with confirmation); ``LOCAL_SHARE`` again after it.

    For measuring what the local search costs and finds (``benchmarks/bench_worst_case.py``);
    audits outside the block are unchanged. The share is process-wide: not for audits running
    in other threads meanwhile.
    """
    global LOCAL_SHARE
    if not (isinstance(share, (int, float)) and 0 <= share < 1):
        raise ValueError(f"share must be a number in [0, 1), got {share!r}")
    before = LOCAL_SHARE
    LOCAL_SHARE = float(share)
    try:
        yield
    finally:
        LOCAL_SHARE = before


def with_local_search(budget: dict, samples: int, runs: bool) -> dict:
    """The plan's ``budget`` with ``LOCAL_SHARE`` of ``samples`` moved from confirmation
    to the local search (none when it does not ``run``): the total stays ``samples``."""
    local = int(LOCAL_SHARE * samples) if runs else 0
    return {**budget, "local": local, "confirm": budget["confirm"] - local}


class LiveSource:
    """Draws of one audit through its executor, each histogram on the plan's seed stream.

    For a mechanism that releases real values, the threshold search sees the items only,
    and [`raw`][dpaudit.auditor.run.live.LiveSource.raw] draws unreduced samples in this process for
    encoders to be fitted on.

    Parameters
    ----------
    plan : the audit's plan (seed streams, chunk).
    executor : ``draw(histograms, per_histogram, seeds[, encoder]) -> [(Counter, n)]``.
    mechanism : the auditable mechanism (its ``sample``, ``width``, ``value_width``).

    Before its first draw it runs the mechanism twice on one seed and the first histogram
    ([`check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng]):
    a mechanism that draws outside the ``rng`` it is given (numpy's global generator,
    ``random``, a generator of its own, a ``--command`` child ignoring its seed) makes every
    seed stream and every replay meaningless, so the audit is refused with the first differing
    row, before any verdict. Those runs are not counted as samples. A mechanism that declares
    ``seeded_by_rng = False`` (a library that cannot be seeded, such as OpenDP) is not checked.
    """

    def __init__(self, plan: AuditPlan, executor, mechanism=None):
        self.plan = plan
        self.executor = executor
        self.mechanism = mechanism
        # A wrapper of a library that cannot be seeded (OpenDP draws OS entropy) says so with
        # ``seeded_by_rng = False``: its draws are independent but cannot be replayed.
        self.replay_checked = mechanism is None or not getattr(mechanism, "seeded_by_rng", True)
        self.value_width = value_width_of(mechanism) if mechanism is not None else 0
        self.width = int(getattr(mechanism, "width", 0) or 0)
        self.search_calls = 0
        self.local_calls = 0
        self.raw_used = 0
        self.search_encoder = (
            items_only_encoder(self.width, self.value_width) if self.value_width else None
        )

    @property
    def samples(self) -> int:
        return int(self.executor.used) + self.raw_used

    @property
    def description(self) -> str:
        return getattr(self.executor, "description", type(self.executor).__name__)

    def check_replay(self, counts) -> None:
        """Refuse the mechanism if one seed gives two different batches (once per audit)."""
        if self.replay_checked:
            return
        self.replay_checked = True
        seed = np.random.SeedSequence(self.plan.seed, spawn_key=(REPLAY_CHECK_KEY,))
        check_draws_only_from_rng(
            self.mechanism, np.asarray(counts, dtype=np.int64), seed=seed, size=REPLAY_CHECK_SIZE
        ).require()

    def draw(self, phase, round_, histograms, per_histogram, encoder=None) -> dict[tuple, Tally]:
        seeds = [self.plan.seed_for(phase, round_, i) for i in range(len(histograms))]
        arrays = [np.array(h, dtype=np.int64) for h in histograms]
        drawn = self._executor_draw(arrays, per_histogram, seeds, encoder)
        return {h: Tally(*drawn[i]) for i, h in enumerate(histograms)}

    def _executor_draw(self, histograms, per_histogram, seeds, encoder):
        if len(histograms):
            self.check_replay(histograms[0])
        if encoder is None:  # integer outcomes: every executor's call
            return self.executor.draw(histograms, per_histogram, seeds)
        return self.executor.draw(histograms, per_histogram, seeds, encoder=encoder)

    def search_draw(self, histograms, per_histogram):
        """The threshold search's sampler: each call its own round of the search stream."""
        round_ = self.search_calls
        self.search_calls += 1
        return self._search_phase_draw("search", round_, histograms, per_histogram)

    def local_draw(self, histograms, per_histogram):
        """The local search's sampler: each call its own round of the ``local`` stream."""
        round_ = self.local_calls
        self.local_calls += 1
        return self._search_phase_draw("local", round_, histograms, per_histogram)

    @property
    def local_seed(self) -> np.random.SeedSequence:
        """The local search's own moves: ``SeedSequence(seed, spawn_key=(local,))``, whose
        children ``(local, chain)`` are shorter than every draw's ``(local, round, index)``."""
        return np.random.SeedSequence(self.plan.seed, spawn_key=(PHASES["local"],))

    def _search_phase_draw(self, phase, round_, histograms, per_histogram):
        seeds = [self.plan.seed_for(phase, round_, i) for i in range(len(histograms))]
        return self._executor_draw(
            [np.asarray(h, dtype=np.int64) for h in histograms],
            per_histogram,
            seeds,
            self.search_encoder,
        )

    def raw(self, phase, round_, histograms, per_histogram) -> list[MixedBatch]:
        """Unreduced samples, drawn in this process in chunks of the plan's streams."""
        batches = []
        if len(histograms):
            self.check_replay(histograms[0])
        for i, h in enumerate(histograms):
            sizes = chunk_sizes(per_histogram, self.plan.chunk)
            streams = self.plan.seed_for(phase, round_, i).spawn(len(sizes))
            counts = np.asarray(h, dtype=np.int64)
            parts = [
                draw_mixed(self.mechanism.sample, counts, size, np.random.default_rng(stream))
                for size, stream in zip(sizes, streams)
            ]
            batches.append(MixedBatch.stack(parts))
            self.raw_used += int(per_histogram)
        return batches


@dataclass(frozen=True)
class LiveSchedule:
    """Phase sizes of a live audit: the plan's budgets split over the histograms drawn.

    No phase draws more than its budget (screening was thinned to fit,
    [`plan.AuditPlan.minimum_samples`][dpaudit.auditor.planning.plan.AuditPlan.minimum_samples] refused
    budgets too small to select and confirm), so the audit never draws more than ``plan.samples``.
    Confirmation runs in looks ([`confirm_looks`][dpaudit.auditor.run.live.LiveSchedule.confirm_looks],
    a value release's [`value_looks`][dpaudit.auditor.run.live.LiveSchedule.value_looks]) and stops
    early on a violation or reached power.

    Parameters
    ----------
    plan : the audit's plan.
    budget : samples per phase ([`plan.AuditPlan.budgets`][dpaudit.auditor.planning.plan.AuditPlan.budgets],
        [`with_local_search`][dpaudit.auditor.run.live.with_local_search]).
    n_candidates : candidate pairs (the Bonferroni level counts the events confirmed).
    power_factor : the power a pass needs
        ([`power.power_shortfall`][dpaudit.auditor.results.power.power_shortfall]).
    epsilon_only : a pass on ε alone is accepted (confirmation does not chase δ).
    values : the mechanism releases real values (screening keeps a share for its pilot).
    """

    plan: AuditPlan
    budget: dict
    n_candidates: int
    power_factor: float = 1.25
    epsilon_only: bool = False
    values: bool = False

    @property
    def keep(self) -> int:
        return self.plan.keep

    @property
    def events_per_pair(self) -> int:
        return self.plan.events_per_pair

    @property
    def chases_delta(self) -> bool:
        return not self.epsilon_only

    @property
    def alpha_each(self) -> float:
        return self.plan.alpha_each(self.n_candidates)

    @property
    def pilot_allowance(self) -> int:
        """Samples the screening encoder's pilot may draw (a quarter of screening's)."""
        return self.budget["screen"] // 4 if self.values else 0

    @property
    def screen_budget(self) -> int:
        """Screening's rounds' samples: its share less the pilot's allowance."""
        return self.budget["screen"] - self.pilot_allowance

    def screen_rounds(self, n_candidates: int) -> int:
        return screen_rounds(n_candidates, self.keep) if self.budget["screen"] else 0

    def screen_size(self, rounds: int, n_histograms: int) -> int:
        return self.screen_budget // rounds // n_histograms

    def screen_target(self, candidates) -> int:
        return self.budget["confirm"] // (2 * self.keep)

    def select_size(self, n_histograms: int, screened: bool) -> int:
        return self.budget["select"] // n_histograms

    def select_target(self, pairs, n_kept: int) -> int:
        return self.budget["confirm"] // (2 * n_kept)

    def confirm_size(self, n_histograms: int) -> int:
        return self.budget["confirm"] // n_histograms

    def confirm_looks(self, n_histograms: int) -> Looks:
        """Confirmation in looks over ``n_histograms`` ([`plan.AuditPlan.confirm_schedule`][dpaudit.auditor.planning.plan.AuditPlan.confirm_schedule])."""
        return Looks(
            self.plan.confirm_schedule(self.budget["confirm"], n_histograms),
            self.budget["confirm"],
            float(self.power_factor),
            bool(self.epsilon_only),
            self.plan.focus_look(),
        )

    def confirm_alpha(self, n_chosen: int) -> float:
        return self.alpha_each

    def pilot(self, histograms: Sequence[tuple]) -> tuple[list, int]:
        """A spread of at most ``PILOT_HISTOGRAMS`` histograms, ``PILOT_SAMPLES`` each
        at most, within [`pilot_allowance`][dpaudit.auditor.run.live.LiveSchedule.pilot_allowance] in
        all."""
        step = max(1, len(histograms) // PILOT_HISTOGRAMS)
        chosen = list(histograms[::step][:PILOT_HISTOGRAMS])
        return chosen, max(1, min(PILOT_SAMPLES, self.pilot_allowance // len(chosen)))

    def _per_side(self, n_kept: int) -> int:
        return self.budget["select"] // (2 * n_kept)

    def learn_size(self, n_kept: int) -> int:
        return min(LEARN_CAP, self._per_side(n_kept) // 2)

    def select_extra(self, n_kept: int) -> int:
        return self._per_side(n_kept) - self.learn_size(n_kept)

    def pair_confirm_size(self, n_kept: int) -> int:
        return self.budget["confirm"] // (2 * n_kept)

    def samples_left(self, drawn: int) -> int:
        """What the audit may still draw once ``drawn`` are: ``plan.samples`` less them."""
        return max(int(self.plan.samples) - int(drawn), 0)

    def value_looks(self, n_kept: int) -> Looks:
        """A value release's looks: the samples of ``pair_confirm_size`` over its
        ``n_kept`` selections (two histograms each), every selection to the focus look
        and one to the last
        ([`plan.AuditPlan.confirm_schedule`][dpaudit.auditor.planning.plan.AuditPlan.confirm_schedule])."""
        budget = 2 * n_kept * self.pair_confirm_size(n_kept)
        return Looks(
            self.plan.confirm_schedule(budget, 2 * n_kept),
            budget,
            float(self.power_factor),
            bool(self.epsilon_only),
            self.plan.focus_look(),
        )
