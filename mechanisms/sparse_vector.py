"""The sparse vector technique (SVT) on the items of a histogram.

Two variants, both asking one query per item, ``q_i = counts[i]``, in index order
against ONE noisy threshold ``T̂ = T + Lap(·)`` drawn once:

* ``halting=False`` — seed 000 (000_4bf15007bce596ab.txt) Alg. 2 (Lyu et al.'s SVT):
  ``T̂ = T + Lap(c/ε₁)``, ``ν_i = Lap(2c/ε₂)``; answer ⊤ when ``q_i + ν_i >= T̂``;
  abort after the c-th ⊤. (ε₁ + ε₂, 0)-DP (Thm 2.8) for sensitivity-1 queries that may
  move in either direction, hence the claim under ``BoundedChange(1)``.
* ``halting=True`` — seed 001 (001_49698e97f2ea8cba.txt) Alg. 2: ``T̂ = T + Lap(1/ε₁)``,
  ``ν_i = Lap(1/ε₂)``; answer ⊤ when ``q_i + ν_i > T̂``, otherwise answer ⊥ and HALT;
  stop after ``cutoff`` ⊤ answers. The paper sets ε₁ = ε₂ = ε/2; Thm 3 proves (ε, 0)-DP
  for *monotonic* sensitivity-1 queries (Lyu et al. Thm 7), hence the claim under
  ``AddRemoveUser()`` (counts of one user move together).

Outcome encoding (a tuple of item ids, DESIGN.md "Outcomes"): the items answered ⊤, in
query (= ascending id) order, followed by ``BOTTOM`` iff fewer than ``cutoff`` items were
answered ⊤ (the mechanism ran out of queries, or — ``halting=True`` — halted on a ⊥).
The outcome determines the whole answer vector: ``halting=False``: every query up to the
c-th ⊤ (or all of them) was asked and the unlisted ones answered ⊥; ``halting=True``: the
⊤ items are the prefix ``0, 1, ..., j-1`` and query j (if it exists) answered ⊥. An
outcome is never empty: "no ⊤ at all" is ``(BOTTOM,)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, BoundedChange, PrivacyClaim
from .histogram import validate_counts
from .outcomes import BOTTOM, PAD
from .validation import require_bool, require_positive_float, require_positive_int

__all__ = ["SparseVector"]


def _real(name: str, value: object) -> float:
    # The threshold may be any finite real (also negative).
    import math
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SparseVector(TopKMechanism):
    """Sparse vector technique over the item counts; seed 000 Alg. 2 or seed 001 Alg. 2.

    Papers: 000_4bf15007bce596ab.txt Alg. 2 + Thm 2.8 (``halting=False``);
    001_49698e97f2ea8cba.txt Alg. 2 + Thm 3 (``halting=True``). See the module docstring
    for the outcome encoding.

    Parameters
    ----------
    threshold : T, the public threshold (finite real).
    epsilon1 : ε₁ > 0, budget of the threshold noise.
    epsilon2 : ε₂ > 0, budget of the query noise.
    cutoff : c >= 1, the number of ⊤ answers after which the mechanism stops.
    halting : False for seed 000 Alg. 2, True for seed 001 Alg. 2 (halt at the first ⊥).
    """

    threshold: float
    epsilon1: float
    epsilon2: float
    cutoff: int = 1
    halting: bool = False

    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "threshold", _real("threshold", self.threshold))
        object.__setattr__(self, "epsilon1", require_positive_float("epsilon1", self.epsilon1))
        object.__setattr__(self, "epsilon2", require_positive_float("epsilon2", self.epsilon2))
        object.__setattr__(self, "cutoff", require_positive_int("cutoff", self.cutoff))
        object.__setattr__(self, "halting", require_bool("halting", self.halting))

    # The two noise scales are methods so that the sampler and the exact law
    # (dpaudit.exact.stability_laws) share them, and a variant overrides both at once.
    def threshold_scale(self) -> float:
        """Laplace scale of the threshold noise: c/ε₁ (seed 000) or 1/ε₁ (seed 001)."""
        return (1.0 if self.halting else self.cutoff) / self.epsilon1

    def query_scale(self) -> float:
        """Laplace scale of each query's noise: 2c/ε₂ (seed 000) or 1/ε₂ (seed 001)."""
        return (1.0 / self.epsilon2) if self.halting else (2.0 * self.cutoff / self.epsilon2)

    @property
    def width(self) -> int:
        return self.cutoff

    @property
    def claim(self) -> PrivacyClaim:
        """(ε₁ + ε₂, 0): seed 000 Thm 2.8 (any direction) / seed 001 Thm 3 (monotonic)."""
        epsilon = self.epsilon1 + self.epsilon2
        neighbours = AddRemoveUser() if self.halting else BoundedChange(1)
        return PrivacyClaim(epsilon, 0.0, neighbours)

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        check_rng(rng)
        size = check_size(size)
        counts = validate_counts(counts)
        out = np.full((size, self.width), PAD, dtype=np.int64)
        if size == 0:
            return out
        t_scale = self.threshold_scale()
        noisy_threshold = self.threshold + (
            rng.laplace(0.0, t_scale, size) if t_scale > 0 else np.zeros(size)
        )
        if self.halting:
            # Only a prefix of at most `cutoff` queries can ever be asked.
            m = min(self.cutoff, counts.size)
            noisy = counts[:m][None, :] + rng.laplace(0.0, self.query_scale(), (size, m))
            passes = noisy > noisy_threshold[:, None]
            # number of leading ⊤ answers: index of the first ⊥, or m
            lead = np.where(passes.all(axis=1), m, np.argmin(passes, axis=1))
            columns = np.arange(self.width)
            out[:] = np.where(columns[None, :] < lead[:, None], columns[None, :], PAD)
            short = lead < self.cutoff
            out[np.flatnonzero(short), lead[short]] = BOTTOM
            return out
        d = counts.size
        noisy = counts[None, :] + rng.laplace(0.0, self.query_scale(), (size, d))
        above = noisy >= noisy_threshold[:, None]
        rank = np.cumsum(above, axis=1)
        chosen = above & (rank <= self.cutoff)
        rows, cols = np.nonzero(chosen)  # row-major: ascending item id within a row
        out[rows, rank[rows, cols] - 1] = cols
        found = chosen.sum(axis=1)
        short = found < self.cutoff
        out[np.flatnonzero(short), found[short]] = BOTTOM
        return out
