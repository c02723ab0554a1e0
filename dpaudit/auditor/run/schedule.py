"""What each phase of the pipeline draws: the phases' schedule, a confirmation in looks.

A live audit's schedule follows its budgets ([`live.LiveSchedule`][dpaudit.auditor.run.live.LiveSchedule]),
an offline one's is fixed by its plan
([`offline.source.FileSchedule`][dpaudit.auditor.offline.source.FileSchedule]); the pipeline
([`pipeline`][dpaudit.auditor.run.pipeline]) reads only this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..bounds.sequential import LookSchedule

__all__ = ["Looks", "Schedule", "histograms_of"]


@dataclass(frozen=True)
class Looks:
    """A sequential confirmation: its looks, the samples it may spend, when it stops.

    Parameters
    ----------
    schedule : cumulative sizes per histogram and α-spending levels of the looks.
    budget : samples the looks may draw in all.
    power_factor : the power a pass needs
        ([`power.power_shortfall`][dpaudit.auditor.results.power.power_shortfall]).
    epsilon_only : a pass on ε alone is accepted (δ's power is not chased).
    focus_look : the first look after which only the most informative pairs go on.
    """

    schedule: LookSchedule
    budget: int
    power_factor: float
    epsilon_only: bool
    focus_look: int


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

    @property
    def chases_delta(self) -> bool:
        """Whether selection spends a slot per pair on resolving the claimed δ (not when a
        pass on ε alone is accepted, or the grey-box stage resolved δ)."""
        ...

    def screen_rounds(self, n_candidates: int) -> int: ...
    def screen_size(self, rounds: int, n_histograms: int) -> int | None: ...
    def screen_target(self, candidates: Sequence) -> int: ...
    def select_size(self, n_histograms: int, screened: bool) -> int | None: ...
    def select_target(self, pairs: Sequence, n_kept: int) -> int: ...
    def confirm_size(self, n_histograms: int) -> int | None: ...
    def confirm_looks(self, n_histograms: int) -> Looks | None:
        """Confirmation in looks, or None for one confirmation of ``confirm_size``."""
        ...

    def confirm_alpha(self, n_chosen: int) -> float: ...
    def pilot(self, histograms: Sequence[tuple]) -> tuple[list, int | None]: ...
    def learn_size(self, n_kept: int) -> int | None: ...
    def select_extra(self, n_kept: int) -> int: ...
    def pair_confirm_size(self, n_kept: int) -> int | None: ...
    def value_looks(self, n_kept: int) -> Looks | None:
        """A value release's confirmation in looks over its ``n_kept`` selections, or None
        for one confirmation of ``pair_confirm_size`` per selection."""
        ...

    def samples_left(self, drawn: int) -> int | None:
        """Samples the audit may still draw once ``drawn`` are (None: only as planned)."""
        ...


def histograms_of(pairs) -> list[tuple]:
    """The distinct histograms of ``pairs`` in order of appearance (their stream indices)."""
    found: dict[tuple, None] = {}
    for pair in pairs:
        found.setdefault(pair.counts)
        found.setdefault(pair.counts2)
    return list(found)
