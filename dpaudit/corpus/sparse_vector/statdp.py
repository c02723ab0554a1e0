"""StatDP's iSVT1-4 at StatDP's own setting (claims 0.7, 5 queries) and its one-number releases."""

from __future__ import annotations

import functools

import numpy as np

from mechanisms import validate_counts

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import log_ratio
from .base import RELATION, THRESHOLD, value_svt
from .laws import (
    density_ratio,
    first_above_law,
    hockey_stick,
    noiseless_summary_law,
    pattern_probability,
)

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


def statdp_isvt3_batch(counts, size, rng, *, rho_scale, nu_scale, threshold, queries):
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
        statdp_isvt3_batch,
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
    return value_svt(
        "svt-roth-statdp",
        STATDP_EPSILON,
        rho_scale=2 / STATDP_EPSILON,
        nu_scale=2 / STATDP_EPSILON,
        queries=STATDP_QUERIES,
    )


def _statdp_isvt4_exact():
    return density_ratio(_STATDP_ROTH_PAIR, _STATDP_ROTH_POINT, _STATDP_ROTH_SCALES)


_STATDP_LC_EPSILON = 1.149300004


# StatDP's iSVT1 (Stoddard et al.) and iSVT2 (Chen et al.) at StatDP's setting: no cutoff,
# every query answered; released as StatDP's one number, the Hamming distance of the d
# answers to "the first ⌊d/2⌋ above, the rest below".


def statdp_all_answers_batch(counts, size, rng, *, rho_scale, nu_scale, threshold, queries):
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
        statdp_all_answers_batch,
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


ENTRIES = (
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
)
