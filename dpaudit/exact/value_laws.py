"""Exact laws of real-valued releases (mpmath, closed form), registered by mechanism type.

``value_law(mech, counts)`` returns a [`ValueLaw`][dpaudit.exact.value_laws.ValueLaw]: the law of
the released items, ``items`` (``{item tuple: probability}``, the exact output law of the item
part), and ``box(items, intervals)``, the probability that exactly ``items`` are released and value
``j`` lies in ``intervals[j]`` for every ``j``. An interval is ``(low, high)``,
half-open ``[low, high)`` (±inf allowed); ``None`` puts no condition on the value; ``()``
asks for a missing value (NaN). Each family registers its law with
``@value_law.register(MechanismClass)`` next to the mechanism it describes (the
catalog registers the laws of its broken mechanisms), as
[`law.output_law`][dpaudit.exact.law.output_law] does.

The auditor's value events ([`dpaudit.auditor.values`][dpaudit.auditor.values]) are unions of such
boxes; each computes its own probability from a law (``event.exact_probability(law)``), so
this module needs nothing of the auditor. Events over the learned score are not
boxes; they return None and a re-check samples instead. Precision: ``mpmath.mp.dps``
of the caller ([`dpaudit.exact.working_precision`][dpaudit.exact.working_precision] gives 50
digits).

Registered here: [`mechanisms.NoisyCount`][mechanisms.NoisyCount] (one count plus discrete Laplace
noise) and [`mechanisms.NoisyCountsRelease`][mechanisms.NoisyCountsRelease] — the selector's exact
law ([`dpaudit.exact.output_law`][dpaudit.exact.output_law]) times, for each released item, the
probability of its noisy count's interval under the release's discrete Laplace noise
([`discrete_laplace_below`][dpaudit.exact.value_laws.discrete_laplace_below], with the sampler's
exact parameter).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Protocol

import mpmath
import numpy as np

from mechanisms import NoisyCount, NoisyCountsRelease
from mechanisms.discrete_laplace import RATIO_BITS

from .law import output_law

__all__ = [
    "NoisyCountLaw",
    "NoisyCountsLaw",
    "ValueLaw",
    "discrete_laplace_below",
    "has_value_law",
    "laplace_cdf",
    "value_event_probability",
    "value_law",
]


class ValueLaw(Protocol):
    """The law of a release with real values, as the auditor's events query it."""

    items: dict

    def box(self, items: tuple, intervals: tuple) -> mpmath.mpf: ...


@functools.singledispatch
def value_law(mech, counts) -> ValueLaw:
    """Exact law of the real-valued release ``mech`` on histogram ``counts``."""
    raise TypeError(f"no exact value law is known for {type(mech).__name__}")


def has_value_law(mech) -> bool:
    """Whether a value law is registered for ``mech``'s type."""
    return value_law.dispatch(type(mech)) is not value_law.dispatch(object)


def value_event_probability(mech, counts, event):
    """``P(event)`` for ``mech`` on ``counts`` exactly, or None where not closed form."""
    probability = getattr(event, "exact_probability", None)
    if probability is None or not has_value_law(mech):
        return None
    return probability(value_law(mech, counts))


def laplace_cdf(x, loc, scale) -> mpmath.mpf:
    """``P(loc + Lap(scale) < x)`` exactly (±inf allowed)."""
    if x == np.inf:
        return mpmath.mpf(1)
    if x == -np.inf:
        return mpmath.mpf(0)
    z = (mpmath.mpf(x) - mpmath.mpf(loc)) / mpmath.mpf(scale)
    return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2


def discrete_laplace_below(x, loc: int, ratio) -> mpmath.mpf:
    """``P(loc + Z < x)`` for discrete Laplace ``Z``, ``P(Z = z) ∝ ratio^{|z|}`` (±inf allowed).

    With ``r = ratio``: ``P(Z <= z) = r^{−z}/(1 + r)`` for ``z < 0`` and
    ``1 − r^{z+1}/(1 + r)`` for ``z >= 0`` (sums of the geometric tails of
    ``P(Z = z) = (1 − r)/(1 + r) r^{|z|}``).
    """
    if x == np.inf:
        return mpmath.mpf(1)
    if x == -np.inf:
        return mpmath.mpf(0)
    z = math.ceil(x) - int(loc) - 1  # the largest integer z with loc + z < x
    r = mpmath.mpf(ratio)
    return r ** (-z) / (1 + r) if z < 0 else 1 - r ** (z + 1) / (1 + r)


@dataclass(frozen=True)
class NoisyCountsLaw:
    """The exact law of [`mechanisms.NoisyCountsRelease`][mechanisms.NoisyCountsRelease] on one histogram."""

    mech: NoisyCountsRelease
    histogram: tuple[int, ...]
    items: dict

    def below(self, x, count) -> mpmath.mpf:
        """``P(count + noise < x)``: discrete Laplace noise, ``r = noise_ratio / 2^53``."""
        ratio = mpmath.mpf(self.mech.noise_ratio) / mpmath.mpf(2) ** RATIO_BITS
        return discrete_laplace_below(x, count, ratio)

    def box(self, items, intervals):
        p = self.items.get(tuple(items), mpmath.mpf(0))
        if p == 0:
            return p
        for column, interval in enumerate(intervals):
            item = items[column] if column < len(items) else -2
            if interval is None:
                continue
            if item < 0:  # no value at ⊥ / PAD: NaN
                if interval != ():
                    return mpmath.mpf(0)
                continue
            if interval == ():
                return mpmath.mpf(0)
            count = self.histogram[item] if item < len(self.histogram) else 0
            low, high = interval
            p *= self.below(high, count) - self.below(low, count)
        return p


@value_law.register(NoisyCountsRelease)
def _noisy_counts_law(mech, counts):
    items = {tuple(k): v for k, v in output_law(mech.selector, np.asarray(counts)).items()}
    return NoisyCountsLaw(mech, tuple(int(c) for c in np.asarray(counts)), items)


@dataclass(frozen=True)
class NoisyCountLaw:
    """The exact law of [`mechanisms.NoisyCount`][mechanisms.NoisyCount]: one count plus discrete Laplace noise."""

    count: int
    ratio: mpmath.mpf

    @property
    def items(self) -> dict:
        return {(): mpmath.mpf(1)}  # no items are released

    def box(self, items, intervals):
        (interval,) = intervals
        if items != () or interval == ():
            return mpmath.mpf(0)
        if interval is None:
            return mpmath.mpf(1)
        low, high = interval
        below = discrete_laplace_below
        return below(high, self.count, self.ratio) - below(low, self.count, self.ratio)


@value_law.register(NoisyCount)
def _noisy_count_law(mech, counts):
    ratio = mpmath.mpf(mech.noise_ratio) / mpmath.mpf(2) ** RATIO_BITS
    return NoisyCountLaw(mech.count_of(counts), ratio)
