"""Sparse-vector variants from the literature, as the auditing papers published them.

Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy",
PVLDB 10(6), 2017, Fig. 1 / Table 1 collect six variants; Ding et al. (StatDP, CCS 2018,
``cmla-psu/statdp`` ``statdp/algorithms.py``: SVT, iSVT1-4) and Bichsel et al.
(DP-Sniper, S&P 2021, ``eth-sri/dp-sniper`` ``dpsniper/mechanisms/sparse_vector_technique.py``:
SparseVectorTechnique1-6, NumericalSVT) test them; Wang et al. (CheckDP, CCS 2020,
``cmla-psu/checkdp`` ``examples/``) add gap and adaptive variants that release the noisy
answer; NVFlare's ``SVTPrivacy`` filter (issue 343) selects coordinates of a model update
with one and releases some of the accepted ones raw. The settings are DP-Sniper's own
(``dpsniper/experiments/exp_default.py``): ε = 0.1, c = 1, threshold t = 1, 10 queries of
sensitivity 1, neighbours where every query may move by 1 either way (``BoundedChange(1)``);
NVFlare's entry uses the filter's defaults; StatDP's entries use StatDP's
(``examples/benchmark.py``: claims 0.2 / 0.7 / 1.5, N = 1, T = 1, its 5-query inputs) and
StatDP's one-number release.

Queries are the counts in item order. An outcome lists the ids answered "above"
(ascending; the answers "below" are the other ids before the stop, so nothing is lost);
the value-releasing variants give the first "above" id and a real value (NaN when none).
"""

from __future__ import annotations

import functools
from typing import Any

import mpmath
import numpy as np

from mechanisms import PAD, BoundedChange, MixedBatch, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from .entry import CorpusEntry, TrueGuarantee, black_box
from .exact import integrate, laplace_cdf, laplace_pdf, log_ratio, working_precision

__all__ = [
    "ENTRIES",
    "first_above_density",
    "first_above_law",
    "hockey_stick",
    "integer_first_above_batch",
    "noiseless_summary_law",
    "noisy_summary_law",
    "nvflare_leak_probability",
    "nvflare_svt",
    "pattern_probability",
    "statdp_mismatches",
]

#: DP-Sniper's setting for every sparse-vector case (exp_default.py).
EPSILON, THRESHOLD, QUERIES = 0.1, 1.0, 10
RELATION = BoundedChange(1)


def _svt_batch(counts, size, rng, *, rho_scale, nu_scale, threshold, cutoff, queries):
    """Ids answered "above" by a sparse vector (numeric answers: none)."""
    q = validate_counts(counts).astype(float)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    width = queries if cutoff is None else min(cutoff, queries)
    rho = rng.laplace(scale=rho_scale, size=(size, 1))
    nu = rng.laplace(scale=nu_scale, size=(size, q.size)) if nu_scale else 0.0
    above = q + nu >= threshold + rho
    if cutoff is not None:
        above &= np.cumsum(above, axis=1) <= cutoff  # stop after the c-th "above"
    ids = np.where(above, np.arange(q.size), q.size + 1)
    ids.sort(axis=1)
    ids = ids[:, :width]
    out = np.full((size, width), PAD, dtype=np.int64)
    out[:, : ids.shape[1]] = np.where(ids <= q.size, ids, PAD)
    return out


def _svt_value_batch(counts, size, rng, *, rho_scale, nu_scale, value_scale, threshold, queries):
    """First id answered "above" (c = 1) and a released value: the tested answer, or a fresh one."""
    q = validate_counts(counts).astype(float)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    rho = rng.laplace(scale=rho_scale, size=(size, 1))
    noisy = q + rng.laplace(scale=nu_scale, size=(size, q.size))
    above = noisy >= threshold + rho
    hit = above.any(axis=1)
    first = np.argmax(above, axis=1)
    rows = np.arange(size)
    if value_scale is None:  # Roth's variant: the very answer that was compared
        value = noisy[rows, first]
    else:  # NumericalSVT: fresh noise on the released answer, exact on doubles
        # Discrete Laplace with ratio e^{-1/scale}: the integer Laplace mechanism (Ghosh,
        # Roughgarden, Sundararajan 2009), so the released double is DP as a double too;
        # a double Laplace sample would be porous (Mironov 2012) and not ε-DP.
        ratio = discrete_laplace_ratio(1.0 / value_scale)
        value = q[first] + discrete_laplace(ratio, size, rng)
    items = np.full((size, 1), PAD, dtype=np.int64)
    items[hit, 0] = first[hit]
    return MixedBatch(items, np.where(hit, value, np.nan)[:, None])


def _cutoff_svt(name, *, rho_scale, nu_scale, cutoff, threshold=THRESHOLD, epsilon=EPSILON):
    function = functools.partial(
        _svt_batch,
        rho_scale=rho_scale,
        nu_scale=nu_scale,
        threshold=threshold,
        cutoff=cutoff,
        queries=QUERIES,
    )
    width = QUERIES if cutoff is None else min(cutoff, QUERIES)
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=width, name=name)


# ---------------------------------------------------------------------------
# Exact laws (mpmath): ⊤ at query j given ρ = r iff ν_j >= t + r − q_j.


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


def _cutoff_epsilon(pair, **scales):
    p = first_above_law(pair[0], **scales)
    q = first_above_law(pair[1], **scales)
    return max(log_ratio(a, b) for a, b in zip(p, q))


# ---------------------------------------------------------------------------
# Lee & Clifton 2014 (Lyu–Su–Li Alg. 4): ε/4 on the threshold, 3ε/4 on the queries,
# the query noise not scaled with c. DP-Sniper SparseVectorTechnique4, StatDP iSVT3.

_LC_SCALES = {"threshold": THRESHOLD, "rho_scale": 4 / EPSILON, "nu_scale": 4 / (3 * EPSILON)}
#: Nine queries at 0 and the last at 1, against every query one higher but the last one lower:
#: the first "above" at the last query after nine "below" answers (exact ε below).
_LC_PAIR = ((0,) * 9 + (1,), (1,) * 9 + (0,))
_LC_EPSILON = 0.1747864482


def lee_clifton():
    return _cutoff_svt(
        "svt-lee-clifton", rho_scale=4 / EPSILON, nu_scale=4 / (3 * EPSILON), cutoff=1
    )


def lyu_alg1():
    """Lyu–Su–Li Alg. 1 (ε-DP): ρ ~ Lap(1/ε₁), ν ~ Lap(2c/ε₂), ε₁ = ε₂ = ε/2; DP-Sniper's t = 0.5."""
    return _cutoff_svt(
        "svt-lyu-alg1", rho_scale=2 / EPSILON, nu_scale=4 / EPSILON, cutoff=1, threshold=0.5
    )


# ---------------------------------------------------------------------------
# Chen et al. 2015 (Lyu–Su–Li Alg. 6): no cutoff, ν ~ Lap(1/ε₂). DP-Sniper SVT6, StatDP iSVT2.

_CHEN_SCALES = {"threshold": THRESHOLD, "rho_scale": 2 / EPSILON, "nu_scale": 2 / EPSILON}
_CHEN_PAIR = ((1,) * 5 + (0,) * 5, (0,) * 5 + (1,) * 5)
_CHEN_OUTCOME = (0, 1, 2, 3, 4)  # "above" exactly on the first five
_CHEN_EPSILON = 0.4144770346


def chen():
    return _cutoff_svt("svt-chen", rho_scale=2 / EPSILON, nu_scale=2 / EPSILON, cutoff=None)


def _chen_exact():
    p = pattern_probability(_CHEN_PAIR[0], _CHEN_OUTCOME, **_CHEN_SCALES)
    q = pattern_probability(_CHEN_PAIR[1], _CHEN_OUTCOME, **_CHEN_SCALES)
    return log_ratio(p, q), 0.0


# ---------------------------------------------------------------------------
# Stoddard et al. 2014 (Lyu–Su–Li Alg. 5): no noise on the queries. DP-Sniper SVT5, StatDP iSVT1.

_STODDARD_PAIR = ((1, 0), (0, 1))


def stoddard():
    return _cutoff_svt("svt-stoddard", rho_scale=2 / EPSILON, nu_scale=0.0, cutoff=None)


def _stoddard_exact():
    """ρ with t + ρ in (0, 1] answers (⊤, ⊥) on (1, 0) and never on (0, 1): P > 0 = Q."""
    with working_precision():
        b = 2 / mpmath.mpf(EPSILON)
        p = laplace_cdf(1 - THRESHOLD, b) - laplace_cdf(0 - THRESHOLD, b)
    return (float("inf") if p > 0 else 0.0), float(p)


# ---------------------------------------------------------------------------
# Roth's 2011 lecture notes (Lyu–Su–Li Alg. 3): the "above" answer is released with the very
# noise it was compared with. DP-Sniper SparseVectorTechnique3, StatDP iSVT4.

_ROTH_SCALES = {"threshold": THRESHOLD, "rho_scale": 2 / EPSILON, "nu_scale": 2 / EPSILON}
_ROTH_PAIR = ((0,) * 10, (1,) * 10)
_ROTH_POINT = (9, -20.0)  # first "above" at the last query, released answer −20
_ROTH_EPSILON = 0.5


def _value_svt(name, epsilon, *, rho_scale, nu_scale, queries, value_scale=None):
    """A sparse vector releasing (first above, its value) as a batched black box."""
    function = functools.partial(
        _svt_value_batch,
        rho_scale=rho_scale,
        nu_scale=nu_scale,
        value_scale=value_scale,
        threshold=THRESHOLD,
        queries=queries,
    )
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=1, name=name, values=1)


def _density_ratio(pair, point, scales):
    """Exact log density ratio of "first above at query j with value v" on ``pair``."""
    j, v = point
    p = first_above_density(pair[0], j, v, **scales)
    q = first_above_density(pair[1], j, v, **scales)
    return log_ratio(p, q), 0.0


def roth():
    return _value_svt(
        "svt-roth", EPSILON, rho_scale=2 / EPSILON, nu_scale=1 / (EPSILON / 2), queries=QUERIES
    )


def _roth_exact():
    return _density_ratio(_ROTH_PAIR, _ROTH_POINT, _ROTH_SCALES)


def numerical_svt():
    """NumericalSVT (Wang et al., PLDI 2019; DP-Sniper): ρ₁ ~ Lap(3/ε), ν ~ Lap(6c/ε), answer + Lap(3c/ε)."""
    return _value_svt(
        "svt-numerical",
        EPSILON,
        rho_scale=3 / EPSILON,
        nu_scale=6 / EPSILON,
        value_scale=3 / EPSILON,
        queries=QUERIES,
    )


# ---------------------------------------------------------------------------
# CheckDP's BadGapSVT (cmla-psu/checkdp examples/badgapsparsevector.c): GapSVT (ρ ~ Lap(2/ε),
# ν ~ Lap(4N/ε)) that releases the noisy answer q + ν instead of the gap q + ν − (t + ρ).
# The C code stores t + ρ in an int; the algorithm it checks (Wang et al., CCS 2020, GapSVT)
# compares with the real t + ρ, as here.

_GAP_SCALES = {"threshold": THRESHOLD, "rho_scale": 2 / EPSILON, "nu_scale": 4 / EPSILON}
_GAP_PAIR = _ROTH_PAIR
_GAP_POINT = _ROTH_POINT
_GAP_EPSILON = 0.25


def bad_gap():
    return _value_svt(
        "svt-gap-noisy-answer",
        EPSILON,
        rho_scale=2 / EPSILON,
        nu_scale=4 / EPSILON,
        queries=QUERIES,
    )


def _bad_gap_exact():
    return _density_ratio(_GAP_PAIR, _GAP_POINT, _GAP_SCALES)


def integer_first_above_batch(
    counts, size, rng, *, rho_scale, nu_scale, threshold, queries, release="gap"
):
    """The first id answered "above" by an integer-noise sparse vector (c = 1) and a number.

    Integer threshold and discrete Laplace noise (ratio e^{-1/scale}), so every released
    number is an integer, exact on doubles. ``release``: ``"gap"``, GapSVT's q + ν − (t + ρ)
    (Wang et al., CCS 2020; the randomness alignment of its proof — shift ρ by 1 and the
    "above" answer's ν by q − q' + 1 — maps integers to integers at the same cost), or
    ``"answer"``, the noisy answer q + ν itself (Lyu–Su–Li, PVLDB 2017, Alg. 3 (Roth);
    CheckDP's BadGapSVT): not DP at the claimed ε. NaN where no id is above.
    """
    if release not in ("gap", "answer"):
        raise ValueError(f'release must be "gap" or "answer", not {release!r}')
    q = validate_counts(counts)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    rho = discrete_laplace(discrete_laplace_ratio(1.0 / rho_scale), (size, 1), rng)
    noisy = q + discrete_laplace(discrete_laplace_ratio(1.0 / nu_scale), (size, q.size), rng)
    gap = noisy - (int(threshold) + rho)
    above = gap >= 0
    hit = above.any(axis=1)
    first = np.argmax(above, axis=1)
    items = np.full((size, 1), PAD, dtype=np.int64)
    items[hit, 0] = first[hit]
    released = gap if release == "gap" else noisy
    value = released[np.arange(size), first].astype(float)
    return MixedBatch(items, np.where(hit, value, np.nan)[:, None])


def gap_svt():
    """GapSVT (Wang et al., CCS 2020; CheckDP gapsparsevector.c), c = 1, integer noise: ε-DP."""
    function = functools.partial(
        integer_first_above_batch,
        rho_scale=2 / EPSILON,
        nu_scale=4 / EPSILON,
        threshold=THRESHOLD,
        queries=QUERIES,
    )
    return black_box(function, claim=(EPSILON, 0.0, RELATION), width=1, name="svt-gap", values=1)


# ---------------------------------------------------------------------------
# StatDP's iSVT3 (Lee & Clifton) at StatDP's own setting: claim 0.7, N = 1, T = 1, 5 queries,
# and StatDP's release: one number, the Hamming distance of the answers (padded with
# nothing after the stop) to "the first ⌊d/2⌋ above, the rest below".

STATDP_EPSILON, STATDP_QUERIES = 0.7, 5
_STATDP_LC_SCALES = {
    "threshold": THRESHOLD,
    "rho_scale": 4 / STATDP_EPSILON,
    "nu_scale": 4 / (3 * STATDP_EPSILON),
}
_STATDP_LC_PAIR = ((0,) * 4 + (1,), (1,) * 4 + (0,))


def statdp_hamming(first, queries):
    """StatDP's iSVT summary for c = 1: Hamming distance of the answers to its reference.

    ``first`` is the id of the first "above" (``queries`` when none). The answers are
    ⊥ before it, ⊤ at it and missing after it (a missing answer differs from every
    reference answer); the reference is ⊤ on the first ⌊d/2⌋ queries, ⊥ on the rest.
    """
    first = np.asarray(first)
    half = queries // 2
    below_mismatch = np.minimum(first, half)  # ⊥ where the reference says ⊤
    stopped = first < queries
    return np.where(
        stopped,
        below_mismatch + (first >= half) + (queries - 1 - first),
        half,
    )


def _statdp_isvt3_batch(counts, size, rng, *, rho_scale, nu_scale, threshold, queries):
    q = validate_counts(counts).astype(float)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    rho = rng.laplace(scale=rho_scale, size=(size, 1))
    above = q + rng.laplace(scale=nu_scale, size=(size, q.size)) > threshold + rho
    first = np.where(above.any(axis=1), np.argmax(above, axis=1), q.size)
    return statdp_hamming(first, q.size).astype(float)


def _statdp_svt_batch(counts, size, rng, *, rho_scale, nu_scale, threshold, queries):
    """StatDP's SVT (N = 1): the number of "below" answers before the stop."""
    q = validate_counts(counts).astype(float)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    rho = rng.laplace(scale=rho_scale, size=(size, 1))
    above = q + rng.laplace(scale=nu_scale, size=(size, q.size)) >= threshold + rho
    return np.where(above.any(axis=1), np.argmax(above, axis=1), q.size).astype(float)


def statdp_isvt3():
    function = functools.partial(
        _statdp_isvt3_batch,
        rho_scale=_STATDP_LC_SCALES["rho_scale"],
        nu_scale=_STATDP_LC_SCALES["nu_scale"],
        threshold=THRESHOLD,
        queries=STATDP_QUERIES,
    )
    return black_box(
        function,
        claim=(STATDP_EPSILON, 0.0, RELATION),
        width=0,
        name="svt-lee-clifton-statdp",
        values=1,
    )


def statdp_svt():
    """StatDP's SVT (ε-DP; Lyu–Su–Li Alg. 1 with c = 1): ρ ~ Lap(2/ε), ν ~ Lap(4/ε), T = 0.5."""
    function = functools.partial(
        _statdp_svt_batch,
        rho_scale=2 / STATDP_EPSILON,
        nu_scale=4 / STATDP_EPSILON,
        threshold=0.5,
        queries=STATDP_QUERIES,
    )
    return black_box(
        function, claim=(STATDP_EPSILON, 0.0, RELATION), width=0, name="svt-statdp", values=1
    )


def statdp_summary_law(counts, **scales):
    """Exact law of StatDP's iSVT3 summary: {Hamming distance: probability} (mpmath)."""
    law = first_above_law(counts, **scales)
    out: dict[int, object] = {}
    for first, p in enumerate(law):
        key = int(statdp_hamming(first, len(law) - 1))
        out[key] = out.get(key, 0) + p
    return out


def _statdp_isvt3_exact():
    p = statdp_summary_law(_STATDP_LC_PAIR[0], **_STATDP_LC_SCALES)
    q = statdp_summary_law(_STATDP_LC_PAIR[1], **_STATDP_LC_SCALES)
    return max(log_ratio(p[k], q[k]) for k in p), 0.0


# StatDP's iSVT4 (Roth's variant) at StatDP's setting: the "above" answer released with the
# noise it was compared with; StatDP's release (the number of "below" answers, the last
# answer) is the first "above" id and its value.

_STATDP_ROTH_SCALES = {
    "threshold": THRESHOLD,
    "rho_scale": 2 / STATDP_EPSILON,
    "nu_scale": 2 / STATDP_EPSILON,
}
_STATDP_ROTH_PAIR = ((0,) * STATDP_QUERIES, (1,) * STATDP_QUERIES)
_STATDP_ROTH_POINT = (STATDP_QUERIES - 1, -20.0)


def statdp_isvt4():
    return _value_svt(
        "svt-roth-statdp",
        STATDP_EPSILON,
        rho_scale=2 / STATDP_EPSILON,
        nu_scale=2 / STATDP_EPSILON,
        queries=STATDP_QUERIES,
    )


def _statdp_isvt4_exact():
    return _density_ratio(_STATDP_ROTH_PAIR, _STATDP_ROTH_POINT, _STATDP_ROTH_SCALES)


_STATDP_LC_EPSILON = 1.149300004


# StatDP's iSVT1 (Stoddard et al.) and iSVT2 (Chen et al.) at StatDP's setting: no cutoff,
# every query answered; released as StatDP's one number, the Hamming distance of the d
# answers to "the first ⌊d/2⌋ above, the rest below".


def _statdp_all_answers_batch(counts, size, rng, *, rho_scale, nu_scale, threshold, queries):
    q = validate_counts(counts).astype(float)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    rho = rng.laplace(scale=rho_scale, size=(size, 1))
    nu = rng.laplace(scale=nu_scale, size=(size, q.size)) if nu_scale else 0.0
    return statdp_mismatches(q + nu >= threshold + rho).astype(float)


def statdp_mismatches(above):
    """StatDP's summary of every answer: Hamming distance of each row of ``above`` (⊤ = True)
    to its reference, ⊤ on the first ⌊d/2⌋ queries and ⊥ on the rest."""
    above = np.asarray(above, dtype=bool)
    reference = np.arange(above.shape[1]) < above.shape[1] // 2
    return (above != reference).sum(axis=1)


def _statdp_all_answers(name, *, nu_scale):
    function = functools.partial(
        _statdp_all_answers_batch,
        rho_scale=2 / STATDP_EPSILON,
        nu_scale=nu_scale,
        threshold=THRESHOLD,
        queries=STATDP_QUERIES,
    )
    return black_box(function, claim=(STATDP_EPSILON, 0.0, RELATION), width=0, name=name, values=1)


def statdp_isvt1():
    """StatDP's iSVT1: ρ ~ Lap(2/ε), no noise on the queries, no cutoff."""
    return _statdp_all_answers("svt-stoddard-statdp", nu_scale=0.0)


def statdp_isvt2():
    """StatDP's iSVT2: ρ ~ Lap(2/ε), ν ~ Lap(2/ε) not scaled with the answers, no cutoff."""
    return _statdp_all_answers("svt-chen-statdp", nu_scale=2 / STATDP_EPSILON)


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


#: Stoddard's variant: on (1, 1, 0, 0, 0) every ρ in (−1, 0] answers exactly the reference
#: (summary 0); on (0, 0, 1, 1, 1) no ρ does: no finite ε.
_STATDP_STODDARD_PAIR = ((1, 1, 0, 0, 0), (0, 0, 1, 1, 1))
#: The pair with the largest δ at the claimed ε found by an exhaustive search over counts in
#: {0, ..., 4} (0.399 over {0, ..., 3}: it grows with the counts' range).
_STATDP_STODDARD_DELTA_PAIR = ((0, 2, 2, 4, 4), (1, 1, 3, 3, 3))
#: Chen's variant: the summary 0 (every answer on the reference: ⊤ ⊤ ⊥ ⊥ ⊥) on
#: (0, 0, k, k, k) against (1, 1, k − 1, k − 1, k − 1); its loss grows with k (1.42 at k = 2,
#: 1.54 at 4, 1.63 at 8) while its probability shrinks. An exhaustive search over counts in
#: {0, ..., 3} finds nothing larger than this family at k = 3.
_STATDP_CHEN_PAIR = ((0, 0, 8, 8, 8), (1, 1, 7, 7, 7))
_STATDP_CHEN_ABOVE = (0, 1)
_STATDP_STODDARD_DELTA = 0.4726870806
_STATDP_CHEN_EPSILON = 1.6262589936


def hockey_stick(p, q, epsilon):
    """Σ_k max(0, p_k − e^ε q_k) over the outcomes of two laws ``{outcome: probability}``."""
    with working_precision():
        factor = mpmath.exp(mpmath.mpf(epsilon))
        return mpmath.fsum(max(0, pk - factor * q.get(k, 0)) for k, pk in p.items())


def _statdp_isvt1_exact():
    scales = {"threshold": THRESHOLD, "rho_scale": 2 / STATDP_EPSILON}
    p, q = (noiseless_summary_law(c, **scales) for c in _STATDP_STODDARD_PAIR)
    p_delta, q_delta = (noiseless_summary_law(c, **scales) for c in _STATDP_STODDARD_DELTA_PAIR)
    epsilon = max(log_ratio(p.get(k, 0), q.get(k, 0)) for k in p)
    return epsilon, float(hockey_stick(p_delta, q_delta, STATDP_EPSILON))


def _statdp_isvt2_exact():
    """Summary 0 is the one pattern ⊤ ⊤ ⊥ ⊥ ⊥ (every answer on the reference)."""
    scales = {
        "threshold": THRESHOLD,
        "rho_scale": 2 / STATDP_EPSILON,
        "nu_scale": 2 / STATDP_EPSILON,
    }
    p, q = (pattern_probability(c, _STATDP_CHEN_ABOVE, **scales) for c in _STATDP_CHEN_PAIR)
    return log_ratio(p, q), 0.0


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


# ---------------------------------------------------------------------------
# DP-Sniper's SVT34Parallel (eth-sri/dp-sniper dpsniper/mechanisms/parallel.py, run by
# experiments/exp_default.py with its defaults ε = 0.1, c = 2, t = 1 on 10 queries):
# SparseVectorTechnique3 (Roth's variant, Lyu–Su–Li Alg. 3) and SparseVectorTechnique4 (Lee &
# Clifton's, Alg. 4) run side by side on the same queries with independent noise. Each part is
# stated ε-DP, so the pair composes to 2ε (the claim here); both parts are broken.
# Released losslessly: the ids SVT3 answers "above" (ascending, at most c) as items with their
# answers as values (NaN where none), then the ids SVT4 answers "above" as values (−1: none).
# The audit flags the entry through the doubles (SVT3's answers are porous Laplace samples).
# Its algorithmic loss alone is hard to see by sampling: on the witness pair the joint id event
# "both parts above only at query 10" has P = 6.1e-5 and loss 0.273 against the claimed 0.2, and
# the larger losses need SVT3's answer near 1 as well. With integer noise in SVT3 (the same
# algorithmic loss, no porous doubles) the default audit at 1e7 samples is INCONCLUSIVE with
# ε >= 0 on seeds 0-2, and on seed 0 with the witness pair given (measured 2026-11-25).

PARALLEL_CUTOFF = 2
_P3_SCALES = {
    "threshold": THRESHOLD,
    "rho_scale": 2 / EPSILON,
    "nu_scale": 2 * PARALLEL_CUTOFF / EPSILON,
}
_P4_SCALES = {"threshold": THRESHOLD, "rho_scale": 4 / EPSILON, "nu_scale": 4 / (3 * EPSILON)}
#: Lee & Clifton's pair; the witness: SVT3's first "above" at the last query with answer 1,
#: and SVT4's only "above" at the last query (independent noise: the two losses add).
_PARALLEL_PAIR = _LC_PAIR
_PARALLEL_POINT = (QUERIES - 1, 1.0)
_PARALLEL_ABOVE = (QUERIES - 1,)
_PARALLEL_EPSILON = 0.4243140582


def _svt34_batch(counts, size, rng, *, cutoff):
    """SVT3's "above" ids (items) with their answers, then SVT4's "above" ids (values)."""
    q = validate_counts(counts).astype(float)
    if q.size > QUERIES:
        raise ValueError(f"counts has {q.size} queries, more than the {QUERIES} this release takes")
    rho = rng.laplace(scale=_P3_SCALES["rho_scale"], size=(size, 1))
    noisy = q + rng.laplace(scale=_P3_SCALES["nu_scale"], size=(size, q.size))
    above = noisy >= THRESHOLD + rho
    above &= np.cumsum(above, axis=1) <= cutoff  # stop after the c-th "above"
    items = np.full((size, cutoff), PAD, dtype=np.int64)
    values = np.full((size, 2 * cutoff), np.nan)
    rank = np.cumsum(above, axis=1) - 1  # 0 for the first "above", 1 for the second, ...
    rows, cols = np.nonzero(above)
    items[rows, rank[rows, cols]] = cols
    values[rows, rank[rows, cols]] = noisy[rows, cols]
    second = _svt_batch(
        counts,
        size,
        rng,
        rho_scale=_P4_SCALES["rho_scale"],
        nu_scale=_P4_SCALES["nu_scale"],
        threshold=THRESHOLD,
        cutoff=cutoff,
        queries=QUERIES,
    )
    # A value slot past the items holds a number: −1 where SVT4 gave no such "above" (as
    # DP-Sniper marks an answer that was not given).
    values[:, cutoff:] = np.where(second == PAD, -1, second)
    return MixedBatch(items, values)


def svt34_parallel():
    function = functools.partial(_svt34_batch, cutoff=PARALLEL_CUTOFF)
    return black_box(
        function,
        claim=(2 * EPSILON, 0.0, RELATION),
        width=PARALLEL_CUTOFF,
        name="svt34-parallel",
        values=2 * PARALLEL_CUTOFF,
    )


def _svt34_exact():
    """SVT3's log density ratio at its point plus SVT4's log probability ratio of its pattern."""
    j, v = _PARALLEL_POINT
    a, b = _PARALLEL_PAIR
    p3, q3 = (first_above_density(c, j, v, **_P3_SCALES) for c in (a, b))
    p4, q4 = (pattern_probability(c, _PARALLEL_ABOVE, **_P4_SCALES) for c in (a, b))
    return log_ratio(p3, q3) + log_ratio(p4, q4), 0.0


# ---------------------------------------------------------------------------
# NVIDIA/NVFlare issue 343: ``SVTPrivacy`` (nvflare/app_common/filters/svt_privacy.py) selects
# coordinates of a model update by a sparse vector and releases the selected ones noised,
# but the coordinates it accepted and then did not keep are released raw. The filter clips
# each coordinate w to [−γ, γ] and tests |clip(w)| + ν >= τ + ρ, ρ ~ Lap(2γ/ε₁),
# ν ~ Lap(4γc/ε₂) with ε₂ = ε₁(2c)^{2/3} (Lyu–Su–Li's ratio), c = ⌈d · fraction⌉; it retests
# the candidates not yet accepted, with fresh ν, until c are accepted, keeps c of them drawn
# with replacement, and releases clip(w + Lap(2γ/ε₃), −γ, γ) there and 0 at the candidates
# never accepted. Its defaults: fraction 0.1, ε₁ = 0.1, ε₃ = noise_var = 0.1, τ = γ/10
# (1e-6 with γ = 1e-5); here γ = 1 count, a coordinate is a count (w >= 0), and 10
# coordinates give c = 1. The claim is the three budgets composed, ε₁ + ε₂ + ε₃ (Lyu–Su–Li,
# PVLDB 2017, §4, numeric answers; the filter states the three, not their sum), for
# updates whose coordinates move by at most 2γ, the sensitivity its noise scales assume.

NVFLARE_EPSILON_1, NVFLARE_EPSILON_3, NVFLARE_GAMMA, NVFLARE_TAU = 0.1, 0.1, 1.0, 0.1
NVFLARE_KEPT = 1  # ⌈10 · 0.1⌉
NVFLARE_EPSILON_2 = NVFLARE_EPSILON_1 * (2 * NVFLARE_KEPT) ** (2 / 3)
NVFLARE_RHO_SCALE = 2 * NVFLARE_GAMMA / NVFLARE_EPSILON_1
NVFLARE_NU_SCALE = 4 * NVFLARE_GAMMA * NVFLARE_KEPT / NVFLARE_EPSILON_2
NVFLARE_VALUE_SCALE = 2 * NVFLARE_GAMMA / NVFLARE_EPSILON_3
NVFLARE_RELATION = BoundedChange(2)


def _laplace_survival(x, scale):
    """P(L >= x) for L ~ Laplace(0, scale), elementwise in doubles."""
    return np.where(x >= 0, 0.5 * np.exp(-np.abs(x) / scale), 1 - 0.5 * np.exp(-np.abs(x) / scale))


def _nvflare_batch(counts, size, rng, *, leak_raw, exact):
    """One ``SVTPrivacy`` release per row: the d coordinates after the filter.

    Given ρ, each retest of coordinate j accepts it with probability a_j = P(v_j + ν >= τ + ρ)
    (v_j = |clip(w_j)|), independently across rounds and coordinates, so j is first accepted
    in round R_j ~ Geometric(a_j); the loop stops at the first round that accepts any (c = 1)
    and the accepted set is {j : R_j = min R}. One of them is kept, uniformly. ``leak_raw``:
    the others keep their raw value (as shipped); otherwise 0 (the fix). ``exact``: the kept
    value's noise is discrete Laplace (ratio e^{-1/scale}), so the release is DP on doubles.
    """
    w = validate_counts(counts).astype(float)
    if w.size > QUERIES:
        raise ValueError(
            f"counts has {w.size} coordinates, more than the {QUERIES} this keeps 1 of"
        )
    clipped = np.clip(w, -NVFLARE_GAMMA, NVFLARE_GAMMA)
    threshold = NVFLARE_TAU + rng.laplace(scale=NVFLARE_RHO_SCALE, size=(size, 1))
    accept = _laplace_survival(threshold - np.abs(clipped), NVFLARE_NU_SCALE)
    uniform = 1.0 - rng.random((size, w.size))  # in (0, 1]
    with np.errstate(divide="ignore"):
        rounds = np.maximum(np.ceil(np.log(uniform) / np.log1p(-accept)), 1.0)
    accepted = rounds == rounds.min(axis=1, keepdims=True)
    key = np.where(accepted, rng.random((size, w.size)), -1.0)
    kept = np.argmax(key, axis=1)
    if exact:
        ratio = discrete_laplace_ratio(1.0 / NVFLARE_VALUE_SCALE)
        noise = discrete_laplace(ratio, size, rng).astype(float)
    else:
        noise = rng.laplace(scale=NVFLARE_VALUE_SCALE, size=size)
    out = np.where(accepted, w, 0.0) if leak_raw else np.zeros((size, w.size))
    out[np.arange(size), kept] = np.clip(w[kept] + noise, -NVFLARE_GAMMA, NVFLARE_GAMMA)
    return out


def nvflare_svt(name, *, leak_raw, exact):
    function = functools.partial(_nvflare_batch, leak_raw=leak_raw, exact=exact)
    claim = (NVFLARE_EPSILON_1 + NVFLARE_EPSILON_2 + NVFLARE_EPSILON_3, 0.0, NVFLARE_RELATION)
    return black_box(function, claim=claim, width=0, name=name, values=QUERIES)


#: Every coordinate at 2 (clipped to 1) against every one at 1: 2.0 is released only as a
#: raw value, which the second histogram never has.
NVFLARE_PAIR = ((2,) * QUERIES, (1,) * QUERIES)


def nvflare_leak_probability(queries=QUERIES):
    """Exact P(some accepted coordinate is not kept) when every coordinate clips to γ (mpmath).

    With all a_j = a, K ~ Binomial(d, a) coordinates are accepted given K >= 1, and one is
    kept: the others leak when K >= 2. P(K >= 2 | K >= 1), summed over k term by term (no
    cancellation where a is tiny), integrated over the threshold noise ρ
    (a = P(ν >= τ + ρ − γ)).
    """
    d = queries
    with working_precision():

        def integrand(r):
            x = (NVFLARE_TAU + r - NVFLARE_GAMMA) / mpmath.mpf(NVFLARE_NU_SCALE)
            a = mpmath.exp(-x) / 2 if x >= 0 else 1 - mpmath.exp(x) / 2  # P(ν >= x·scale)
            terms = [mpmath.binomial(d, k) * a**k * (1 - a) ** (d - k) for k in range(d + 1)]
            return (
                laplace_pdf(r, NVFLARE_RHO_SCALE) * mpmath.fsum(terms[2:]) / mpmath.fsum(terms[1:])
            )

        return integrate(integrand, [0, NVFLARE_GAMMA - NVFLARE_TAU])


def _nvflare_exact():
    """The event "some coordinate released as 2.0": P = the leak probability, Q = 0."""
    p = nvflare_leak_probability()
    return (float("inf") if p > 0 else 0.0), float(p)


#: The leak probability on the pair (mpmath, ``nvflare_leak_probability``).
_NVFLARE_DELTA = 0.8818985528424


_SVT_SOURCE = "Lyu, Su, Li, PVLDB 2017, Fig. 1 Alg. {alg}; DP-Sniper {sniper}; StatDP {statdp}"
_ALG1 = "Lyu, Su, Li, PVLDB 2017, Alg. 1 (ε-DP); DP-Sniper SparseVectorTechnique1 (c = 1, t = 0.5)"
_SETTING = {"domain_size": QUERIES}

ENTRIES = (
    CorpusEntry(
        name="svt-lee-clifton",
        family="sparse vector",
        bug="threshold noise Lap(4/ε), query noise Lap(4/(3ε)) not scaled with the cutoff c",
        source=_SVT_SOURCE.format(alg=4, sniper="SparseVectorTechnique4", statdp="iSVT3")
        + " (Lee & Clifton, KDD 2014)",
        build=lee_clifton,
        true=TrueGuarantee(
            _LC_EPSILON,
            0.0,
            "exact: ε of the pair (mpmath over the d + 1 outcomes); at most (1 + 6c)ε/4 = 0.175 "
            "by Lyu–Su–Li's analysis of Alg. 4; DP-Sniper's published lower bound 0.17",
            lambda: (_cutoff_epsilon(_LC_PAIR, **_LC_SCALES), 0.0),
        ),
        pair=_LC_PAIR,
        twin=lyu_alg1,
        twin_source=_ALG1,
        audit_options=_SETTING,
    ),
    CorpusEntry(
        name="svt-chen",
        family="sparse vector",
        bug="no cutoff: every query answered, query noise Lap(2/ε) (loss grows with the answers)",
        source=_SVT_SOURCE.format(alg=6, sniper="SparseVectorTechnique6", statdp="iSVT2")
        + " (Chen et al., KDD 2015)",
        build=chen,
        true=TrueGuarantee(
            _CHEN_EPSILON,
            0.0,
            "exact: privacy loss of the outcome 'above exactly on the first five' on the pair "
            "(mpmath), a lower bound on ε for 10 queries; unbounded as queries grow "
            "(Lyu–Su–Li, Alg. 6 is not ε'-DP for any ε')",
            _chen_exact,
        ),
        pair=_CHEN_PAIR,
        twin=lyu_alg1,
        twin_source=_ALG1,
        audit_options=_SETTING,
    ),
    CorpusEntry(
        name="svt-stoddard",
        family="sparse vector",
        bug="no noise on the queries: the answers are a function of the threshold noise alone",
        source=_SVT_SOURCE.format(alg=5, sniper="SparseVectorTechnique5", statdp="iSVT1")
        + " (Stoddard et al., 2014)",
        build=stoddard,
        true=TrueGuarantee(
            float("inf"),
            0.02438528775,
            "exact: the outcome (above, below) has P = (1 − e^{−ε/2})/2 on (1, 0) and Q = 0 "
            "on (0, 1) (closed form, mpmath): no finite ε (Lyu–Su–Li, Alg. 5); δ at the "
            "claimed ε is at least that P",
            _stoddard_exact,
        ),
        pair=_STODDARD_PAIR,
        twin=lyu_alg1,
        twin_source=_ALG1,
        audit_options=_SETTING,
    ),
    CorpusEntry(
        name="svt-roth",
        family="sparse vector",
        bug="the 'above' answer is released with the noise it was compared with",
        source=_SVT_SOURCE.format(alg=3, sniper="SparseVectorTechnique3", statdp="iSVT4")
        + " (Roth, lecture notes 2011)",
        build=roth,
        true=TrueGuarantee(
            _ROTH_EPSILON,
            0.0,
            "exact: log density ratio at (first above = query 10, answer −20) on the pair "
            "(mpmath), a lower bound (there ρ and every noise sit in their exponential "
            "tails: 10 × ε/2); unbounded as queries grow (Lyu–Su–Li, Alg. 3)",
            _roth_exact,
        ),
        pair=_ROTH_PAIR,
        twin=numerical_svt,
        twin_source="NumericalSVT, Wang et al., PLDI 2019 (ε-DP); DP-Sniper NumericalSVT (c = 1)",
        audit_options=_SETTING,
    ),
    CorpusEntry(
        name="svt-gap-noisy-answer",
        family="sparse vector",
        bug="gap sparse vector releases the noisy answer q + ν instead of the gap to the "
        "noisy threshold",
        source="Wang et al., CCS 2020 (CheckDP), cmla-psu/checkdp examples/badgapsparsevector.c "
        "(BadGapSVT, Alg. GapSVT with the wrong output), c = 1, DP-Sniper's setting",
        build=bad_gap,
        true=TrueGuarantee(
            _GAP_EPSILON,
            0.0,
            "exact: log density ratio at (first above = query 10, answer −20) on the pair "
            "(mpmath), a lower bound (there ρ and every noise sit in their exponential tails: "
            "10 × ε/4); it grows with the number of queries. In doubles the released answer "
            "is a double Laplace sample, porous as in Mironov 2012: no finite ε there",
            _bad_gap_exact,
        ),
        pair=_GAP_PAIR,
        twin=gap_svt,
        twin_source="GapSVT, cmla-psu/checkdp examples/gapsparsevector.c (Wang et al., CCS "
        "2020), c = 1, with integer (discrete Laplace) noise so that it is DP on doubles",
        audit_options=_SETTING,
    ),
    CorpusEntry(
        name="svt-lee-clifton-statdp",
        family="sparse vector",
        bug="Lee & Clifton's sparse vector (query noise Lap(4/(3ε)) not scaled with N) at "
        "StatDP's claim 0.7, released as StatDP's one-number summary",
        source="Ding et al., CCS 2018 (StatDP), statdp/algorithms.py iSVT3 with "
        "examples/benchmark.py's N = 1, T = 1, claim 0.7; Lyu, Su, Li, PVLDB 2017, Alg. 4",
        build=statdp_isvt3,
        true=TrueGuarantee(
            _STATDP_LC_EPSILON,
            0.0,
            "exact: privacy loss of the summary 3 (= first above at the last of 5 queries) "
            "on the pair (mpmath over the d + 1 stops), a lower bound; at most (1 + 6N)ε/4 "
            "= 1.225 by Lyu–Su–Li's analysis of Alg. 4",
            _statdp_isvt3_exact,
        ),
        pair=_STATDP_LC_PAIR,
        twin=statdp_svt,
        twin_source="StatDP statdp/algorithms.py SVT (N = 1, T = 0.5, claim 0.7; ε-DP, "
        "Lyu–Su–Li Alg. 1)",
        audit_options={"domain_size": STATDP_QUERIES},
    ),
    CorpusEntry(
        name="svt-roth-statdp",
        family="sparse vector",
        bug="the 'above' answer is released with the noise it was compared with, at StatDP's "
        "claim 0.7 on 5 queries",
        source="Ding et al., CCS 2018 (StatDP), statdp/algorithms.py iSVT4 with "
        "examples/benchmark.py's N = 1, T = 1, claim 0.7; Lyu, Su, Li, PVLDB 2017, Alg. 3",
        build=statdp_isvt4,
        true=TrueGuarantee(
            STATDP_QUERIES * STATDP_EPSILON / 2,
            0.0,
            "exact: log density ratio at (first above = query 5, answer −20) on the pair "
            "(mpmath), a lower bound (there ρ and every noise sit in their exponential tails: "
            "5 × ε/2). In doubles the released answer is a double Laplace sample, porous as "
            "in Mironov 2012: no finite ε there",
            _statdp_isvt4_exact,
        ),
        pair=_STATDP_ROTH_PAIR,
        twin=statdp_svt,
        twin_source="StatDP statdp/algorithms.py SVT (N = 1, T = 0.5, claim 0.7; ε-DP, "
        "Lyu–Su–Li Alg. 1)",
        audit_options={"domain_size": STATDP_QUERIES},
    ),
    CorpusEntry(
        name="svt-stoddard-statdp",
        family="sparse vector",
        bug="no noise on the queries and no cutoff, at StatDP's claim 0.7 on 5 queries, "
        "released as StatDP's one-number summary",
        source="Ding et al., CCS 2018 (StatDP), statdp/algorithms.py iSVT1 with "
        "examples/benchmark.py's T = 1, claim 0.7; Lyu, Su, Li, PVLDB 2017, Alg. 5 "
        "(Stoddard et al., 2014)",
        build=statdp_isvt1,
        true=TrueGuarantee(
            float("inf"),
            _STATDP_STODDARD_DELTA,
            "exact: the summary 0 has P = P(−1 < ρ <= 0) = (1 − e^{−ε/2})/2 on (1, 1, 0, 0, 0) "
            "and Q = 0 on (0, 0, 1, 1, 1) (mpmath over the intervals of ρ): no finite ε. δ at "
            "the claimed ε is at least 0.473, the hockey-stick divergence of the summary's "
            "laws on (0, 2, 2, 4, 4) and (1, 1, 3, 3, 3), the largest over counts in {0..4}",
            _statdp_isvt1_exact,
        ),
        pair=_STATDP_STODDARD_PAIR,
        twin=statdp_svt,
        twin_source="StatDP statdp/algorithms.py SVT (N = 1, T = 0.5, claim 0.7; ε-DP, "
        "Lyu–Su–Li Alg. 1)",
        audit_options={"domain_size": STATDP_QUERIES},
    ),
    CorpusEntry(
        name="svt-chen-statdp",
        family="sparse vector",
        bug="no cutoff, query noise Lap(2/ε) not scaled with the answers, at StatDP's claim "
        "0.7 on 5 queries, released as StatDP's one-number summary",
        source="Ding et al., CCS 2018 (StatDP), statdp/algorithms.py iSVT2 with "
        "examples/benchmark.py's T = 1, claim 0.7; Lyu, Su, Li, PVLDB 2017, Alg. 6 "
        "(Chen et al., KDD 2015)",
        build=statdp_isvt2,
        true=TrueGuarantee(
            _STATDP_CHEN_EPSILON,
            0.0,
            "exact: privacy loss of the summary 0 (answers ⊤ ⊤ ⊥ ⊥ ⊥) on the pair (mpmath), "
            "a lower bound on ε: it grows with the counts (1.42 on counts in {0, 1, 2}, 1.63 "
            "here); Lyu–Su–Li: Alg. 6 is not ε'-DP for any ε' as the queries grow",
            _statdp_isvt2_exact,
        ),
        pair=_STATDP_CHEN_PAIR,
        twin=statdp_svt,
        twin_source="StatDP statdp/algorithms.py SVT (N = 1, T = 0.5, claim 0.7; ε-DP, "
        "Lyu–Su–Li Alg. 1)",
        audit_options={"domain_size": STATDP_QUERIES},
    ),
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
        audit_options=_SETTING,
    ),
    CorpusEntry(
        name="svt34-parallel",
        family="sparse vector",
        bug="Roth's and Lee & Clifton's sparse vectors (c = 2) run side by side on the same "
        "queries: each part is broken, so their composition exceeds its 2ε",
        source="Bichsel et al., S&P 2021 (DP-Sniper), eth-sri/dp-sniper "
        "dpsniper/mechanisms/parallel.py SVT34Parallel (SparseVectorTechnique3 and 4, "
        "ε = 0.1, c = 2, t = 1) as experiments/exp_default.py runs it on 10 queries; Lyu, Su, "
        "Li, PVLDB 2017, Alg. 3 and Alg. 4",
        build=svt34_parallel,
        true=TrueGuarantee(
            _PARALLEL_EPSILON,
            0.0,
            "exact: on Lee & Clifton's pair, SVT3's log density ratio at (first above = query "
            "10, answer 1) plus SVT4's log probability ratio of 'above only at query 10' "
            "(mpmath; independent noise, so the losses add), a lower bound: 0.249 + 0.175. "
            "In doubles SVT3's answers are double Laplace samples, porous as in Mironov 2012: "
            "no finite ε there",
            _svt34_exact,
        ),
        pair=_PARALLEL_PAIR,
        audit_options=_SETTING,
    ),
    CorpusEntry(
        name="nvflare-svt-raw-leak",
        family="sparse vector",
        bug="sparse vector selection of update coordinates: the coordinates accepted but not "
        "kept are released raw, neither noised nor zeroed",
        source="NVIDIA/NVFlare issue 343 (SVTPrivacy might be incorrect?: "
        "nvflare/app_common/filters/svt_privacy.py keeps np.random.choice(accepted) and zeroes "
        "only candidate_idx), fixed by PR 348; the filter's defaults (fraction 0.1, ε₁ = 0.1, "
        "ε₃ = 0.1), 10 coordinates, γ = 1",
        build=lambda: nvflare_svt("nvflare-svt-raw-leak", leak_raw=True, exact=False),
        true=TrueGuarantee(
            float("inf"),
            _NVFLARE_DELTA,
            "exact: some coordinate is released as its raw count 2 with P = P(K >= 2 | K >= 1) "
            "integrated over the threshold noise (mpmath), K ~ Binomial(10, a) the accepted "
            "coordinates; never on the neighbour, where every count is 1: no finite ε, δ at "
            "the claimed ε is at least that P",
            _nvflare_exact,
        ),
        pair=NVFLARE_PAIR,
        twin=lambda: nvflare_svt("nvflare-svt", leak_raw=False, exact=True),
        twin_source="NVFlare PR 348 (the fix: every coordinate not kept released as 0), with "
        "integer (discrete Laplace) noise on the kept value so that it is DP on doubles",
        audit_options=_SETTING,
    ),
)
