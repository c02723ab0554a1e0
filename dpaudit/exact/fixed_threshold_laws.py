"""Exact output law of [`FixedThreshold`][mechanisms.FixedThreshold] (seed 002 App. F, Alg. 8; reconstructed).

Given the histogram, the strict domain ``D(h)`` and the threshold
``T = h_(k̄+1) + τ`` are fixed, so the tests are independent Bernoullis:
``P[S] = Π_{i∈S} p_i Π_{i∈D(h)∖S} (1 − p_i)`` with
``p_i = P[Lap(1/ε) > T − h_i]`` in closed form (``½ e^{−εx}`` for ``x >= 0``,
``1 − ½ e^{εx}`` below), both tails evaluated directly so that neither is a
difference of nearly equal numbers. ``2^{|D(h)|} <= 2^{k̄}`` outcomes.

τ is evaluated in mpmath from the mechanism's float parameters —
``margin + ln(1/(2 δ_i))/ε`` with ``δ_i = mech.threshold_delta()`` — so the law is
that of the mechanism with the exact real threshold (the sampler rounds τ to a
double, a relative change of ~1e-16). This keeps the exact δ of a pair that
meets the claim with equality (k̄ = 1: ``P[Lap > τ − 1] = δ``) at δ to 50 digits.
The law reads the mechanism's hooks (``margin``, ``threshold_delta()``), so a
variant overriding one can register
[`fixed_threshold_law`][dpaudit.exact.fixed_threshold_laws.fixed_threshold_law] for itself.
"""

from __future__ import annotations

import itertools

import mpmath

from mechanisms import BOTTOM, FixedThreshold

from .law import output_law, working_precision

__all__ = ["fixed_threshold_law", "fixed_threshold_tau_mp", "laplace_tails"]


def laplace_tails(x, scale) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(P[Lap(scale) > x], P[Lap(scale) <= x])``, each in closed form (no cancellation)."""
    x, scale = mpmath.mpf(x), mpmath.mpf(scale)
    half_tail = mpmath.exp(-abs(x) / scale) / 2
    if x >= 0:
        return half_tail, 1 - half_tail
    return 1 - half_tail, half_tail


def fixed_threshold_tau_mp(mech: FixedThreshold) -> mpmath.mpf:
    """``τ = margin + ln(1/(2 δ_i))/ε`` at the current mpmath precision (k̄/(2δ) for δ_i = δ/k̄)."""
    per_item = mpmath.mpf(mech.threshold_delta())
    return mpmath.mpf(mech.margin) + mpmath.log(1 / (2 * per_item)) / mpmath.mpf(mech.epsilon)


@output_law.register(FixedThreshold)
def fixed_threshold_law(mech: FixedThreshold, counts) -> dict:
    """Law of FixedThreshold: independent ``h_i + Lap(1/ε) > T`` over the strict domain.

    Outcome ``S`` (ascending ids), followed by BOTTOM when ``|S| < k̄``.
    """
    items, values, h_next = mech.limited_domain(counts)
    ids = [int(i) for i in items]
    with working_precision():
        tau = fixed_threshold_tau_mp(mech)
        scale = 1 / mpmath.mpf(mech.epsilon)
        # T − h_i = τ − (h_i − h_(k̄+1)), exact integer gaps.
        tails = {i: laplace_tails(tau - (int(v) - h_next), scale) for i, v in zip(ids, values)}
        ordered = sorted(ids)
        law = {}
        for chosen in itertools.product((False, True), repeat=len(ordered)):
            p = mpmath.mpf(1)
            for item, taken in zip(ordered, chosen):
                above, below = tails[item]
                p *= above if taken else below
            outcome = tuple(i for i, taken in zip(ordered, chosen) if taken)
            if len(outcome) < mech.kbar:
                outcome += (BOTTOM,)
            law[outcome] = p
        return law
