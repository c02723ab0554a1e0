"""The certified interval: what a certification returns and writes as a certificate."""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath

from .search import Leaf
from .shapes import LimitDomainModel

__all__ = ["FORMAT", "FORMAT_VERSION", "CertifiedInterval"]

#: Certificate format name and version. Fields are never removed; new fields are optional.
FORMAT = "dpaudit-certificate"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class CertifiedInterval:
    """``[lower, upper]`` on the worst δ at ε (or ε at δ) over every neighbouring pair of a family.

    Parameters
    ----------
    mechanism : ``repr`` of the mechanism.
    model : the family as the certifier sees it (k, k̄, ε, ⊥ offset, d, Δ).
    quantity : ``"delta"`` (worst δ at ε = ``at``) or ``"epsilon"`` (worst ε at δ = ``at``).
    at : the ε or δ.
    lower : the exact value (mpmath, from ``dpaudit.exact.output_law``) of ``pair``: attained.
    upper : the largest leaf bound: no pair of the family exceeds it.
    pair : ``(D, D')`` attaining ``lower``, ``D' = D + 1_S``.
    leaves : the regions that cover the family, each with its bound.
    converged : whether ``upper <= (1 + rtol) · lower`` was reached within the time budget.
    seconds : wall time of the search.
    regions : regions bounded.
    mechanism_spec : the mechanism as ``dpaudit.provenance.mechanism_spec`` records it (None for
        a mechanism that is not a built-in class): ``dpaudit recheck`` rebuilds it from this.
    """

    mechanism: str
    model: LimitDomainModel
    quantity: str
    at: float
    lower: mpmath.mpf
    upper: float
    pair: tuple[tuple[int, ...], tuple[int, ...]]
    leaves: tuple[Leaf, ...]
    converged: bool
    seconds: float
    regions: int
    mechanism_spec: dict | None = None

    def __str__(self) -> str:
        what = "delta at epsilon" if self.quantity == "delta" else "epsilon at delta"
        family = "every d >= 2 kbar" if self.model.d is None else f"d = {self.model.d}"
        return "\n".join(
            [
                self.mechanism,
                f"worst {what} = {self.at:.6g} over every neighbouring pair ({family}, any counts):",
                f"    certified in [{mpmath.nstr(self.lower, 10)}, {self.upper:.10g}]"
                + ("" if self.converged else " (time budget reached before the tolerance)"),
                f"    lower end attained by D={list(self.pair[0])} -> D'={list(self.pair[1])}",
                f"    {len(self.leaves)} leaf regions, {self.regions} regions bounded, "
                f"{self.seconds:.1f} s",
            ]
        )

    def to_dict(self) -> dict:
        """The certificate as JSON-ready data (read back by ``recheck_certificate``)."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "mechanism": self.mechanism,
            "mechanism_spec": self.mechanism_spec,
            "model": self.model.to_dict(),
            "quantity": self.quantity,
            "at": self.at,
            "lower": mpmath.nstr(self.lower, 30),
            "upper": "inf" if math.isinf(self.upper) else self.upper,
            "pair": [list(self.pair[0]), list(self.pair[1])],
            "converged": self.converged,
            "seconds": self.seconds,
            "regions": self.regions,
            "leaves": [leaf.to_dict() for leaf in self.leaves],
        }
