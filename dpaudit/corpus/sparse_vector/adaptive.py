"""CheckDP's BadAdaptiveSVT (the top branch releases the answer, not the gap) and its twin."""

from __future__ import annotations

import functools

import mpmath
import numpy as np

from mechanisms import PAD, MixedBatch, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import laplace_cdf, laplace_pdf, log_ratio, working_precision
from .base import QUERIES, RELATION, SETTING, THRESHOLD

# ---------------------------------------------------------------------------
# CheckDP's BadAdaptiveSVT (cmla-psu/checkdp examples/badadaptivesparsevector.c): Ding et al.'s
# adaptive sparse vector (CCS 2019, "Free gap information") with N = 1. Threshold noise
# Lap(2/ε); per query a "top" test q + η₃ − (t + ρ) >= σ with η₃ ~ Lap(8/ε) (σ = 16, the
# file's hard-coded 2·8N/ε at ε = 1), else a "middle" test q + η₂ − (t + ρ) >= 0 with
# η₂ ~ Lap(4/ε); the first query passing either test stops the run (N = 1: the cost check
# after one release). The bug: the top branch releases q + η₃, not the gap q + η₃ − (t + ρ).
# As with GapSVT, the C code's int threshold is taken as the real t + ρ.
# Its algorithmic loss exceeds the claim only when at least 4 queries fail both tests with ρ
# deep in its tail (density below 1e-16): no sample shows that. The audit flags the entry
# through the doubles instead: the released answers mix two noise shapes, so no Laplace noise
# model fits them, but the grid view (sign, binade, trailing zero bits) finds answers one
# neighbour cannot produce.

ADAPTIVE_EPSILON, ADAPTIVE_MARGIN = 1.0, 16.0
_ADAPTIVE_SCALES = {
    "rho": 2 / ADAPTIVE_EPSILON,
    "top": 8 / ADAPTIVE_EPSILON,
    "middle": 4 / ADAPTIVE_EPSILON,
}


def _adaptive_batch(counts, size, rng, *, gap_on_top, exact):
    """The first query passing the top or middle test and its released value (NaN if none)."""
    q = validate_counts(counts)
    if q.size > QUERIES:
        raise ValueError(f"counts has {q.size} queries, more than the {QUERIES} this release takes")
    if exact:  # integer threshold and discrete Laplace noise: every released value an integer

        def draw(scale, shape):
            return discrete_laplace(discrete_laplace_ratio(1.0 / scale), shape, rng)
    else:

        def draw(scale, shape):
            return rng.laplace(scale=scale, size=shape)

    noisy_threshold = THRESHOLD + draw(_ADAPTIVE_SCALES["rho"], (size, 1))
    top_answer = q + draw(_ADAPTIVE_SCALES["top"], (size, q.size))
    middle_answer = q + draw(_ADAPTIVE_SCALES["middle"], (size, q.size))
    top = top_answer - noisy_threshold >= ADAPTIVE_MARGIN
    fired = top | (middle_answer - noisy_threshold >= 0)
    hit = fired.any(axis=1)
    first = np.argmax(fired, axis=1)
    rows = np.arange(size)
    released_top = top_answer[rows, first] - (noisy_threshold[:, 0] if gap_on_top else 0)
    value = np.where(
        top[rows, first], released_top, middle_answer[rows, first] - noisy_threshold[:, 0]
    ).astype(float)
    items = np.full((size, 1), PAD, dtype=np.int64)
    items[hit, 0] = first[hit]
    return MixedBatch(items, np.where(hit, value, np.nan)[:, None])


def _adaptive(name, *, gap_on_top, exact):
    function = functools.partial(_adaptive_batch, gap_on_top=gap_on_top, exact=exact)
    return black_box(
        function, claim=(ADAPTIVE_EPSILON, 0.0, RELATION), width=1, name=name, values=1
    )


def adaptive_top_density(counts, j, value):
    """Exact density of the bug at (first release at ``j`` by the top test, value ``value``).

    The top test passes with q_j + η₃ = v iff ρ <= v − σ − t; every earlier query fails both
    tests given ρ = r with probability F₃(σ + t + r − q_i) · F₂(t + r − q_i).
    """
    q = [int(c) for c in validate_counts(counts)]
    v = mpmath.mpf(value)
    b1, b3, b2 = (_ADAPTIVE_SCALES[k] for k in ("rho", "top", "middle"))
    with working_precision():

        def integrand(r):
            out = laplace_pdf(r, b1)
            for i in range(j):
                out *= laplace_cdf(ADAPTIVE_MARGIN + THRESHOLD + r - q[i], b3)
                out *= laplace_cdf(THRESHOLD + r - q[i], b2)
            return out

        cut = v - ADAPTIVE_MARGIN - THRESHOLD
        kinks = (
            {c - THRESHOLD for c in q[:j]} | {c - THRESHOLD - ADAPTIVE_MARGIN for c in q[:j]} | {0}
        )
        points = sorted(mpmath.mpf(k) for k in kinks if k < cut)
        mass = mpmath.quad(integrand, [-mpmath.inf, *points, cut])
        return laplace_pdf(v - q[j], b3) * mass


#: Every query one higher; first release at the last query by the top test with value −20
#: (negative: the middle test releases gaps >= 0 only, so only the top branch has density
#: there). Far below every count each of the 9 earlier queries' "fail both" probability
#: moves by e^{ε/8 + ε/4} and the released answer's density by e^{ε/8}: 9 × 3ε/8 + ε/8.
_ADAPTIVE_PAIR = ((0,) * QUERIES, (1,) * QUERIES)
_ADAPTIVE_POINT = (QUERIES - 1, -20.0)


def _adaptive_exact():
    j, v = _ADAPTIVE_POINT
    p, q = (adaptive_top_density(c, j, v) for c in _ADAPTIVE_PAIR)
    return log_ratio(p, q), 0.0


ENTRIES = (
    CorpusEntry(
        name="svt-adaptive-noisy-answer",
        family="sparse vector",
        bug="adaptive sparse vector releases the noisy answer q + η instead of its gap to the "
        "noisy threshold when the 'top' test passes",
        source="Wang et al., CCS 2020 (CheckDP), cmla-psu/checkdp "
        "examples/badadaptivesparsevector.c (BadAdaptiveSVT; Ding et al., CCS 2019, Adaptive "
        "SVT), N = 1, ε = 1 (the file's margin 16), 10 queries, t = 1",
        build=lambda: _adaptive("svt-adaptive-noisy-answer", gap_on_top=False, exact=False),
        true=TrueGuarantee(
            3.5,
            0.0,
            "exact: log density ratio at (first release = query 10 by the top test, value "
            "−20) on the pair (mpmath), a lower bound (there ρ and every noise sit in their "
            "exponential tails: 9 × 3ε/8 + ε/8). In doubles the released answer is a double "
            "Laplace sample, porous as in Mironov 2012: no finite ε there",
            _adaptive_exact,
        ),
        pair=_ADAPTIVE_PAIR,
        twin=lambda: _adaptive("svt-adaptive", gap_on_top=True, exact=True),
        twin_source="Adaptive SVT, cmla-psu/checkdp examples/adaptivesparsevector.c (Ding et "
        "al., CCS 2019), N = 1, with an integer threshold and discrete Laplace noise so that "
        "every released gap is an integer, exact on doubles",
        audit_options=SETTING,
    ),
)
