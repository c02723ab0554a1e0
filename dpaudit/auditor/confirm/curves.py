"""Curve claims: bounds that exceed a privacy profile δ(ε) at some ε.

A [`ProfileClaim`][mechanisms.ProfileClaim] (ρ-zCDP, μ-GDP, a list of points) allows δ(ε) at every
ε; a witness violates it where ``p_low − e^ε q_high − δ(ε)`` is largest
([`mechanisms.profiles.most_violating_epsilon`][mechanisms.profiles.most_violating_epsilon]).
"""

from __future__ import annotations

__all__ = ["curve_evidence", "curve_exceeded", "curve_violated"]


def curve_exceeded(claim, p_low: float, q_high: float) -> bool:
    """``P >= p_low`` and ``Q <= q_high`` exceed a curve claim δ(ε) at some ε.

    A [`ProfileClaim`][mechanisms.ProfileClaim] (a privacy profile: ρ-zCDP, μ-GDP, a list of
    points) allows δ(ε) at every ε, not only at its head point; the bounds violate it when
    ``p_low − e^ε q_high > δ(ε)`` where that is largest
    ([`mechanisms.profiles.most_violating_epsilon`][mechanisms.profiles.most_violating_epsilon]).
    False for a single-point claim, which [`summarise`][dpaudit.auditor.confirm.confirmation.summarise]
    tests directly. Bounds are clipped to [0, 1] first.
    """
    from mechanisms.claims import ProfileClaim
    from mechanisms.profiles import most_violating_epsilon

    if not isinstance(claim, ProfileClaim):
        return False
    p, q = min(max(p_low, 0.0), 1.0), min(max(q_high, 0.0), 1.0)
    return most_violating_epsilon(claim, p, q)[1] > 0


def curve_violated(witnesses, claim) -> bool:
    """Some witness's bounds exceed a curve claim
    ([`curve_exceeded`][dpaudit.auditor.confirm.curves.curve_exceeded]). The bounds hold together with
    probability ``>= 1 − alpha`` whatever ε is read, so this is as valid as the head-point test."""
    return any(curve_exceeded(claim, w.p_low, w.q_high) for w in witnesses)


def curve_evidence(witnesses, claim) -> dict | None:
    """For a curve claim: the profile and where its best witness violates it most.

    ``{"profile": ..., "epsilon": ε*, "delta_allowed": δ(ε*), "excess": ...}`` for the
    witness whose bounds exceed the curve by the most
    ([`mechanisms.profiles.most_violating_epsilon`][mechanisms.profiles.most_violating_epsilon]);
    None for a single-point claim.
    """
    from mechanisms.claims import ProfileClaim
    from mechanisms.profiles import most_violating_epsilon, profile_to_dict

    if not isinstance(claim, ProfileClaim):
        return None
    record: dict = {"profile": profile_to_dict(claim.profile)}
    found = [(most_violating_epsilon(claim, w.p_low, w.q_high), i) for i, w in enumerate(witnesses)]
    if found:
        (epsilon, excess), index = max(found, key=lambda f: f[0][1])
        record.update(
            epsilon=float(epsilon),
            delta_allowed=float(claim.profile.delta_at(epsilon)),
            excess=float(excess),
            witness=int(index),
        )
    return record
