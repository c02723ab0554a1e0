"""Exact laws of sparse vectors (mpmath): ⊤ at query j given ρ = r iff ν_j >= t + r − q_j.

The first "above" (with a cutoff of 1), a whole "above" pattern (no cutoff), the density of
Roth's released answer, StatDP's Hamming summaries, and the hockey-stick divergence of two laws.
"""

from __future__ import annotations

from typing import Any

import mpmath

from mechanisms import validate_counts

from ..exact import integrate, laplace_cdf, laplace_pdf, log_ratio, working_precision


def _kinks(counts, threshold):
    return [0, *(int(c) - threshold for c in counts)]


def first_above_law(counts, *, threshold, rho_scale, nu_scale):
    """Exact law of a cutoff-1 sparse vector: ``[P(first ⊤ at j) for j] + [P(no ⊤)]``."""
    q = [int(c) for c in validate_counts(counts)]
    with working_precision():

        def below(r, j):
            return laplace_cdf(threshold + r - q[j], nu_scale)

        def first_at(j):
            def integrand(r):
                value = laplace_pdf(r, rho_scale) * (1 - below(r, j))
                for i in range(j):
                    value *= below(r, i)
                return value

            return integrate(integrand, _kinks(q, threshold))

        def none(r):
            value = laplace_pdf(r, rho_scale)
            for i in range(len(q)):
                value *= below(r, i)
            return value

        return [first_at(j) for j in range(len(q))] + [integrate(none, _kinks(q, threshold))]


def pattern_probability(counts, above, *, threshold, rho_scale, nu_scale):
    """Exact P(the "above" set is exactly ``above``) for a sparse vector without cutoff."""
    q = [int(c) for c in validate_counts(counts)]
    above = set(above)
    with working_precision():

        def integrand(r):
            value = laplace_pdf(r, rho_scale)
            for j, c in enumerate(q):
                below = laplace_cdf(threshold + r - c, nu_scale)
                value *= (1 - below) if j in above else below
            return value

        return integrate(integrand, _kinks(q, threshold))


def first_above_density(counts, j, value, *, threshold, rho_scale, nu_scale):
    """Exact density of Roth's variant at (first ⊤ at ``j``, released answer ``value``).

    The answer q_j + ν_j = v is ⊤ iff ρ <= v − t; every earlier query is ⊥ given ρ.
    """
    q = [int(c) for c in validate_counts(counts)]
    v = mpmath.mpf(value)
    with working_precision():

        def integrand(r):
            out = laplace_pdf(r, rho_scale)
            for i in range(j):
                out *= laplace_cdf(threshold + r - q[i], nu_scale)
            return out

        cut = v - threshold
        points = sorted({mpmath.mpf(k) for k in _kinks(q[:j], threshold) if k < cut})
        mass = mpmath.quad(integrand, [-mpmath.inf, *points, cut])
        return laplace_pdf(v - q[j], nu_scale) * mass


def cutoff_epsilon(pair, **scales):
    p = first_above_law(pair[0], **scales)
    q = first_above_law(pair[1], **scales)
    return max(log_ratio(a, b) for a, b in zip(p, q))


def density_ratio(pair, point, scales):
    """Exact log density ratio of "first above at query j with value v" on ``pair``."""
    j, v = point
    p = first_above_density(pair[0], j, v, **scales)
    q = first_above_density(pair[1], j, v, **scales)
    return log_ratio(p, q), 0.0


def noiseless_summary_law(counts, *, threshold, rho_scale):
    """Exact law of the Hamming summary without query noise: {summary: probability}.

    Query i is "above" iff ρ <= q_i − t, so the answers are constant on the intervals
    between the points q_i − t (closed on the right); each interval's Laplace mass goes
    to the summary of its answers.
    """
    q = [int(c) for c in validate_counts(counts)]
    half = len(q) // 2
    cuts = sorted({c - threshold for c in q})
    out: dict[int, Any] = {}
    with working_precision():
        for left, right in zip([-mpmath.inf, *cuts], [*cuts, mpmath.inf]):
            r = right if right != mpmath.inf else cuts[-1] + 1
            summary = sum((c >= threshold + r) != (i < half) for i, c in enumerate(q))
            mass = (1 if right == mpmath.inf else laplace_cdf(right, rho_scale)) - (
                0 if left == -mpmath.inf else laplace_cdf(left, rho_scale)
            )
            out[summary] = out.get(summary, 0) + mass
    return out


def noisy_summary_law(counts, *, threshold, rho_scale, nu_scale):
    """Exact law of the Hamming summary with query noise: {summary: probability}.

    Given ρ = r the mismatches are independent (query i mismatches its reference with
    P(⊤) or P(⊥)), so the summary is Poisson-binomial given r; each value is integrated
    over r (mpmath).
    """
    q = [int(c) for c in validate_counts(counts)]
    half = len(q) // 2
    with working_precision():

        def summary_given(r):
            law = [mpmath.mpf(1)] + [mpmath.mpf(0)] * len(q)
            for i, c in enumerate(q):
                below = laplace_cdf(threshold + r - c, nu_scale)
                miss = below if i < half else 1 - below
                law = [law[0] * (1 - miss)] + [
                    law[h] * (1 - miss) + law[h - 1] * miss for h in range(1, len(q) + 1)
                ]
            return law

        return {
            h: integrate(
                lambda r, h=h: laplace_pdf(r, rho_scale) * summary_given(r)[h], _kinks(q, threshold)
            )
            for h in range(len(q) + 1)
        }


def hockey_stick(p, q, epsilon):
    """Σ_k max(0, p_k − e^ε q_k) over the outcomes of two laws ``{outcome: probability}``."""
    with working_precision():
        factor = mpmath.exp(mpmath.mpf(epsilon))
        return mpmath.fsum(max(0, pk - factor * q.get(k, 0)) for k, pk in p.items())
