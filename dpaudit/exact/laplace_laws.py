"""Exact output laws of the Laplace / exponential / Gaussian noisy-max mechanisms.

Registered with [`dpaudit.exact.output_law`][dpaudit.exact.output_law] for
[`ReportNoisyMax`][mechanisms.ReportNoisyMax], [`LaplaceTopK`][mechanisms.LaplaceTopK],
[`PermuteAndFlip`][mechanisms.PermuteAndFlip], [`GaussianTopK`][mechanisms.GaussianTopK] and
[`LaplaceLimitDomain`][mechanisms.LaplaceLimitDomain]. Laplace laws are sums of ordering
probabilities from [`dpaudit.exact.laplace_calculus`][dpaudit.exact.laplace_calculus] (closed form);
Gaussian laws ([`gaussian_order_law`][dpaudit.exact.laplace_laws.gaussian_order_law], shared with
RestrictedNormal) integrate every outcome on one shared trapezoidal grid, cached per count
differences, with a stated error <= 1e-36 per probability; permute-and-flip uses its own permutation
formula, not the exponential-noise form the sampler uses, so the two check each other.

Every law enumerates all outcomes: ``d`` for the argmax mechanisms,
``d!/(d-k)!`` ordered k-tuples for top-k, so these are for tiny domains.
"""

from __future__ import annotations

import functools
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

#: Working digits of the Gaussian law (no closed form): the trapezoid sums run at
#: ``GAUSSIAN_DIGITS + 10`` digits, the k' >= 3 fallback at ``GAUSSIAN_DIGITS`` + the
#: calculus' guard digits (see ``gaussian_order_law``).
GAUSSIAN_DIGITS = 40
#: Stated error bound on each probability of a Gaussian law with k' <= 2 (truncation +
#: discretisation estimate + rounding); the discretisation estimate is required to be
#: <= GAUSSIAN_ERROR/10, else ``ArithmeticError``.
GAUSSIAN_ERROR = mpmath.mpf("1e-36")
#: Half-width, in noise standard deviations, of the integration window around the means:
#: the mass outside is at most ``2·Φ(−15) ≈ 7.3e-51``.
GAUSSIAN_WINDOW = 15


def _mp_counts(counts):
    return [int(c) for c in validate_counts(counts)]


def ordered_top_k_law(means, scales, k: int, labels=None, noise: str = "laplace") -> dict:
    """Law of the ordered top-``min(k, n)`` of ``means[i] + noise`` (no threshold).

    ``P[(i_1, ..., i_k)] = P[X_{i_1} > ... > X_{i_k} > X_b for every other b]``
    ([`probability_of_order`][dpaudit.exact.laplace_calculus.probability_of_order]).
    """
    n = len(means)
    labels = list(range(n)) if labels is None else list(labels)
    taken = min(k, n)
    law = {}
    for perm in itertools.permutations(range(n), taken):
        p = probability_of_order(means, scales, list(perm), noise=noise)
        law[tuple(labels[i] for i in perm)] = p
    return law


# --------------------------------------------------------------------------------------
# Gaussian noise: one shared trapezoidal grid per law, cached per canonical histogram
# --------------------------------------------------------------------------------------

#: First trapezoid step (in noise standard deviations) and most halvings of the Gaussian law.
_GAUSSIAN_FIRST_STEP = mpmath.mpf(1) / 2
_GAUSSIAN_HALVINGS = 8


def gaussian_order_law(counts, sigma, k: int) -> dict[tuple[int, ...], mpmath.mpf]:
    """Law of the ordered top-``min(k, d)`` of ``counts + N(0, σ²)`` (i.i.d. noise per item).

    The law of [`GaussianTopK`][mechanisms.GaussianTopK] and of RestrictedNormal's inner
    [`GaussianNoiseTopK`][mechanisms.restricted_domain.GaussianNoiseTopK] (seed 001 App. E, Thm 7),
    for the float σ the sampler uses (converted to mpmath exactly). For k' = min(k, d) <= 2 — and
    for every k when d <= 3 — every probability is within ``GAUSSIAN_ERROR`` (1e-36) of the
    exact value.

    Exact reductions (no approximation):

    * permutation — the noise is i.i.d., so permuting the counts permutes the law;
    * shift — adding a constant to every count moves every noisy value by it, so the law
      depends only on the differences of the counts;
    * top-d — for ``k >= d`` the last item is the one not yet listed, so the law is the
      top-(d−1) law with that item appended.

    The law is therefore computed once per canonical vector (counts sorted decreasingly
    minus the smallest), σ and ``min(k, d)``, kept in an LRU cache, and relabelled to item
    ids. Neighbouring histograms share canonical vectors: ``verify`` on d = 3, counts <= 2
    needs at most 10 of them instead of 54–64 laws.

    For k' = min(k, d) <= 2 the law is a trapezoidal rule on one shared grid, refined until two
    successive sums agree to ``GAUSSIAN_ERROR/10`` (Trefethen & Weideman 2014, Thm 5.1); the
    rule and its error bound (truncation, discretisation, rounding: below ``GAUSSIAN_ERROR`` =
    1e-36 in all) are derived in docs/guide/exact-laws.md ("The Gaussian order law"). For
    ``k' >= 3`` (k >= 3 and d >= 4) the law falls back to the nested quadratures of
    [`probability_of_order`][dpaudit.exact.laplace_calculus.probability_of_order] (mpmath's own
    error estimate, slow), still on the canonical vector and cached.

    Parameters
    ----------
    counts : a histogram (1-D non-negative integer counts).
    sigma : the noise standard deviation, > 0.
    k : number of items reported (>= 1).
    """
    counts = _mp_counts(counts)
    sigma = float(sigma)
    if not sigma > 0 or sigma == float("inf"):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    d = len(counts)
    # Canonical position p holds the p-th largest count (ties to the lower id).
    ranked = sorted(range(d), key=lambda i: (-counts[i], i))
    low = counts[ranked[-1]]
    canonical = tuple(counts[i] - low for i in ranked)
    law = _canonical_gaussian_law(canonical, sigma, min(k, d))
    return {tuple(ranked[p] for p in outcome): prob for outcome, prob in law}


@functools.lru_cache(maxsize=4096)
def _canonical_gaussian_law(gaps: tuple[int, ...], sigma: float, taken: int) -> tuple:
    """``((positions, probability), ...)`` of [`gaussian_order_law`][dpaudit.exact.laplace_laws.gaussian_order_law] on ``gaps``."""
    d = len(gaps)
    if d == 1:
        return (((0,), mpmath.mpf(1)),)
    if taken == d:
        # The last item is determined by the first d - 1 (exact).
        return tuple(
            (outcome + tuple(i for i in range(d) if i not in outcome), p)
            for outcome, p in _canonical_gaussian_law(gaps, sigma, d - 1)
        )
    if taken >= 3:
        with working_precision(GAUSSIAN_DIGITS):
            law = ordered_top_k_law(list(gaps), sigma, taken, noise="gaussian")
        return tuple(law.items())
    with working_precision(GAUSSIAN_DIGITS + 10):
        return tuple(_gaussian_trapezoid(gaps, sigma, taken).items())


def _gaussian_trapezoid(gaps, sigma: float, taken: int) -> dict:
    """The k' <= 2 case of [`gaussian_order_law`][dpaudit.exact.laplace_laws.gaussian_order_law] (trapezoid on a shared grid)."""
    d = len(gaps)
    scale = mpmath.mpf(sigma)  # exact: floats are mpf
    means = [mpmath.mpf(g) / scale for g in gaps]
    outcomes = list(itertools.permutations(range(d), taken))
    others = [[b for b in range(d) if b not in seq] for seq in outcomes]
    root2 = mpmath.sqrt(2)
    density = 1 / mpmath.sqrt(2 * mpmath.pi)
    start = min(means) - GAUSSIAN_WINDOW
    stop = max(means) + GAUSSIAN_WINDOW
    tolerance = GAUSSIAN_ERROR / 10

    def add_node(y, sums):
        pdf, cdf, sf = [], [], []
        for m in means:
            z = y - m
            pdf.append(density * mpmath.exp(-z * z / 2))
            tail = mpmath.erfc(abs(z) / root2) / 2
            if z >= 0:
                sf.append(tail)
                cdf.append(1 - tail)
            else:
                cdf.append(tail)
                sf.append(1 - tail)
        for index, seq in enumerate(outcomes):
            value = pdf[seq[-1]]
            if taken == 2:
                value *= sf[seq[0]]
            for b in others[index]:
                value *= cdf[b]
            sums[index] += value

    step = _GAUSSIAN_FIRST_STEP
    nodes = int(mpmath.ceil((stop - start) / step))
    sums = [mpmath.mpf(0)] * len(outcomes)
    for j in range(nodes + 1):
        add_node(start + j * step, sums)
    previous = [s * step for s in sums]
    for _ in range(_GAUSSIAN_HALVINGS):
        # Halve the step: the new nodes are the midpoints of the old ones.
        for j in range(nodes):
            add_node(start + (2 * j + 1) * step / 2, sums)
        step, nodes = step / 2, 2 * nodes
        current = [s * step for s in sums]
        change = max(abs(a - b) for a, b in zip(current, previous))
        if change <= tolerance:
            return dict(zip(outcomes, current))
        previous = current
    raise ArithmeticError(
        f"Gaussian law did not converge: last trapezoid change {mpmath.nstr(change, 3)} "
        f"> {mpmath.nstr(tolerance, 3)} (gaps={gaps}, sigma={sigma})"
    )


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
    """Ordered top-k of counts + N(0, σ²) (seed 001 App. E, Thm 7): see [`gaussian_order_law`][dpaudit.exact.laplace_laws.gaussian_order_law]."""
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
    """See [`permute_and_flip_law`][dpaudit.exact.laplace_laws.permute_and_flip_law] (McKenna & Sheldon 2020, Alg. 1)."""
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
