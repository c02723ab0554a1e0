"""CatalogEntry: one broken mechanism, its bug, and a pair on which its exact ε exceeds the claim."""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mechanisms import TopKMechanism

from ..exact.law import output_law
from ..exact.profile import epsilon_at
from ..neighbours import is_neighbour


@dataclass(frozen=True)
class CatalogEntry:
    """One broken mechanism: what is wrong, how to build it, a pair that shows it exactly."""

    name: str
    bug: str
    build: Callable[[], TopKMechanism]
    pair: tuple | None = None  # (counts, counts2) where the exact ε exceeds the claim
    reference: str = ""
    audit_options: dict = field(default_factory=dict)  # e.g. a larger domain for SVT
    correct: Callable[[], TopKMechanism] | None = None  # the correct twin, which must pass

    @property
    def has_exact_law(self) -> bool:
        mech = self.build()
        return output_law.dispatch(type(mech)) is not output_law.dispatch(object)


def check_exact(entry: CatalogEntry):
    """``(claimed ε, exact ε at the claimed δ on entry.pair)`` via [`dpaudit.exact.profile.epsilon_at`][dpaudit.exact.profile.epsilon_at]."""
    if entry.pair is None:
        raise ValueError(f"catalog entry {entry.name!r} has no exact witness pair")

    mech = entry.build()
    claim = mech.claim
    if not is_neighbour(entry.pair[0], entry.pair[1], claim.neighbours):
        raise ValueError(
            f"catalog pair of {entry.name!r} is not a pair of neighbours under {claim.neighbours}"
        )
    eps = epsilon_at(mech, np.array(entry.pair[0]), np.array(entry.pair[1]), delta=claim.delta)
    return claim.epsilon, float(eps)
