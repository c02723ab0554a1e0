"""Exact output laws of the Laplace / exponential / Gaussian noisy-max mechanisms.

Registered with :func:`dpaudit.exact.output_law` for :class:`~mechanisms.ReportNoisyMax`,
:class:`~mechanisms.LaplaceTopK`, :class:`~mechanisms.PermuteAndFlip`,
:class:`~mechanisms.GaussianTopK` and :class:`~mechanisms.LaplaceLimitDomain`.
Laplace and Gaussian laws are sums of ordering probabilities from
:mod:`dpaudit.exact.laplace_calculus` (closed form for Laplace, quadrature for
Gaussian); permute-and-flip uses its own permutation formula, not the
exponential-noise form the sampler uses, so the two check each other.

Every law enumerates all outcomes: ``d`` for the argmax mechanisms,
``d!/(d-k)!`` ordered k-tuples for top-k, so these are for tiny domains.
"""

from __future__ import annotations

import itertools

import mpmath

from mechanisms import (
    BOTTOM,
    GaussianTopK,
    LaplaceLimitDomain,
    LaplaceTopK,
    PermuteAndFlip,
    ReportNoisyMax,
    as_top_counts,
    validate_counts,
)
from mechanisms.laplace_limit_domain import laplace_limit_domain_threshold

from .laplace_calculus import probability_of_order
from .law import output_law, working_precision

__all__ = [
    "GAUSSIAN_DIGITS",
    "GAUSSIAN_ERROR",
    "GAUSSIAN_WINDOW",
    "gaussian_order_law",
    "gaussian_top_k_law",
    "ordered_top_k_law",
    "permute_and_flip_law",
]

#: Working digits of the Gaussian (quadrature-only) law: the quadrature runs at
#: ``GAUSSIAN_DIGITS + 10`` digits and every probability is guaranteed to
#: ``GAUSSIAN_ERROR`` (see :func:`gaussian_order_law`).
GAUSSIAN_DIGITS = 40
#: Largest total error (truncation + mpmath's quadrature error estimate) accepted on one
#: probability of a Gaussian law; exceeding it raises ``ArithmeticError``.
GAUSSIAN_ERROR = mpmath.mpf("1e-36")
#: Half-width, in noise standard deviations, of the integration window around the means:
#: the mass outside is at most ``2·Φ(−15) ≈ 7.3e-51``.
GAUSSIAN_WINDOW = 15


def _mp_counts(counts):
    return [int(c) for c in validate_counts(counts)]


def ordered_top_k_law(means, scales, k: int, labels=None, noise: str = "laplace") -> dict:
    """Law of the ordered top-``min(k, n)`` of ``means[i] + noise`` (no threshold).

    ``P[(i_1, ..., i_k)] = P[X_{i_1} > ... > X_{i_k} > X_b for every other b]``
    (:func:`~dpaudit.exact.laplace_calculus.probability_of_order`).
    """
    n = len(means)
    labels = list(range(n)) if labels is None else list(labels)
    taken = min(k, n)
    law = {}
    for perm in itertools.permutations(range(n), taken):
        p = probability_of_order(means, scales, list(perm), noise=noise)
        law[tuple(labels[i] for i in perm)] = p
    return law


@output_law.register(ReportNoisyMax)
def _report_noisy_max_law(mech: ReportNoisyMax, counts) -> dict:
    """``P[i] = P[c_i + Lap(b) > c_j + Lap(b) ∀ j ≠ i]``, b = mech.scale (Dwork & Roth 2014 §3.3)."""
    with working_precision():
        return ordered_top_k_law(_mp_counts(counts), mech.scale, 1)


@output_law.register(LaplaceTopK)
def _laplace_top_k_law(mech: LaplaceTopK, counts) -> dict:
    """Ordered top-k of counts + Lap(2k/ε) (seed 004_96d6a41600571c16.txt §4)."""
    with working_precision():
        return ordered_top_k_law(_mp_counts(counts), mech.scale, mech.k)


@output_law.register(GaussianTopK)
def _gaussian_top_k_law(mech: GaussianTopK, counts) -> dict:
    """Ordered top-k of counts + N(0, σ²) (seed 001 App. E, Thm 7): see :func:`gaussian_order_law`."""
    return gaussian_order_law(counts, mech.sigma, mech.k)


#: Public name, so that a subclass (e.g. a deliberately mis-calibrated σ in a test) can
#: register the same law: ``output_law.register(MySubclass)(gaussian_top_k_law)``.
gaussian_top_k_law = _gaussian_top_k_law


def permute_and_flip_law(counts, scale) -> dict:
    """Exact law of permute-and-flip with flip probabilities ``p_r = exp((c_r − c*)/scale)``.

    McKenna & Sheldon (2020), Alg. 1: item r is reported iff its coin lands
    heads and every item visited before it landed tails. Averaging over the
    uniform permutation, the set S visited before r is any subset of the
    others with probability ``|S|!(n−1−|S|)!/n!``, so
    ``P[r] = p_r Σ_m m!(n−1−m)!/n! · e_m({1 − p_s : s ≠ r})`` with e_m the
    elementary symmetric polynomials (computed by the usual O(n²) recursion).
    """
    counts = _mp_counts(counts)
    n = len(counts)
    top = max(counts)
    scale = mpmath.mpf(scale)
    p = [mpmath.exp((c - top) / scale) for c in counts]
    law = {}
    for r in range(n):
        e = [mpmath.mpf(1)] + [mpmath.mpf(0)] * (n - 1)
        for s in range(n):
            if s == r:
                continue
            q = 1 - p[s]
            for m in range(n - 1, 0, -1):
                e[m] += e[m - 1] * q
        weight = sum(
            mpmath.factorial(m) * mpmath.factorial(n - 1 - m) * e[m] for m in range(n)
        ) / mpmath.factorial(n)
        law[(r,)] = p[r] * weight
    return law


@output_law.register(PermuteAndFlip)
def _permute_and_flip_law(mech: PermuteAndFlip, counts) -> dict:
    """See :func:`permute_and_flip_law` (McKenna & Sheldon 2020, Alg. 1)."""
    with working_precision():
        return permute_and_flip_law(counts, mech.scale)


@output_law.register(LaplaceLimitDomain)
def _laplace_limit_domain_law(mech: LaplaceLimitDomain, counts) -> dict:
    """Law of LaplaceLimitDomain (seed 002_a192ff3c12785105.txt §6.1, Alg. 4, Def. 6.1).

    With candidates the top-k̄ items and ⊥ one more Lap(1/ε) variable at h_⊥:
    ``(i_1..i_j, ⊥)`` for j < k is ``X_{i_1} > .. > X_{i_j} > X_⊥ > every other
    candidate``; ``(i_1..i_k)`` is ``X_{i_1} > .. > X_{i_k} > X_⊥ and every
    other candidate``.
    """
    top = as_top_counts(counts, mech.kbar + 1)
    m = min(mech.kbar, len(top))
    items = [int(i) for i in top.items[:m]]
    with working_precision():
        h_bot = laplace_limit_domain_threshold(
            top, mech.kbar, mech.epsilon, mech.delta, mech.max_items
        )
        # h_⊥ is a float (ln term); it is used exactly as the sampler uses it.
        means = [int(c) for c in top.counts[:m]] + [h_bot]
        bot = m
        law = {}
        for j in range(min(mech.k, m) + 1):
            for perm in itertools.permutations(range(m), j):
                rest = [i for i in range(m) if i not in perm]
                if j < mech.k:
                    p = probability_of_order(means, mech.scale, list(perm) + [bot], rest)
                    outcome = tuple(items[i] for i in perm) + (BOTTOM,)
                else:
                    p = probability_of_order(means, mech.scale, list(perm), rest + [bot])
                    outcome = tuple(items[i] for i in perm)
                law[outcome] = p
        return law
