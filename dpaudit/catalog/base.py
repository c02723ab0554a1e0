"""Frames and samplers shared by several families of the catalog (Gumbel order, Plackett–Luce law).

Seed 003 (003_9293f5da18078e1b.txt) Lemma 4.2: the top of counts plus Gumbel(1/ε)
noise, in order, is the peeling exponential mechanism (Plackett–Luce).
"""

from dataclasses import dataclass
from typing import ClassVar

import mpmath
import numpy as np

from mechanisms import AddRemoveUser, BoundedChange, PrivacyClaim, TopKMechanism
from mechanisms.validation import require_positive_float, require_positive_int

from ..exact.law import working_precision


def _gumbel_order(values: np.ndarray, epsilon: float, size: int, take: int, rng) -> np.ndarray:
    """Indices of the ``take`` largest of ``values + Gumbel(1/ε)``, per row, in order.

    Seed 003 Lemma 4.2: this is the peeling exponential mechanism (Plackett–Luce
    with weights exp(ε v)). ``argpartition`` then a small sort: O(d) per row.
    """
    noisy = epsilon * (values - values.max()) + rng.gumbel(size=(size, values.size))
    take = min(take, values.size)
    if take < values.size:
        part = np.argpartition(-noisy, take - 1, axis=1)[:, :take]
    else:
        part = np.broadcast_to(np.arange(values.size), (size, values.size)).copy()
    order = np.argsort(-np.take_along_axis(noisy, part, axis=1), axis=1)
    return np.take_along_axis(part, order, axis=1)


def _plackett_luce_law(values, epsilon, take, labels, stop=None):
    """Exact law of the top-``take`` of ``values + Gumbel(1/ε)`` in order (Plackett–Luce).

    ``labels[i]`` is the outcome label of index ``i``; drawing index ``stop``
    ends the outcome with it (⊥). Exact by seed 003 Lemma 4.2 (peeling EM).
    """
    with working_precision():
        eps = mpmath.mpf(epsilon)
        values = [
            mpmath.mpf(int(v)) if float(v).is_integer() else mpmath.mpf(float(v)) for v in values
        ]
        top = max(values)
        weights = [mpmath.exp(eps * (v - top)) for v in values]
        law: dict = {}

        def walk(prefix, remaining, prob):
            if len(prefix) == take or not remaining:
                key = tuple(labels[i] for i in prefix)
                law[key] = law.get(key, mpmath.mpf(0)) + prob
                return
            total = mpmath.fsum(weights[i] for i in remaining)
            for i in remaining:
                p = prob * weights[i] / total
                if i == stop:
                    key = tuple(labels[j] for j in prefix) + (labels[i],)
                    law[key] = law.get(key, mpmath.mpf(0)) + p
                else:
                    walk(prefix + [i], [j for j in remaining if j != i], p)

        walk([], list(range(len(values))), mpmath.mpf(1))
        return law


@dataclass(frozen=True)
class _BoundedChangeClaimsEpsilon(TopKMechanism):
    """A selection claiming (ε, 0) under BoundedChange(1): the frame of two entries (no law)."""

    epsilon: float = 1.0
    ordered: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))

    @property
    def claim(self):
        return PrivacyClaim(self.epsilon, 0.0, BoundedChange(1))


@dataclass(frozen=True)
class _KOutputsClaimsEpsilon(TopKMechanism):
    """k outputs claiming (ε, 0) under AddRemoveUser(): the frame of two entries (no law)."""

    k: int = 3
    epsilon: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))

    @property
    def width(self):
        return self.k

    @property
    def claim(self):
        return PrivacyClaim(self.epsilon, 0.0, AddRemoveUser())
