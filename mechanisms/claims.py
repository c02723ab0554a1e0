"""Privacy claims and the neighbour relations they are stated for.

A mechanism's ``claim`` is a :class:`PrivacyClaim` — ``(epsilon, delta,
neighbours)`` — computed by :mod:`mechanisms.accounting` from its paper's
theorem, never typed in by hand.

Relations (DESIGN.md, "Neighbours"):

* :class:`AddRemoveUser` — add or remove one user; a user adds at most 1 to
  any count, to any number of items (``max_items=None``, unrestricted) or to
  at most Δ items (``max_items=Δ``, the Δ-restricted setting).
  ``c' = c ± s``, ``s ∈ {0,1}^d``, ``|s| <= Δ``, ``c' >= 0``.
* :class:`BoundedChange` — every count moves by at most ``max_change`` in
  either direction independently (the relation DP-Sniper and most
  report-noisy-max analyses use); strictly larger than add/remove.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .validation import require_positive_int

__all__ = ["UNRESTRICTED", "AddRemoveUser", "BoundedChange", "NeighbourRelation", "PrivacyClaim"]


@dataclass(frozen=True)
class AddRemoveUser:
    """Add or remove one user who touches at most ``max_items`` items (None: any number)."""

    max_items: int | None = None

    def __post_init__(self):
        if self.max_items is not None:
            require_positive_int("max_items", self.max_items)

    def __str__(self) -> str:
        if self.max_items is None:
            return "add/remove one user (unrestricted)"
        return f"add/remove one user touching <= {self.max_items} items"


@dataclass(frozen=True)
class BoundedChange:
    """Every count may change by at most ``max_change`` in either direction."""

    max_change: int = 1

    def __post_init__(self):
        require_positive_int("max_change", self.max_change)

    def __str__(self) -> str:
        return f"each count moves by <= {self.max_change} either way"


NeighbourRelation = AddRemoveUser | BoundedChange
UNRESTRICTED = AddRemoveUser(None)


class PrivacyClaim(NamedTuple):
    """``(epsilon, delta, neighbours)``: the mechanism is (ε, δ)-DP under ``neighbours``."""

    epsilon: float
    delta: float
    neighbours: NeighbourRelation

    def __str__(self) -> str:
        return f"({self.epsilon:.6g}, {self.delta:.6g})-DP, {self.neighbours}"
