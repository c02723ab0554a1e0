"""Exact privacy profiles: hockey-stick divergences and the exact ε at a given δ.

For output laws ``P`` (on ``c``) and ``Q`` (on ``c'``) the hockey-stick
divergence ``δ_{P‖Q}(ε) = Σ_o max(0, P(o) − e^ε Q(o))`` is the smallest δ for
which ``P(S) <= e^ε Q(S) + δ`` holds for every event ``S`` (the event
``{o : P(o) > e^ε Q(o)}`` attains it). A mechanism is (ε, δ)-DP on the pair
iff ``max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) <= δ`` (Balle & Wang 2018, Thm 5 /
the privacy-profile characterisation; Dwork & Roth 2014, Def. 2.4).

Everything is computed in ``mpmath`` at ``DEFAULT_DIGITS`` (50) digits.
"""

from __future__ import annotations

from collections.abc import Mapping

import mpmath
import numpy as np

from mechanisms.claims import RELATIONS
from mechanisms.histogram import validate_counts

from ..neighbours.relations import is_neighbour
from .law import output_law, working_precision

__all__ = [
    "epsilon_at",
    "epsilon_from_laws",
    "hockey_stick",
    "privacy_profile",
    "profile_from_laws",
    "worst_event",
]


def _epsilon_value(epsilon):
    """ε as an mpf (``+inf`` allowed), rejecting NaN and non-numbers."""
    if isinstance(epsilon, bool):
        raise ValueError(f"epsilon must be a real number, got {epsilon!r}")
    try:
        value = mpmath.mpf(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon must be a real number, got {epsilon!r}") from None
    if mpmath.isnan(value) or value == mpmath.ninf:
        raise ValueError(f"epsilon must be a real number or +inf, got {epsilon!r}")
    return value


def _delta_value(delta):
    if isinstance(delta, bool):
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}")
    try:
        value = mpmath.mpf(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}") from None
    if mpmath.isnan(value) or value < 0 or value > 1:
        raise ValueError(f"delta must be a number in [0, 1], got {delta!r}")
    return value


def _check_law(name: str, law) -> Mapping:
    if not isinstance(law, Mapping):
        raise TypeError(
            f"{name} must be a mapping {{outcome: probability}}, got {type(law).__name__}"
        )
    return law


def hockey_stick(law_p, law_q, epsilon) -> mpmath.mpf:
    """One-directional hockey-stick divergence ``Σ_o max(0, P(o) − e^ε Q(o))``.

    Balle & Wang (2018), "Improving the Gaussian mechanism", Def. of the
    privacy profile (Thm 5); equals ``sup_S P(S) − e^ε Q(S)``. Outcomes
    missing from a law have probability 0. ``epsilon = +inf`` gives the mass
    of ``P`` where ``Q`` is 0; a negative ε is allowed (the divergence is
    defined for every real ε).

    Parameters
    ----------
    law_p, law_q : ``{outcome: probability}`` mappings (e.g. from ``output_law``).
    epsilon : real number or ``+inf``.
    """
    _check_law("law_p", law_p)
    _check_law("law_q", law_q)
    with working_precision():
        epsilon = _epsilon_value(epsilon)
        total = mpmath.mpf(0)
        if epsilon == mpmath.inf:
            for outcome, p in law_p.items():
                if p > 0 and not law_q.get(outcome, 0) > 0:
                    total += p
            return +total
        scale = mpmath.exp(epsilon)
        for outcome, p in law_p.items():
            gap = p - scale * law_q.get(outcome, 0)
            if gap > 0:
                total += gap
        return +total


def profile_from_laws(law_p, law_q, epsilon) -> mpmath.mpf:
    """Two-sided exact δ(ε) of a pair of laws: ``max(δ_{P‖Q}(ε), δ_{Q‖P}(ε))``."""
    return max(hockey_stick(law_p, law_q, epsilon), hockey_stick(law_q, law_p, epsilon))


def require_neighbours(mech, counts, counts2, neighbours=None) -> None:
    """Refuse a pair that is not neighbouring under ``neighbours`` (default: ``mech``'s claim's).

    An exact ε or δ of two histograms that are not neighbours says nothing about the claim,
    so every exact entry point that takes a mechanism and a pair checks it here. The two must
    have the same length: the number of items is the domain the mechanism selects from, and a
    mechanism's law on ``[2, 0]`` is not its law on ``[2, 0, 0, 0, 0]``. A claim without one of
    the project's relations, or a prepared input (``TopCounts``) in place of counts, is not
    checked.
    """
    relation = neighbours
    if relation is None:
        relation = getattr(getattr(mech, "claim", None), "neighbours", None)
    plain = all(isinstance(c, list | tuple | np.ndarray) for c in (counts, counts2))
    if not isinstance(relation, RELATIONS) or not plain:
        return
    a, b = validate_counts(counts, "counts"), validate_counts(counts2, "counts2")
    if a.size != b.size:
        raise ValueError(
            f"counts and counts2 differ in length ({a.size} vs {b.size}): neighbours share the "
            "item domain; pad the shorter one with zeros if its items exist with count 0"
        )
    if not is_neighbour(a, b, relation):
        whose = "the claim's relation" if neighbours is None else "the relation given"
        raise ValueError(
            f"counts {a.tolist()} and counts2 {b.tolist()} are not neighbours under {whose} "
            f"({relation}), so their exact ε or δ says nothing about the claim; pass neighbours= "
            "for another relation, or for any two histograms use epsilon_from_laws / "
            "profile_from_laws on their output_law"
        )


def privacy_profile(mech, counts, counts2, epsilon, *, neighbours=None) -> mpmath.mpf:
    """Exact δ(ε) of ``mech`` on the pair ``(counts, counts2)``, both directions.

    The smallest δ such that the mechanism's outputs on the two histograms
    are (ε, δ)-indistinguishable (Balle & Wang 2018, Thm 5), from the exact
    laws ``dpaudit.exact.output_law``. The pair must be neighbouring under the
    relation of ``mech.claim`` (else ``ValueError``); any two laws can be profiled
    with [`profile_from_laws`][dpaudit.exact.profile.profile_from_laws].

    Parameters
    ----------
    mech : a mechanism with a registered exact law.
    counts, counts2 : the two histograms.
    epsilon : real number or ``+inf``.
    neighbours : the relation the pair must satisfy (default: ``mech.claim.neighbours``).
    """
    require_neighbours(mech, counts, counts2, neighbours)
    with working_precision():
        return profile_from_laws(output_law(mech, counts), output_law(mech, counts2), epsilon)


def _one_direction_epsilon(law_p, law_q, delta):
    """Smallest ε >= 0 with ``δ_{P‖Q}(ε) <= delta``, solved in closed form.

    δ_{P‖Q} is continuous and non-increasing in ε. Sorting the log-ratios
    ``r_o = ln(P_o/Q_o)`` (only ``r_o > 0`` matter for ε >= 0) descending,
    on ``[r_{j+1}, r_j]`` the active outcomes are the first ``j`` and
    ``δ(ε) = A_j − e^ε B_j`` with ``A_j`` = (mass where Q = 0) + Σ_{i<=j} P_i
    and ``B_j = Σ_{i<=j} Q_i``; so the root is ``ln((A_j − delta)/B_j)`` on
    the first segment whose lower end still has δ > delta. No iteration.
    """
    infinite_mass = mpmath.mpf(0)
    ratios = []
    for outcome, p in law_p.items():
        if not p > 0:
            continue
        q = law_q.get(outcome, 0)
        if not q > 0:
            infinite_mass += p
        elif p > q:
            ratios.append((mpmath.log(p / q), p, mpmath.mpf(q)))
    if infinite_mass > delta:
        return mpmath.inf
    ratios.sort(key=lambda item: item[0], reverse=True)
    active_p, active_q = infinite_mass, mpmath.mpf(0)
    for index, (_, p, q) in enumerate(ratios):
        active_p += p
        active_q += q
        lower = ratios[index + 1][0] if index + 1 < len(ratios) else mpmath.mpf(0)
        if active_p - mpmath.exp(lower) * active_q > delta:
            # The root lies in (lower, r_index]; clamp guards last-digit rounding.
            root = mpmath.log((active_p - delta) / active_q)
            return max(root, lower)
    return mpmath.mpf(0)


def epsilon_from_laws(law_p, law_q, delta) -> mpmath.mpf:
    """Exact smallest ε >= 0 with ``max(δ_{P‖Q}(ε), δ_{Q‖P}(ε)) <= delta`` (``+inf`` if none).

    Parameters
    ----------
    law_p, law_q : ``{outcome: probability}`` mappings.
    delta : target δ in [0, 1].
    """
    _check_law("law_p", law_p)
    _check_law("law_q", law_q)
    with working_precision():
        delta = _delta_value(delta)
        return max(
            _one_direction_epsilon(law_p, law_q, delta), _one_direction_epsilon(law_q, law_p, delta)
        )


def epsilon_at(
    mech_or_laws, counts=None, counts2=None, delta=None, *, neighbours=None
) -> mpmath.mpf:
    """Exact smallest ε >= 0 with δ(ε) <= ``delta`` on one pair, both directions.

    ``δ(ε)`` is the privacy profile (Balle & Wang 2018, Thm 5); it is
    piecewise ``A − e^ε B`` between the log-likelihood ratios of the
    outcomes, so the root is solved in closed form on the right piece (see
    [`epsilon_from_laws`][dpaudit.exact.profile.epsilon_from_laws]). ``+inf`` when an outcome
    impossible on one side carries more than ``delta`` on the other.

    Call as ``epsilon_at(mech, counts, counts2, delta)`` (the pair must be neighbouring
    under the relation of ``mech.claim``, else ``ValueError``) or
    ``epsilon_at((law_p, law_q), delta=delta)`` (any two laws).

    Parameters
    ----------
    mech_or_laws : a mechanism with a registered exact law, or a pair of laws.
    counts, counts2 : the two histograms (only with a mechanism).
    delta : target δ in [0, 1] (required).
    neighbours : with a mechanism, the relation the pair must satisfy (default:
        ``mech.claim.neighbours``).
    """
    if delta is None:
        raise ValueError("delta is required: epsilon_at(mech, counts, counts2, delta)")
    if (
        isinstance(mech_or_laws, (tuple, list))
        and len(mech_or_laws) == 2
        and all(isinstance(law, Mapping) for law in mech_or_laws)
    ):
        if counts is not None or counts2 is not None:
            raise ValueError("give either a pair of laws or a mechanism with counts and counts2")
        law_p, law_q = mech_or_laws
    else:
        if counts is None or counts2 is None:
            raise ValueError("counts and counts2 are required with a mechanism")
        require_neighbours(mech_or_laws, counts, counts2, neighbours)
        with working_precision():
            law_p, law_q = output_law(mech_or_laws, counts), output_law(mech_or_laws, counts2)
    return epsilon_from_laws(law_p, law_q, delta)


def worst_event(law_p, law_q, epsilon) -> tuple:
    """The outcomes ``{o : P(o) > e^ε Q(o)}`` attaining ``δ_{P‖Q}(ε)``, sorted."""
    with working_precision():
        epsilon = _epsilon_value(epsilon)
        if epsilon == mpmath.inf:
            return tuple(sorted(o for o, p in law_p.items() if p > 0 and not law_q.get(o, 0) > 0))
        scale = mpmath.exp(epsilon)
        return tuple(sorted(o for o, p in law_p.items() if p - scale * law_q.get(o, 0) > 0))
