"""One real, documented privacy bug rebuilt as a black box: the frozen value the corpus holds.

Each entry is what its authors shipped or published, with their own claim and neighbour
relation, the source that documents it, and the guarantee the mechanism really has. The
true guarantee says how it is known: computed exactly (mpmath, on a stated witness pair or
in closed form) or cited from the source's own analysis.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from mechanisms import PrivacyClaim

from ..auditor.sources.blackbox import BatchedBlackBox, make_claim

__all__ = ["CorpusEntry", "TrueGuarantee", "black_box"]


@dataclass(frozen=True)
class TrueGuarantee:
    """The guarantee a mechanism really has, and how it is known.

    Parameters
    ----------
    epsilon : the true ε at the claimed δ (``math.inf`` when no finite ε holds). Where
        only a lower bound is computed exactly, this is that bound and ``basis`` says so.
    delta : the true δ at the claimed ε.
    basis : how the numbers are known: ``"exact: ..."`` (closed form or mpmath on the
        stated pair) or ``"cited: ..."`` (the source's own analysis).
    compute : recomputes ``(epsilon, delta)`` exactly with mpmath (None when cited only).
    estimated : the components (``"epsilon"``, ``"delta"``) stated from an estimate, not
        computed exactly; ``compute`` does not reproduce them and ``basis`` says how they
        were estimated.
    """

    epsilon: float
    delta: float
    basis: str
    compute: Callable[[], tuple[float, float]] | None = None
    estimated: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return self.basis.startswith("exact")


@dataclass(frozen=True)
class CorpusEntry:
    """A real privacy bug: the shipped black box, its source, claimed and true guarantees.

    Parameters
    ----------
    name : short id, used as ``corpus:NAME`` on the command line.
    family : sparse vector, noisy max, histogram, partition selection, float noise.
    bug : one line: what is wrong.
    source : where it is documented (repository + issue/PR, or paper + algorithm).
    build : the black box as shipped (its ``claim`` is the authors' own).
    true : the guarantee it really has.
    pair : a neighbouring pair ``(counts, counts2)`` that witnesses the true guarantee.
    twin : the correct mechanism of the same source, which must never be flagged.
    twin_source : where the twin is documented.
    audit_options : options of the default audit that describe the setting (e.g. the
        number of queries of the source's own experiments), never a tuned budget.
    """

    name: str
    family: str
    bug: str
    source: str
    build: Callable[[], BatchedBlackBox]
    true: TrueGuarantee
    pair: tuple | None = None
    twin: Callable[[], BatchedBlackBox] | None = None
    twin_source: str = ""
    audit_options: dict = field(default_factory=dict)

    @property
    def claim(self) -> PrivacyClaim:
        return self.build().claim

    @property
    def reference(self) -> str:
        """The source (the name the command line's evidence records)."""
        return self.source

    def describe(self) -> str:
        claim = self.claim
        true_eps = "∞" if math.isinf(self.true.epsilon) else f"{self.true.epsilon:.4g}"
        return (
            f"{self.name}: {self.bug} [{self.source}] claims ({claim.epsilon:.4g}, "
            f"{claim.delta:.3g}); true ε {true_eps}, true δ {self.true.delta:.3g} "
            f"({self.true.basis.split(':')[0]}"
            + "".join(f"; {name} estimated" for name in self.true.estimated)
            + ")"
        )


def black_box(function, *, claim, width, name, values=0) -> BatchedBlackBox:
    """A batched black box ``function(counts, size, rng)`` with the authors' claim."""
    return BatchedBlackBox(function, make_claim(claim), int(width), name, int(values))
