"""CheckDP's BadGapSVT (the noisy answer released instead of the gap) and GapSVT, its twin."""

from __future__ import annotations

import functools

import numpy as np

from mechanisms import PAD, MixedBatch, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import CorpusEntry, TrueGuarantee, black_box
from .base import EPSILON, QUERIES, RELATION, SETTING, THRESHOLD, value_svt
from .laws import density_ratio
from .lyu import ROTH_PAIR, ROTH_POINT

# ---------------------------------------------------------------------------
# CheckDP's BadGapSVT (cmla-psu/checkdp examples/badgapsparsevector.c): GapSVT (ρ ~ Lap(2/ε),
# ν ~ Lap(4N/ε)) that releases the noisy answer q + ν instead of the gap q + ν − (t + ρ).
# The C code stores t + ρ in an int; the algorithm it checks (Wang et al., CCS 2020, GapSVT)
# compares with the real t + ρ, as here.

_GAP_SCALES = {"threshold": THRESHOLD, "rho_scale": 2 / EPSILON, "nu_scale": 4 / EPSILON}
_GAP_PAIR = ROTH_PAIR
_GAP_POINT = ROTH_POINT
_GAP_EPSILON = 0.25


def bad_gap():
    return value_svt(
        "svt-gap-noisy-answer",
        EPSILON,
        rho_scale=2 / EPSILON,
        nu_scale=4 / EPSILON,
        queries=QUERIES,
    )


def _bad_gap_exact():
    return density_ratio(_GAP_PAIR, _GAP_POINT, _GAP_SCALES)


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


ENTRIES = (
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
        audit_options=SETTING,
    ),
)
