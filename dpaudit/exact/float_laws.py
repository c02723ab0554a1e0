"""Output laws in float64, for searches that evaluate many histograms.

``float_law(mechanism, counts)`` returns ``{outcome tuple: float}``. By default it is
[`dpaudit.exact.output_law`][dpaudit.exact.output_law] rounded to float64; a family whose exact law
is too slow for a search of many thousands of histograms registers a float64 evaluator of the same
law here (``@float_law.register(Class)``). These laws only steer a search: every value
reported as exact is recomputed by [`dpaudit.exact.output_law`][dpaudit.exact.output_law] in mpmath.

* TopStable — seed 000 (000_4bf15007bce596ab.txt) Alg. 3: the probability that position
  i is the first to pass (positions tested k̄ → 1 against one noisy threshold) is the
  one-dimensional integral ``∫ f_T(t) Π_{j tested before i} F_j(t) S_i(t) dt`` (Lemma 3.1
  is the one-position case), here by Gauss-Legendre quadrature on pieces no longer than
  the smallest noise scale, split at every kink (the threshold and every gap), over
  ±``TAIL_SCALES`` noise scales around them. Each piece's integrand is a smooth sum
  of exponentials, so 12 nodes reach float64 rounding; the truncated tails hold less
  than ``e^-TAIL_SCALES`` of probability.
* RestrictedGumbel — seed 001 (001_49698e97f2ea8cba.txt) Alg. 3: STEP 1 is Gumbel top-k on
  the top k̄ counts, whose ordered law is Plackett-Luce (seed 003 Lemma 4.2); STEP 2's
  halting SVT patterns ``P[X_1 > T̂, ..., X_j > T̂, X_{j+1} <= T̂]`` are the same
  one-dimensional integrals over the threshold noise, by the same quadrature.

[`float_epsilon`][dpaudit.exact.float_laws.float_epsilon] is
[`dpaudit.exact.epsilon_from_laws`][dpaudit.exact.epsilon_from_laws] on float laws.
"""

from __future__ import annotations

import functools
import itertools
import math
from math import comb

import numpy as np

from mechanisms.exponential import GumbelTopK
from mechanisms.outcomes import BOTTOM
from mechanisms.restricted_domain import RestrictedGumbel
from mechanisms.stability import TopStable

from .law import output_law, working_precision

__all__ = ["TAIL_SCALES", "float_epsilon", "float_law"]

#: Noise scales beyond the outermost kinks integrated over; e^-45 ≈ 3e-20 of mass is lost.
TAIL_SCALES = 45
#: Gauss-Legendre nodes per piece of the quadrature.
NODES = 12
_GL_X, _GL_W = np.polynomial.legendre.leggauss(NODES)


@functools.singledispatch
def float_law(mechanism, counts) -> dict[tuple[int, ...], float]:
    """Law of ``mechanism`` on ``counts`` as ``{outcome: float}`` (the exact law, rounded).

    Parameters
    ----------
    mechanism : a mechanism with a registered exact law.
    counts : the histogram.
    """
    with working_precision():
        return {outcome: float(p) for outcome, p in output_law(mechanism, counts).items()}


def _laplace_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    """P[Lap(scale) <= x], accurate in both tails."""
    return np.where(
        x < 0,
        0.5 * np.exp(np.minimum(x, 0) / scale),
        -0.5 * np.expm1(-np.maximum(x, 0) / scale) + 0.5,
    )


def _laplace_sf(x: np.ndarray, scale: float) -> np.ndarray:
    """P[Lap(scale) > x], accurate in both tails."""
    return _laplace_cdf(-x, scale)


def _quadrature_nodes(kinks, scales) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on pieces between kinks, each piece <= the smallest scale long."""
    low = min(kinks) - TAIL_SCALES * max(scales)
    high = max(kinks) + TAIL_SCALES * max(scales)
    edges = np.unique(np.concatenate([[low, high], np.asarray(kinks, dtype=float)]))
    width = min(scales)
    nodes, weights = [], []
    for a, b in itertools.pairwise(edges):
        pieces = max(1, math.ceil((b - a) / width))
        cuts = np.linspace(a, b, pieces + 1)
        half = (cuts[1:] - cuts[:-1])[:, None] / 2
        middle = (cuts[1:] + cuts[:-1])[:, None] / 2
        nodes.append((middle + half * _GL_X[None, :]).ravel())
        weights.append((half * _GL_W[None, :]).ravel())
    return np.concatenate(nodes), np.concatenate(weights)


@functools.lru_cache(maxsize=100_000)
def _first_pass_probabilities(gaps: tuple, threshold, threshold_scale, gap_scale) -> tuple:
    """P[first pass at each position, in test order k̄ → 1], then P[no position passes]."""
    t, w = _quadrature_nodes((threshold, *gaps), (threshold_scale, gap_scale))
    density = np.exp(-np.abs(t - threshold) / threshold_scale) / (2 * threshold_scale) * w
    tested = list(reversed(gaps))
    failed = np.ones_like(t)
    probabilities = []
    for gap in tested:
        x = t - gap
        probabilities.append(float(np.dot(density, failed * _laplace_sf(x, gap_scale))))
        failed = failed * _laplace_cdf(x, gap_scale)
    probabilities.append(float(np.dot(density, failed)))
    return tuple(probabilities)


@functools.lru_cache(maxsize=100_000)
def _threshold_pattern(means: tuple, above: tuple, threshold, threshold_scale, scale) -> float:
    """P[mean_i + Lap(scale) > T̂ exactly for the ``above`` ones], T̂ = threshold + Lap."""
    if not means:
        return 1.0
    t, w = _quadrature_nodes((threshold, *means), (threshold_scale, scale))
    integrand = np.exp(-np.abs(t - threshold) / threshold_scale) / (2 * threshold_scale) * w
    for mean, passes in zip(means, above):
        x = t - mean
        integrand = integrand * (_laplace_sf(x, scale) if passes else _laplace_cdf(x, scale))
    return float(integrand.sum())


def _plackett_luce_sequences(log_weights, k: int) -> dict[tuple[int, ...], float]:
    """Law of the ordered positions picked by Plackett-Luce top-k (seed 003 Lemma 4.2)."""
    w = np.exp(np.asarray(log_weights, dtype=float) - max(log_weights))
    law: dict = {}
    for sequence in itertools.permutations(range(w.size), min(k, w.size)):
        left, p = list(range(w.size)), 1.0
        for s in sequence:
            # The sum of the items still in, not a running difference (no cancellation).
            p *= w[s] / w[left].sum()
            left.remove(s)
        law[sequence] = p
    return law


def _plackett_luce_sets(log_weights, k: int) -> dict[tuple[int, ...], float]:
    """Law of the set of positions picked by Plackett-Luce top-k (seed 003 Lemma 4.2)."""
    law: dict = {}
    for sequence, p in _plackett_luce_sequences(log_weights, k).items():
        key = tuple(sorted(sequence))
        law[key] = law.get(key, 0.0) + p
    return law


@float_law.register(TopStable)
def _top_stable_float_law(mechanism: TopStable, counts) -> dict[tuple[int, ...], float]:
    """TopStable's law (seed 000 Alg. 3) in float64 (see the module docstring)."""
    top, gaps = mechanism.positions(counts)
    n = gaps.size
    first = _first_pass_probabilities(
        tuple(float(g) for g in gaps),
        float(mechanism.threshold),
        float(mechanism.threshold_scale()),
        float(mechanism.gap_scale()),
    )
    law: dict = {}

    def add(key, p):
        if p > 0:
            law[key] = law.get(key, 0.0) + p

    for step, p_first in enumerate(first[:-1]):
        i = n - step  # 1-based position
        ids = [int(x) for x in top.items[:i]]
        if i <= mechanism.k:
            add(tuple(sorted(ids)), p_first)
        elif mechanism.epsilon_em > 0:
            scores = [mechanism.epsilon_em / mechanism.k * int(c) for c in top.counts[:i]]
            for positions, q in _plackett_luce_sets(scores, mechanism.k).items():
                add(tuple(sorted(ids[p] for p in positions)), p_first * q)
        else:
            share = p_first / comb(i, mechanism.k)
            for subset in itertools.combinations(sorted(ids), mechanism.k):
                add(subset, share)
    add((-1,), first[-1])
    return law


@float_law.register(RestrictedGumbel)
def _restricted_gumbel_float_law(mechanism: RestrictedGumbel, counts) -> dict:
    """RestrictedGumbel's law (seed 001 Alg. 3; exact twin ``stability_laws``) in float64."""
    framework = mechanism.framework
    top, restricted, h_ref = framework.restrict(counts)
    inner = framework.mechanism
    assert isinstance(inner, GumbelTopK)  # RG's framework wraps top-k Gumbel (Alg. 3 line 2)
    threshold, scale = float(framework.threshold), float(framework.noise_scale())
    count_of = {int(i): int(c) for i, c in zip(top.items, top.counts)}
    log_weights = [inner.epsilon * int(c) for c in restricted]
    law: dict = {}
    for positions, p_inner in _plackett_luce_sequences(log_weights, inner.k).items():
        row = np.array([list(positions)], dtype=np.int64)
        mapped = tuple(int(v) for v in framework.map_inner(row, top)[0] if v != -2)
        items = [v for v in mapped if v >= 0]
        inner_bottom = BOTTOM in mapped
        gaps = tuple(float(count_of[i] - h_ref - 1) for i in items)
        for j in range(len(gaps) + 1):
            above = (True,) * j + ((False,) if j < len(gaps) else ())
            p = p_inner * _threshold_pattern(gaps[: len(above)], above, threshold, scale, scale)
            if j < len(items):
                key = (*items[:j], BOTTOM)
            else:
                key = tuple(items) + ((BOTTOM,) if inner_bottom else ())
            if p > 0:
                law[key] = law.get(key, 0.0) + p
    return law


def _one_direction_epsilon(law_p, law_q, delta: float) -> float:
    """Smallest ε >= 0 with ``Σ_o max(0, P(o) − e^ε Q(o)) <= delta``, closed form per piece.

    The float64 twin of ``dpaudit.exact.profile._one_direction_epsilon`` (same
    segment-by-segment root of the piecewise ``A_j − e^ε B_j``).
    """
    infinite_mass = 0.0
    ratios = []
    for outcome, p in law_p.items():
        if not p > 0:
            continue
        q = law_q.get(outcome, 0.0)
        if not q > 0:
            infinite_mass += p
        elif p > q:
            ratios.append((math.log(p / q), p, q))
    if infinite_mass > delta:
        return math.inf
    ratios.sort(reverse=True)
    active_p, active_q = infinite_mass, 0.0
    for index, (_, p, q) in enumerate(ratios):
        active_p += p
        active_q += q
        lower = ratios[index + 1][0] if index + 1 < len(ratios) else 0.0
        if active_p - math.exp(lower) * active_q > delta:
            return max(math.log((active_p - delta) / active_q), lower)
    return 0.0


def float_epsilon(law_p, law_q, delta: float) -> float:
    """Smallest ε >= 0 with the two-sided δ(ε) <= ``delta`` for float laws (``inf`` if none).

    Parameters
    ----------
    law_p, law_q : ``{outcome: float}`` laws (e.g. from
        [`float_law`][dpaudit.exact.float_laws.float_law]).
    delta : target δ in [0, 1].
    """
    return max(
        _one_direction_epsilon(law_p, law_q, delta), _one_direction_epsilon(law_q, law_p, delta)
    )
