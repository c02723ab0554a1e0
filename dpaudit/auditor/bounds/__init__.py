"""Bounds: one-sided binomial bounds and the bounds of an event
([`statistics`][dpaudit.auditor.bounds.statistics]), the α-spending looks
([`sequential`][dpaudit.auditor.bounds.sequential]), and bounds on weighted (importance-sampled)
frequencies ([`weighted_bounds`][dpaudit.auditor.bounds.weighted_bounds])."""

from .sequential import LookSchedule
from .statistics import (
    delta_lower_bound,
    detectable_delta,
    detectable_epsilon,
    epsilon_lower_bound,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)
from .weighted_bounds import WeightedPrivacyBounds, privacy_lower_bounds

__all__ = [
    "LookSchedule",
    "WeightedPrivacyBounds",
    "delta_lower_bound",
    "detectable_delta",
    "detectable_epsilon",
    "epsilon_lower_bound",
    "event_bounds",
    "one_sided_lower",
    "one_sided_upper",
    "privacy_lower_bounds",
]
