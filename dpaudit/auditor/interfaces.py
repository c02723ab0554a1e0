"""The auditor's roles as Protocols, and the small values they exchange.

DESIGN.md, "How the auditor is organised": pair sources propose neighbouring
histograms, sample sources draw outcome tallies under the plan's seed streams, testers
turn tallies and a failure probability into bounds with the event that witnesses them.
Every other module of the auditor depends downward on these names; this one imports
nothing of dpaudit at run time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from dpaudit.neighbours.pairs import NeighbourPair
    from mechanisms import MixedBatch, PrivacyClaim

    from .results.result import Witness
    from .values.outcome_events import Event

__all__ = ["ChosenEvent", "PairSource", "SampleSource", "Tally", "Tester"]


class Tally(NamedTuple):
    """The outcomes of one histogram's draw: ``{(encoded) outcome: count}`` and how many."""

    counter: Counter
    n: int


class ChosenEvent(NamedTuple):
    """An event chosen before confirmation, on ``oriented`` (the pair read P -> Q)."""

    pair: NeighbourPair
    oriented: NeighbourPair
    event: Event


@runtime_checkable
class SampleSource(Protocol):
    """Draws tallies of histograms for the pipeline's phases (live executors, outcome files).

    ``phase`` is one of ``plan.PHASES``; ``round_`` and the histogram's position
    in ``histograms`` select its seed stream
    ([`plan.AuditPlan.seed_for`][dpaudit.auditor.planning.plan.AuditPlan.seed_for]), so the tallies of a draw
    do not depend on where it runs. ``per_histogram`` None asks for what a fixed design planned
    (outcome files); a live source needs a number.
    """

    #: Longest outcome (item ids per row).
    width: int
    #: Real values per outcome (0 for item ids only); draws then need an ``encoder``.
    value_width: int

    @property
    def samples(self) -> int:
        """Outcomes drawn (or read) so far, raw ones included."""
        ...

    @property
    def description(self) -> str:
        """What drew the samples, for the result's evidence ("local (1 process)", ...)."""
        ...

    def draw(
        self,
        phase: str,
        round_: int,
        histograms: Sequence[tuple],
        per_histogram: int | None,
        encoder: Any = None,
    ) -> dict[tuple, Tally]:
        """``{histogram: Tally}``, the outcomes reduced by ``encoder`` if given."""
        ...

    def raw(
        self, phase: str, round_: int, histograms: Sequence[tuple], per_histogram: int | None
    ) -> list[MixedBatch]:
        """Unreduced outcomes of a value release, one batch per histogram (to fit encoders)."""
        ...


@runtime_checkable
class PairSource(Protocol):
    """A family of neighbouring pairs; targeted ones (built for the mechanism) are never thinned."""

    targeted: bool

    def pairs(self, rng: np.random.Generator) -> list[NeighbourPair]:
        """The family's pairs; ``rng`` for families that draw (random pairs, thinning)."""
        ...


class Tester(Protocol):
    """Bounds the chosen events on fresh tallies at one-sided level ``alpha_each`` each.

    Returns one [`result.Witness`][dpaudit.auditor.results.witness.Witness] per chosen event: ε at the
    claimed δ, δ at the claimed ε, and the event with its counts
    ([`confirmation.confirm_events`][dpaudit.auditor.confirm.confirmation.confirm_events]).
    """

    def __call__(
        self,
        chosen: Sequence[ChosenEvent],
        tallies: dict[tuple, Tally],
        alpha_each: float,
        claim: PrivacyClaim,
        /,
    ) -> list[Witness]: ...
