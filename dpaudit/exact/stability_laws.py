"""Exact output laws of the stability family: SVT, A_stab, TS, the framework F, RG, RN.

Every law is a sum over "which queries pass a shared noisy threshold" events. Conditional
on the threshold noise the tests are independent, so each event is a one-dimensional
integral ``∫ f_T(t) Π_i S_i(t)^{pass} F_i(t)^{fail} dt`` (seed 000
000_4bf15007bce596ab.txt Lemma 3.1 is the one-query case), evaluated in closed form by
``dpaudit.exact.laplace_calculus.probability_threshold_pattern`` (piecewise-exponential
calculus with exact rational rates and kinks).

* SparseVector — seed 000 Alg. 2 / seed 001 Alg. 2: one pattern per outcome.
* StabilityRelease — seed 000 Alg. 1: one Laplace tail.
* TopStable — seed 000 Alg. 3: first success at position i (tested k̄ → 1), then the
  release rule (all of f_i, a uniform k-subset, or the exponential mechanism's set law:
  the sum over orderings of the Plackett-Luce probabilities).
* RestrictedDomain — seed 001 Alg. 1: ``output_law(inner, restricted counts)`` for STEP 1
  (any wrapped mechanism with a registered law), mapped to item ids, times STEP 2's
  halting-SVT pattern probabilities.
* RestrictedGumbel / RestrictedNormal — F around GK (seed 001 App. B; Plackett-Luce law,
  seed 003 Lemma 4.2) and around Gaussian top-k (App. E; integrals of Gaussian CDF
  products, ``laplace_laws.gaussian_order_law``, error <= 1e-36 per probability).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import mpmath
import numpy as np

from mechanisms.histogram import validate_counts
from mechanisms.outcomes import BOTTOM
from mechanisms.restricted_domain import (
    GaussianNoiseTopK,
    RestrictedDomain,
    RestrictedGumbel,
    RestrictedNormal,
)
from mechanisms.sparse_vector import SparseVector
from mechanisms.stability import StabilityRelease, TopStable

from . import laplace_calculus as lc
from .laplace_laws import gaussian_order_law
from .law import output_law, working_precision

__all__ = ["plackett_luce_sequence_law", "plackett_luce_set_law"]


def _add(law: dict, key: tuple, p) -> None:
    if p != 0:
        law[key] = law.get(key, mpmath.mpf(0)) + p


def _pattern(means, scale, above, threshold, threshold_scale) -> mpmath.mpf:
    """P[means_i + Lap(scale) > T̂ exactly for the ``above`` ones], T̂ = threshold + Lap."""
    if len(means) == 0:
        return mpmath.mpf(1)
    return lc.probability_threshold_pattern(
        [int(m) for m in means],
        Fraction(scale),
        list(above),
        Fraction(threshold),
        Fraction(threshold_scale),
    )


# --------------------------------------------------------------------------------------
# Plackett-Luce (exponential mechanism with peeling = Gumbel top-k)
# --------------------------------------------------------------------------------------


def plackett_luce_sequence_law(log_weights, k: int) -> dict[tuple[int, ...], mpmath.mpf]:
    """Law of the ordered top-min(k, m) positions under Plackett-Luce weights e^{log_weights}.

    seed 003 (003_9293f5da18078e1b.txt) Lemma 4.2: peeling EM and Gumbel top-k share this
    law, ``Π_j w_{s_j} / (W − Σ_{l<j} w_{s_l})``. Enumerates every sequence: tiny m only.
    """
    w = [mpmath.exp(mpmath.mpf(x)) for x in log_weights]
    m = len(w)
    taken = min(k, m)
    law = {}
    for seq in itertools.permutations(range(m), taken):
        remaining = mpmath.fsum(w)
        p = mpmath.mpf(1)
        for s in seq:
            p *= w[s] / remaining
            remaining -= w[s]
        law[seq] = p
    return law


def plackett_luce_set_law(log_weights, k: int) -> dict[tuple[int, ...], mpmath.mpf]:
    """Law of the SET (ascending positions) chosen by Plackett-Luce top-k (see above)."""
    law: dict = {}
    for seq, p in plackett_luce_sequence_law(log_weights, k).items():
        _add(law, tuple(sorted(seq)), p)
    return law


# --------------------------------------------------------------------------------------
# SparseVector
# --------------------------------------------------------------------------------------


@output_law.register(SparseVector)
def _sparse_vector_law(mech: SparseVector, counts):
    counts = validate_counts(counts)
    law: dict = {}
    with working_precision():
        T, ts, qs = mech.threshold, mech.threshold_scale(), mech.query_scale()
        if mech.halting:
            m = min(mech.cutoff, counts.size)
            for j in range(m + 1):
                above = [True] * j + ([False] if j < m else [])
                key = tuple(range(j)) + ((BOTTOM,) if j < mech.cutoff else ())
                _add(law, key, _pattern(counts[: len(above)], qs, above, T, ts))
        else:
            d, c = counts.size, mech.cutoff
            for size in range(min(c, d) + 1):
                for chosen in itertools.combinations(range(d), size):
                    asked = chosen[-1] + 1 if size == c else d
                    above = [i in chosen for i in range(asked)]
                    key = chosen + ((BOTTOM,) if size < c else ())
                    _add(law, key, _pattern(counts[:asked], qs, above, T, ts))
    return law


# --------------------------------------------------------------------------------------
# StabilityRelease and TopStable
# --------------------------------------------------------------------------------------


@output_law.register(StabilityRelease)
def _stability_release_law(mech: StabilityRelease, counts):
    items, gap = mech.released_set(counts)
    with working_precision():
        p = lc.Laplace(gap, Fraction(1.0 / mech.epsilon)).sf(mpmath.mpf(mech.threshold))
        law: dict = {}
        _add(law, tuple(int(i) for i in items), p)
        _add(law, (BOTTOM,), 1 - p)
    return law


@output_law.register(TopStable)
def _top_stable_law(mech: TopStable, counts):
    top, gaps = mech.positions(counts)
    n = gaps.size
    law: dict = {}
    with working_precision():
        T, ts, gs = mech.threshold, mech.threshold_scale(), mech.gap_scale()
        # Position i is tested after k̄..i+1 all failed: list positions in test order.
        order = list(range(n - 1, -1, -1))  # 0-based positions n-1, ..., 0
        for step, pos in enumerate(order):
            tested = [gaps[p] for p in order[: step + 1]]
            above = [False] * step + [True]
            p_first = _pattern(tested, gs, above, T, ts)
            i = pos + 1
            ids = top.items[:i]
            if i <= mech.k:
                _add(law, tuple(sorted(int(x) for x in ids)), p_first)
            elif mech.epsilon_em > 0:
                lw = [mpmath.mpf(mech.epsilon_em) / mech.k * int(c) for c in top.counts[:i]]
                for positions, q in plackett_luce_set_law(lw, mech.k).items():
                    _add(law, tuple(sorted(int(ids[p]) for p in positions)), p_first * q)
            else:
                share = p_first / comb(i, mech.k)
                for subset in itertools.combinations(sorted(int(x) for x in ids), mech.k):
                    _add(law, subset, share)
        _add(law, (BOTTOM,), _pattern(list(gaps[::-1]), gs, [False] * n, T, ts))
    return law


# --------------------------------------------------------------------------------------
# The framework F and its instances
# --------------------------------------------------------------------------------------


def _inner_law(inner, restricted):
    """Law of the wrapped mechanism; GumbelTopK falls back to Plackett-Luce."""
    try:
        return output_law(inner, restricted)
    except TypeError:
        from mechanisms.exponential import GumbelTopK

        if isinstance(inner, GumbelTopK):
            lw = [mpmath.mpf(inner.epsilon) * int(c) for c in restricted]
            return plackett_luce_sequence_law(lw, inner.k)
        raise


def _framework_law(mech: RestrictedDomain, counts):
    top, restricted, h_ref = mech.restrict(counts)
    law: dict = {}
    with working_precision():
        inner = _inner_law(mech.mechanism, restricted)
        T, scale = mech.threshold, mech.noise_scale()
        count_of = {int(i): int(c) for i, c in zip(top.items, top.counts)}
        cache: dict = {}
        for outcome, p_inner in inner.items():
            row = np.array([list(outcome)], dtype=np.int64)
            mapped = tuple(int(v) for v in mech.map_inner(row, top)[0] if v != -2)
            items = [v for v in mapped if v >= 0]
            inner_bottom = BOTTOM in mapped
            gaps = tuple(count_of[i] - h_ref - 1 for i in items)
            if gaps not in cache:
                probs = []
                for j in range(len(gaps) + 1):
                    above = [True] * j + ([False] if j < len(gaps) else [])
                    probs.append(_pattern(gaps[: len(above)], scale, above, T, scale))
                cache[gaps] = probs
            for j, p in enumerate(cache[gaps]):
                if j < len(items):
                    key = tuple(items[:j]) + (BOTTOM,)
                else:
                    key = tuple(items) + ((BOTTOM,) if inner_bottom else ())
                _add(law, key, p_inner * p)
    return law


@output_law.register(RestrictedDomain)
def _restricted_domain_law(mech: RestrictedDomain, counts):
    return _framework_law(mech, counts)


@output_law.register(RestrictedGumbel)
def _restricted_gumbel_law(mech: RestrictedGumbel, counts):
    return _framework_law(mech.framework, counts)


@output_law.register(RestrictedNormal)
def _restricted_normal_law(mech: RestrictedNormal, counts):
    return _framework_law(mech.framework, counts)


@output_law.register(GaussianNoiseTopK)
def _gaussian_top_k_law(mech: GaussianNoiseTopK, counts):
    """Ordered top-k of counts + N(0, σ²) (seed 001 App. E, Thm 7).

    [`dpaudit.exact.laplace_laws.gaussian_order_law`][dpaudit.exact.laplace_laws.gaussian_order_law]:
    one shared trapezoidal grid per law, cached per count differences (RN's restricted histograms of
    neighbouring inputs mostly share them), every probability within 1e-36.
    """
    return gaussian_order_law(validate_counts(counts), mech.sigma, mech.k)


# Public names of the evaluators, so that a subclass carrying a documented bug (e.g. the
# broken variants of tests/dpaudit/exact/test_stability_verify.py, or dpaudit.catalog) can
# register the same law: ``output_law.register(MySubclass)(top_stable_law)``.
sparse_vector_law = _sparse_vector_law
stability_release_law = _stability_release_law
top_stable_law = _top_stable_law
restricted_domain_law = _restricted_domain_law
gaussian_noise_top_k_law = _gaussian_top_k_law
restricted_normal_law = _restricted_normal_law
__all__ += [
    "gaussian_noise_top_k_law",
    "restricted_domain_law",
    "restricted_normal_law",
    "sparse_vector_law",
    "stability_release_law",
    "top_stable_law",
]
