"""DP-Sniper's SVT34Parallel: Roth's and Lee & Clifton's sparse vectors side by side (c = 2)."""

from __future__ import annotations

import functools

import numpy as np

from mechanisms import PAD, MixedBatch, validate_counts

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import log_ratio
from .base import EPSILON, QUERIES, RELATION, SETTING, THRESHOLD, svt_batch
from .laws import first_above_density, pattern_probability
from .lyu import LC_PAIR

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
_PARALLEL_PAIR = LC_PAIR
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
    second = svt_batch(
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


ENTRIES = (
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
        audit_options=SETTING,
    ),
)
