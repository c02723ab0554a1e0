"""The audit plan: phases, budgets, seed streams — what an executor carries out.

An audit runs in phases, each on its own samples (so the confirmed bounds are valid):

1. ``search``  — probes that find where the output law changes (pair generation only),
   then ``local`` — a local search over histograms from there (``live.LOCAL_SHARE``);
2. ``screen``  — rounds of successive halving over the candidate pairs;
3. ``select``  — fresh samples of the kept pairs, on which events are chosen;
4. ``confirm`` — fresh samples of the kept pairs, on which the chosen events are bounded
   (``resume``: those of a pair that comes back to the looks after skipping some);
5. ``refine``  — with ``refine=True``, fresh samples of the one pair whose event the audit
   chose as its witness, bounded at the full level ([`refine`][dpaudit.auditor.run.refine]).

A mechanism that releases real values adds ``learn``: raw samples (a pilot for the
screening encoder, then per kept pair a share of the selection budget) on which the
encoders of [`value_encoding`][dpaudit.auditor.values] are fitted before the draws they
reduce.

The plan fixes everything that does not depend on what the samples show: the budget of
each phase and the seed stream of every draw, ``SeedSequence(seed, spawn_key=(phase,
round, histogram index))``. Which histograms a later phase samples depends on earlier
phases (that is the point of screening), but the seeds do not depend on the executor,
the number of workers or the order in which chunks finish: the same plan and seed give
the same result on one process, a process pool, or (later) a cluster.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..bounds.sequential import LookSchedule

__all__ = [
    "GREY_DELTA_SHARE",
    "MIN_PER_HISTOGRAM",
    "PHASES",
    "SCREEN_MIN_PER_HISTOGRAM",
    "AuditPlan",
    "Budget",
]

#: Phase names, in order, with the spawn-key index of each.
PHASES = {
    "search": 3,
    "screen": 0,
    "select": 1,
    "confirm": 2,
    "learn": 4,
    "local": 5,
    "calibrate": 6,
    "refine": 7,
    "resume": 8,
}

#: The share of ``alpha`` the grey-box structural-δ stage holds when it runs (Bonferroni with the
#: sampled bounds, which share the rest): a tenth costs the sampled bounds a factor 0.9 in their
#: level, and leaves the betting bound on ``P(S | D)`` within a few per cent of the exact value
#: (LimitDomain(3, 10, ε=1, δ=1e-6): 0.98 of it at 20,000 runs, α = 0.005).
GREY_DELTA_SHARE = 0.1

#: Fewest samples per histogram in one phase for a bound worth computing.
MIN_PER_HISTOGRAM = 200

#: Fewest samples per histogram in a screening round: screening only ranks, and on a small
#: budget breadth (more pairs, halved in later rounds) finds more than depth. Measured on
#: LimitDomain(2, 3, ε=1, δ=1e-3) at 200k samples, seeds 1-2, and TopStable seed 2:
#: ε lower bounds 0 / 0 / 0 at 500, 0.78 / 1.29 / 0 at 100, 0.78 / 1.29 / 0.12 at 50.
SCREEN_MIN_PER_HISTOGRAM = 50

#: Growth of the cumulative sizes of the sequential confirmation's looks.
CONFIRM_GROWTH = 2.0

#: Looks drawn for every confirmed pair before confirmation focuses on the most informative
#: ones (their first looks are too small to tell pairs apart).
FOCUS_LOOK = 2


@dataclass(frozen=True)
class Budget:
    """What an audit may spend: a number of samples, or wall-clock seconds (one of them).

    Parameters
    ----------
    samples : total mechanism samples over all phases (never exceeded).
    seconds : wall-clock seconds; turned into samples by a timed pilot (the result records
        the samples it chose, so a rerun with that number reproduces it).
    """

    samples: int | None = None
    seconds: float | None = None

    def __post_init__(self):
        if (self.samples is None) == (self.seconds is None):
            raise ValueError("a budget is samples or seconds: give exactly one")
        if self.samples is not None and not (
            isinstance(self.samples, (int, np.integer))
            and not isinstance(self.samples, bool)
            and self.samples >= 1
        ):
            raise ValueError(f"budget samples must be an integer >= 1, got {self.samples!r}")
        if self.seconds is not None and not (math.isfinite(self.seconds) and self.seconds > 0):
            raise ValueError(f"budget seconds must be a number > 0, got {self.seconds!r}")

    @classmethod
    def parse(cls, value) -> Budget:
        """``2e7`` / ``20000000`` / ``"2e7"`` (samples) or ``"60s"`` / ``"2m"`` (seconds)."""
        if isinstance(value, Budget):
            return value
        if isinstance(value, str):
            text = value.strip().lower()
            match = re.fullmatch(r"([0-9.e+]+)\s*(s|sec|seconds|m|min)", text)
            if match:
                scale = 60.0 if match.group(2) in ("m", "min") else 1.0
                return cls(seconds=float(match.group(1)) * scale)
            try:
                value = float(text)
            except ValueError:
                raise ValueError(
                    f"budget must be a number of samples (2e7) or seconds (60s), got {value!r}"
                ) from None
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"budget must be a number of samples or 'Ns', got {value!r}")
        if not (math.isfinite(value) and float(value) == int(value)):
            raise ValueError(f"budget samples must be a whole number, got {value!r}")
        return cls(samples=int(value))

    def __str__(self) -> str:
        return f"{self.samples:,} samples" if self.samples is not None else f"{self.seconds:g}s"


@dataclass(frozen=True)
class AuditPlan:
    """Budgets and seeds of one audit.

    Parameters
    ----------
    samples : the total budget over all phases and both sides of every pair.
    seed : the root seed (an int; ``numpy.random.SeedSequence(seed)``).
    alpha : failure probability of the whole audit.
    keep : pairs carried from screening to selection and confirmation.
    events_per_pair : events confirmed per kept pair (Bonferroni over all of them).
    chunk : rows per sampling call (memory O(chunk · width)).
    search_share, screen_share, select_share : budget shares; confirmation gets the rest.
    single_select_share : selection's share when there is nothing to screen (few pairs).
    looks : looks of the sequential confirmation (1: one fixed-size confirmation).
    grey_delta : the grey-box structural-δ stage runs and holds ``GREY_DELTA_SHARE`` of
        ``alpha`` ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]); the sampled
        bounds share the rest (``blackbox_alpha``), so all hold together at ``1 − alpha``.
    """

    samples: int
    seed: int
    alpha: float
    keep: int = 3
    events_per_pair: int = 3
    chunk: int = 250_000
    search_share: float = 0.05
    screen_share: float = 0.25
    select_share: float = 0.15
    single_select_share: float = 0.30
    looks: int = 6
    grey_delta: bool = False

    def __post_init__(self):
        if not (isinstance(self.samples, (int, np.integer)) and self.samples >= 1000):
            raise ValueError(f"samples must be an integer >= 1000, got {self.samples!r}")
        if not 0 < float(self.alpha) < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")
        for name in ("keep", "events_per_pair", "chunk", "looks"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")

    def budgets(self, n_candidates: int, search: bool) -> dict[str, int]:
        """Samples of each phase: no search when asked not to, no screening for few pairs."""
        search_budget = int(self.search_share * self.samples) if search else 0
        single = n_candidates <= self.keep
        screen = 0 if single else int(self.screen_share * self.samples)
        select = int((self.single_select_share if single else self.select_share) * self.samples)
        confirm = self.samples - search_budget - screen - select
        return {"search": search_budget, "screen": screen, "select": select, "confirm": confirm}

    def minimum_samples(
        self, n_pairs: int | None, search: bool, values: bool = False, local_share: float = 0.0
    ) -> int:
        """Smallest budget giving each kept histogram enough samples to select and confirm.

        ``MIN_PER_HISTOGRAM`` per histogram of the kept pairs (``keep``, or ``n_pairs`` when
        fewer are given) in selection and in confirmation (twice that in selection for
        real values, which learn an encoder on half of it). ``n_pairs = None``: the default
        families, screened down to ``keep``. ``local_share``: the share of the budget the
        local search takes from confirmation
        ([`live.with_local_search`][dpaudit.auditor.run.live.with_local_search]).
        """
        single = n_pairs is not None and n_pairs <= self.keep
        histograms = 2 * (self.keep if n_pairs is None else max(1, min(self.keep, n_pairs)))
        select_share = self.single_select_share if single else self.select_share
        confirm_share = 1.0 - (self.search_share if search else 0.0) - select_share
        confirm_share -= (0.0 if single else self.screen_share) + local_share
        floor = MIN_PER_HISTOGRAM * histograms
        need = max(floor * (2 if values else 1) / select_share, floor / confirm_share)
        return math.ceil(need) + histograms

    def focus_look(self) -> int:
        """The first look after which confirmation focuses on fewer pairs (all go on before)."""
        return min(FOCUS_LOOK, self.looks - 1)

    def confirm_schedule(self, budget: int, histograms: int) -> LookSchedule:
        """Looks of the sequential confirmation of ``budget`` samples over ``histograms``.

        Every histogram is sampled up to the focus look
        ([`focus_look`][dpaudit.auditor.planning.plan.AuditPlan.focus_look]), and one pair alone (two
        histograms) can then go on to the last look within the budget; each look is
        ``CONFIRM_GROWTH`` times the one before (``looks = 1``: one fixed-size look over every
        histogram).
        """
        shared = CONFIRM_GROWTH ** -(self.looks - 1 - self.focus_look())
        last = budget / (2 + max(histograms - 2, 0) * shared)
        first = int(last / CONFIRM_GROWTH ** (self.looks - 1))
        return LookSchedule(max(first, 1), CONFIRM_GROWTH, self.looks)

    @property
    def blackbox_alpha(self) -> float:
        """The α of the sampled bounds: ``alpha``, less the grey-box δ stage's share."""
        return float(self.alpha) - self.grey_delta_alpha

    @property
    def grey_delta_alpha(self) -> float:
        """The α of the grey-box δ bound: ``GREY_DELTA_SHARE × alpha`` when it runs, else 0."""
        return GREY_DELTA_SHARE * float(self.alpha) if self.grey_delta else 0.0

    def alpha_each(self, n_pairs: int) -> float:
        """Level of each one-sided interval: ``blackbox_alpha / (2 M)`` over ``M`` confirmed
        events."""
        n_events = max(1, min(self.keep, n_pairs)) * self.events_per_pair
        return self.blackbox_alpha / (2 * n_events)

    def seed_for(self, phase: str, round_: int, index: int) -> np.random.SeedSequence:
        """The seed stream of one histogram's draw in one round of one phase."""
        return np.random.SeedSequence(self.seed, spawn_key=(PHASES[phase], round_, index))
