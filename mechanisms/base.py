"""The interface every top-k mechanism of this project implements.

A mechanism is an immutable (frozen) dataclass whose constructor validates its
parameters. It exposes

* ``sample(counts, size, rng)`` -> ``(size, width)`` int64 batch, vectorized;
* ``run(counts, rng)`` -> one outcome tuple (the first row of ``sample(.., 1, ..)``,
  so the same generator state gives the same result both ways);
* ``claim`` -> [`PrivacyClaim`][mechanisms.claims.PrivacyClaim] from its paper's theorem;
* ``width`` -> the number of columns of a batch (the longest possible outcome);
* ``ordered`` -> whether outcomes are in selection order (else ascending sets).

A mechanism whose algorithm can only ever output items of a data-dependent set (the true top-k̄
of a limited domain, the top-k set of a stability release) may also declare that set,
``output_support(counts)`` (the [`DeclaresOutputSupport`][mechanisms.base.DeclaresOutputSupport]
protocol): an item outside it has probability exactly 0, which makes the outputs of a neighbour
that reach it a structural zero, the event where such mechanisms spend their δ.
"""

from __future__ import annotations

import abc
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from .claims import PrivacyClaim
from .outcomes import MixedBatch, outcome_from_row
from .validation import require_nonnegative_int

__all__ = ["DeclaresOutputSupport", "TopKMechanism", "check_rng", "check_size"]


def check_rng(rng: np.random.Generator) -> np.random.Generator:
    """Reject anything but a ``numpy.random.Generator`` (never global state, never a seed)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def check_size(size: int) -> int:
    """The number of samples requested: an integer >= 0."""
    return require_nonnegative_int("size", size)


class TopKMechanism(abc.ABC):
    """Abstract base: see the module docstring for the contract."""

    ordered: ClassVar[bool] = True

    @property
    @abc.abstractmethod
    def width(self) -> int:
        """Columns of a sample batch: the longest outcome this mechanism can return."""

    @property
    @abc.abstractmethod
    def claim(self) -> PrivacyClaim:
        """The guarantee the paper proves for these parameters."""

    @abc.abstractmethod
    def sample(
        self, counts: ArrayLike, size: int, rng: np.random.Generator
    ) -> np.ndarray | MixedBatch:
        """``size`` independent outcomes as an int64 ``(size, width)`` batch padded with PAD.

        A mechanism that releases real values too returns a
        [`MixedBatch`][mechanisms.outcomes.MixedBatch] of those items and values.
        """

    def run(self, counts: ArrayLike, rng: np.random.Generator) -> tuple[int, ...]:
        """One outcome tuple (a mechanism that releases values overrides this)."""
        batch = self.sample(counts, 1, rng)
        if isinstance(batch, MixedBatch):
            raise NotImplementedError(f"{type(self).__name__} releases values: it overrides run()")
        return outcome_from_row(batch[0])


@runtime_checkable
class DeclaresOutputSupport(Protocol):
    """A mechanism that declares which items it can output on a histogram.

    ``output_support(counts)`` is the set of item ids that appear in an outcome with positive
    probability; ``BOTTOM`` and ``PAD`` are markers, not items, and are never in it. The
    declaration is exact both ways: an outcome holding an item outside the set has probability
    exactly 0 (not merely a small one), and every item of the set appears with positive
    probability. Declare it only where the paper's algorithm guarantees it, citing the line.
    """

    def output_support(self, counts: ArrayLike) -> frozenset[int]:
        """The items that can appear in an outcome on ``counts`` (a histogram or a TopCounts)."""
        ...
