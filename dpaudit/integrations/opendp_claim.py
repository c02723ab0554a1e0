"""An OpenDP measurement's privacy map read as a claim at the histogram reading's ``d_in``.

In the measurement's own measure (module docstring of
[`dpaudit.integrations.opendp_measurement`][dpaudit.integrations.opendp_measurement]): ``ε``,
``(ε, δ)``, a ρ-zCDP curve, or the points of a privacy curve around the head ``delta``.
"""

from __future__ import annotations

import math

import opendp.prelude as dp
from opendp.mod import OpenDPException

from mechanisms import PrivacyClaim
from mechanisms.profiles import ProfilePoints, ZeroConcentratedDP

from .opendp_input import HistogramReading, refuse

__all__ = ["read_claim", "zcdp_claim"]

#: Steps of the δ grid a curve is sampled at, around the head δ (``delta · 10^j``).
CURVE_STEPS = range(-3, 4)


def zcdp_claim(measurement, d_in, relation, delta: float) -> PrivacyClaim:
    """OpenDP's ρ = ``map(d_in)`` as a zCDP curve, headed by its point at ``delta``."""
    profile = ZeroConcentratedDP(float(measurement.map(d_in)))
    return PrivacyClaim.from_profile(profile, relation, delta=delta)


def _curve_points(epsilon_at, delta: float, shift: float = 0.0) -> ProfilePoints:
    """``(ε(δ'), shift + δ')`` for ``δ' = delta · 10^j``, ε ascending (curve's points).

    The point at ``delta`` itself must exist; one the curve cannot give further out is left out.
    """
    points: dict[float, float] = {}
    for step in CURVE_STEPS:
        at = delta * 10.0**step
        if not (at > 0 and shift + at < 1):
            continue
        try:
            epsilon = float(epsilon_at(at))
        except OpenDPException:
            if step == 0:
                raise
            continue
        if math.isfinite(epsilon):
            points[epsilon] = min(points.get(epsilon, 1.0), shift + at)
    return ProfilePoints(tuple(sorted(points.items())))


def read_claim(measurement, reading: HistogramReading, delta: float) -> PrivacyClaim:
    """The measurement's privacy map at ``reading.d_in``, in its own measure (module docstring)."""
    measure, relation = measurement.output_measure, reading.relation
    try:
        if measure == dp.max_divergence():
            return PrivacyClaim(float(measurement.map(reading.d_in)), 0.0, relation)
        if measure == dp.zero_concentrated_divergence():
            return zcdp_claim(measurement, reading.d_in, relation, delta)
        if measure == dp.approximate(dp.max_divergence()):
            epsilon, spent = measurement.map(reading.d_in)
            return PrivacyClaim(float(epsilon), float(spent), relation)
        if measure == dp.approximate(dp.zero_concentrated_divergence()):
            rho, spent = measurement.map(reading.d_in)
            curve = _curve_points(ZeroConcentratedDP(float(rho)).epsilon_at, delta, float(spent))
            return PrivacyClaim.from_profile(curve, relation, delta=float(spent) + delta)
        if measure == dp.smoothed_max_divergence():
            profile = measurement.map(reading.d_in)
            return PrivacyClaim.from_profile(
                _curve_points(profile.epsilon, delta), relation, delta=delta
            )
    except OpenDPException as error:
        raise refuse(
            f"the privacy map failed at d_in={reading.d_in!r} ({error.variant}: "
            f"{str(error.message).strip()})",
            "check the measurement's own map at that distance",
        ) from None
    raise refuse(
        f"output_measure {measure!r} has no (ε, δ) reading here",
        "cast it to max_divergence, approximate(max_divergence), zero_concentrated_divergence "
        "or smoothed_max_divergence (dp.c.make_zCDP_to_approxDP, dp.c.make_fix_delta, ...)",
    )
