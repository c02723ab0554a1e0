"""diffprivlib's exponential mechanism as a dpaudit mechanism.

Only diffprivlib's public API is used: ``diffprivlib.mechanisms.Exponential``
(``epsilon``, ``sensitivity``, ``utility``, ``monotonic``, ``random_state``) and its
``randomise()``. The histogram of counts is the utility list (item ``i`` has utility
``c_i``), so a sensitivity of 1 covers dpaudit's relations:

* ``monotonic=False`` (diffprivlib's default) — utilities may move by up to the
  sensitivity either way: ε-DP under [`BoundedChange`][mechanisms.BoundedChange] ``(1)``;
* ``monotonic=True`` — "adding an individual can only increase the values": ε-DP
  under [`AddRemoveUser`][mechanisms.AddRemoveUser] (all counts move the same way).

diffprivlib 0.6.6 picks candidate ``i`` with probability
``∝ exp(ε u_i / ((2 − monotonic) Δ))`` (McSherry & Talwar 2007; seed
003_9293f5da18078e1b.txt Def. 4.1, Lemma 4.1), the law of
[`mechanisms.ExponentialMechanism`][mechanisms.ExponentialMechanism] with ε' = ε/(2 − monotonic) per
unit of count
([`DiffprivlibExponential.reference`][dpaudit.integrations.diffprivlib.DiffprivlibExponential.reference]);
the chi-square test in ``tests/dpaudit/integrations/test_diffprivlib.py`` checks this reading.

Randomness: diffprivlib accepts ``random_state``; each ``sample`` call draws one
32-bit seed from ``rng`` and gives it to a new ``Exponential`` built on the batch's
counts, whose ``randomise()`` is then called ``size`` times. Same ``rng`` state,
same batch: audits of this adapter are reproducible from the audit's seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import mpmath
import numpy as np
from diffprivlib.mechanisms import Exponential

from mechanisms import (
    AddRemoveUser,
    BoundedChange,
    ExponentialMechanism,
    PrivacyClaim,
    TopKMechanism,
)
from mechanisms.base import check_rng, check_size
from mechanisms.histogram import validate_counts
from mechanisms.validation import require_bool, require_positive_float, require_positive_int

__all__ = ["DiffprivlibExponential", "diffprivlib_version"]


def diffprivlib_version() -> str:
    """The installed diffprivlib version (for the audit's evidence)."""
    from importlib.metadata import version

    return version("diffprivlib")


@dataclass(frozen=True)
class DiffprivlibExponential(TopKMechanism):
    """``diffprivlib.mechanisms.Exponential`` with the counts as utilities: one item.

    Claim: ``(epsilon, 0)`` — diffprivlib's parameter — under ``BoundedChange(1)``
    (``monotonic=False``) or [`AddRemoveUser`][mechanisms.AddRemoveUser] (``monotonic=True``).
    A count moves by at most 1 under either relation, so any integer
    ``sensitivity >= 1`` keeps the claim true (larger values are only more
    conservative). Law:
    [`reference`][dpaudit.integrations.diffprivlib.DiffprivlibExponential.reference]. Reproducible
    from ``rng`` (module docstring).

    Parameters
    ----------
    epsilon : diffprivlib's ε (> 0).
    sensitivity : diffprivlib's utility sensitivity (integer >= 1).
    monotonic : diffprivlib's ``monotonic`` flag (and the relation the claim is stated under).
    """

    epsilon: float
    sensitivity: int = 1
    monotonic: bool = False

    #: Outputs come from outside: check ids against the histogram, not only the structure.
    outcome_validation: ClassVar[str] = "strict"
    #: One Python call per sample: ship every chunk to the workers, and keep them small.
    parallel_min_chunk: ClassVar[int] = 1
    preferred_chunk: ClassVar[int] = 5_000
    ordered: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(
            self, "sensitivity", require_positive_int("sensitivity", self.sensitivity)
        )
        object.__setattr__(self, "monotonic", require_bool("monotonic", self.monotonic))

    @property
    def width(self) -> int:
        return 1

    @property
    def claim(self) -> PrivacyClaim:
        relation = AddRemoveUser() if self.monotonic else BoundedChange(1)
        return PrivacyClaim(self.epsilon, 0.0, relation)

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` calls of ``randomise()`` on one ``Exponential`` seeded from ``rng``."""
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        mechanism = Exponential(
            epsilon=self.epsilon,
            sensitivity=self.sensitivity,
            utility=[int(c) for c in counts],
            monotonic=self.monotonic,
            random_state=int(rng.integers(2**32)),
        )
        # The loop is the edge of the library: one public call per release.
        picks = np.fromiter(
            (mechanism.randomise() for _ in range(size)), dtype=np.int64, count=size
        )
        return picks[:, None]

    def reference(self) -> ExponentialMechanism:
        """The built-in mechanism of the same law: ε' = ε / ((2 − monotonic) · sensitivity).

        [`mechanisms.ExponentialMechanism`][mechanisms.ExponentialMechanism] picks ``i`` with
        probability ``∝ exp(ε' c_i)``; its own claim equals this adapter's when sensitivity is 1.
        """
        per_unit = self.epsilon / ((1.0 if self.monotonic else 2.0) * self.sensitivity)
        return ExponentialMechanism(per_unit, self.monotonic)

    def exact_law(self, counts) -> dict[tuple[int, ...], mpmath.mpf]:
        """The law this adapter's reading of diffprivlib predicts: [`reference`][dpaudit.integrations.diffprivlib.DiffprivlibExponential.reference]'s exact law."""
        from dpaudit.exact import output_law

        return output_law(self.reference(), validate_counts(counts))

    def __str__(self) -> str:
        return (
            f"diffprivlib Exponential(epsilon={self.epsilon:g}, "
            f"sensitivity={self.sensitivity}, monotonic={self.monotonic})"
        )
