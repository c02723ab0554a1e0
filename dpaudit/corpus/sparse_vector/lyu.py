"""Lyu–Su–Li's variants at DP-Sniper's setting: Lee & Clifton, Chen, Stoddard, Roth.

Each comes with its exact loss on a witness pair and, as its twin, Lyu–Su–Li's Alg. 1 (or
NumericalSVT for Roth's value-releasing variant).
"""

from __future__ import annotations

import mpmath

from ..entry import CorpusEntry, TrueGuarantee
from ..exact import laplace_cdf, log_ratio, working_precision
from .base import EPSILON, QUERIES, SETTING, THRESHOLD, cutoff_svt, value_svt
from .laws import cutoff_epsilon, density_ratio, pattern_probability

# ---------------------------------------------------------------------------
# Lee & Clifton 2014 (Lyu–Su–Li Alg. 4): ε/4 on the threshold, 3ε/4 on the queries,
# the query noise not scaled with c. DP-Sniper SparseVectorTechnique4, StatDP iSVT3.

_LC_SCALES = {"threshold": THRESHOLD, "rho_scale": 4 / EPSILON, "nu_scale": 4 / (3 * EPSILON)}
#: Nine queries at 0 and the last at 1, against every query one higher but the last one lower:
#: the first "above" at the last query after nine "below" answers (exact ε below).
LC_PAIR = ((0,) * 9 + (1,), (1,) * 9 + (0,))
_LC_EPSILON = 0.1747864482


def lee_clifton():
    return cutoff_svt(
        "svt-lee-clifton", rho_scale=4 / EPSILON, nu_scale=4 / (3 * EPSILON), cutoff=1
    )


def lyu_alg1():
    """Lyu–Su–Li Alg. 1 (ε-DP): ρ ~ Lap(1/ε₁), ν ~ Lap(2c/ε₂), ε₁ = ε₂ = ε/2; DP-Sniper's t = 0.5."""
    return cutoff_svt(
        "svt-lyu-alg1", rho_scale=2 / EPSILON, nu_scale=4 / EPSILON, cutoff=1, threshold=0.5
    )


# ---------------------------------------------------------------------------
# Chen et al. 2015 (Lyu–Su–Li Alg. 6): no cutoff, ν ~ Lap(1/ε₂). DP-Sniper SVT6, StatDP iSVT2.

_CHEN_SCALES = {"threshold": THRESHOLD, "rho_scale": 2 / EPSILON, "nu_scale": 2 / EPSILON}
_CHEN_PAIR = ((1,) * 5 + (0,) * 5, (0,) * 5 + (1,) * 5)
_CHEN_OUTCOME = (0, 1, 2, 3, 4)  # "above" exactly on the first five
_CHEN_EPSILON = 0.4144770346


def chen():
    return cutoff_svt("svt-chen", rho_scale=2 / EPSILON, nu_scale=2 / EPSILON, cutoff=None)


def _chen_exact():
    p = pattern_probability(_CHEN_PAIR[0], _CHEN_OUTCOME, **_CHEN_SCALES)
    q = pattern_probability(_CHEN_PAIR[1], _CHEN_OUTCOME, **_CHEN_SCALES)
    return log_ratio(p, q), 0.0


# ---------------------------------------------------------------------------
# Stoddard et al. 2014 (Lyu–Su–Li Alg. 5): no noise on the queries. DP-Sniper SVT5, StatDP iSVT1.

_STODDARD_PAIR = ((1, 0), (0, 1))


def stoddard():
    return cutoff_svt("svt-stoddard", rho_scale=2 / EPSILON, nu_scale=0.0, cutoff=None)


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
ROTH_PAIR = ((0,) * 10, (1,) * 10)
ROTH_POINT = (9, -20.0)  # first "above" at the last query, released answer −20
_ROTH_EPSILON = 0.5


def roth():
    return value_svt(
        "svt-roth", EPSILON, rho_scale=2 / EPSILON, nu_scale=1 / (EPSILON / 2), queries=QUERIES
    )


def _roth_exact():
    return density_ratio(ROTH_PAIR, ROTH_POINT, _ROTH_SCALES)


def numerical_svt():
    """NumericalSVT (Wang et al., PLDI 2019; DP-Sniper): ρ₁ ~ Lap(3/ε), ν ~ Lap(6c/ε), answer + Lap(3c/ε)."""
    return value_svt(
        "svt-numerical",
        EPSILON,
        rho_scale=3 / EPSILON,
        nu_scale=6 / EPSILON,
        value_scale=3 / EPSILON,
        queries=QUERIES,
    )


_SVT_SOURCE = "Lyu, Su, Li, PVLDB 2017, Fig. 1 Alg. {alg}; DP-Sniper {sniper}; StatDP {statdp}"
_ALG1 = "Lyu, Su, Li, PVLDB 2017, Alg. 1 (ε-DP); DP-Sniper SparseVectorTechnique1 (c = 1, t = 0.5)"


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
            lambda: (cutoff_epsilon(LC_PAIR, **_LC_SCALES), 0.0),
        ),
        pair=LC_PAIR,
        twin=lyu_alg1,
        twin_source=_ALG1,
        audit_options=SETTING,
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
        audit_options=SETTING,
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
        audit_options=SETTING,
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
        pair=ROTH_PAIR,
        twin=numerical_svt,
        twin_source="NumericalSVT, Wang et al., PLDI 2019 (ε-DP); DP-Sniper NumericalSVT (c = 1)",
        audit_options=SETTING,
    ),
)
