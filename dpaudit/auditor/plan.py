"""The audit plan: phases, budgets, seed streams — what an executor carries out.

An audit runs in phases, each on its own samples (so the confirmed bounds are valid):

1. ``search``  — probes that find where the output law changes (pair generation only),
   then ``local`` — a local search over histograms from there (:data:`.live.LOCAL_SHARE`);
2. ``screen``  — rounds of successive halving over the candidate pairs;
3. ``select``  — fresh samples of the kept pairs, on which events are chosen;
4. ``confirm`` — fresh samples of the kept pairs, on which the chosen events are bounded.

A mechanism that releases real values adds ``learn``: raw samples (a pilot for the
screening encoder, then per kept pair a share of the selection budget) on which the
encoders of :mod:`.value_encoding` are fitted before the draws they reduce.

The plan fixes everything that does not depend on what the samples show: the budget of
each phase and the seed stream of every draw, ``SeedSequence(seed, spawn_key=(phase,
round, histogram index))``. Which histograms a later phase samples depends on earlier
phases (that is the point of screening), but the seeds do not depend on the executor,
the number of workers or the order in which chunks finish: the same plan and seed give
the same result on one process, a process pool, or (later) a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PHASES", "AuditPlan"]

#: Phase names, in order, with the spawn-key index of each.
PHASES = {"search": 3, "screen": 0, "select": 1, "confirm": 2, "learn": 4, "local": 5}


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
    """

    samples: int
    seed: int
    alpha: float
    keep: int = 2
    events_per_pair: int = 3
    chunk: int = 250_000
    search_share: float = 0.05
    screen_share: float = 0.25
    select_share: float = 0.15
    single_select_share: float = 0.30

    def __post_init__(self):
        if not (isinstance(self.samples, (int, np.integer)) and self.samples >= 1000):
            raise ValueError(f"samples must be an integer >= 1000, got {self.samples!r}")
        if not 0 < float(self.alpha) < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")
        for name in ("keep", "events_per_pair", "chunk"):
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

    def alpha_each(self, n_pairs: int) -> float:
        """Level of each one-sided interval: ``alpha / (2 M)`` over ``M`` confirmed events."""
        n_events = max(1, min(self.keep, n_pairs)) * self.events_per_pair
        return float(self.alpha) / (2 * n_events)

    def seed_for(self, phase: str, round_: int, index: int) -> np.random.SeedSequence:
        """The seed stream of one histogram's draw in one round of one phase."""
        return np.random.SeedSequence(self.seed, spawn_key=(PHASES[phase], round_, index))
