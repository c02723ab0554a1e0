"""CheckDP's noisy sums: BadPartialSum at half the scale, BadSmartSum with noiseless block sums.

Wang et al. (CheckDP, CCS 2020) ``cmla-psu/checkdp`` ``examples/badpartialsum.c``: the sum of
the queries released with Laplace noise of scale 1/(2ε) where one query moving by 1
(``ONE_DIFFER``) needs 1/ε (``examples/partialsum.c``). CheckDP checks ε symbolically; the
setting here is StatDP's (its authors' earlier tool, ``examples/benchmark.py``): claim 0.7 on
5 queries.

CheckDP ``examples/badsmartsum.c`` (BadSmartSum; Chan, Shi, Song, "Private and continual release
of statistics", ACM TISSEC 2011, the two-level SmartSum): running sums released at every
query, with a block sum at every M-th query released without noise (``eta_1 = 0``); the
correct ``examples/smartsum.c`` draws Lap(1/ε) there too and is 2ε-DP (``CHECK: 2 * epsilon``)
when one query moves by 1.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np

from mechanisms import validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import log_ratio, working_precision
from .counts import RELATION, laplace_shift_loss


def partial_sum(counts, size, rng, *, scale, exact=False):
    """The sum of the counts plus Laplace noise of ``scale`` (doubles, or discrete Laplace)."""
    q = validate_counts(counts).astype(float)
    if exact:
        noise = discrete_laplace(discrete_laplace_ratio(1.0 / scale), size, rng)
    else:
        noise = rng.laplace(scale=scale, size=size)
    return q.sum() + noise


def _checkdp_sum(name, scale, exact=False):
    function = functools.partial(partial_sum, scale=scale, exact=exact)
    return black_box(function, claim=(PARTIAL_EPSILON, 0.0, RELATION), width=0, name=name, values=1)


PARTIAL_EPSILON, PARTIAL_QUERIES = 0.7, 5


def _smart_sum(counts, size, rng, *, scale, block, noisy_block, exact=False):
    """CheckDP's SmartSum on T = all queries: the running sum within a block, ``next + q_i + η``,
    and at every ``block``-th query the block's exact sum ``sum + q_i`` plus noise only if
    ``noisy_block`` (doubles as shipped, or discrete Laplace noise when ``exact``)."""
    q = validate_counts(counts).astype(float)

    def noise():
        if exact:
            return discrete_laplace(discrete_laplace_ratio(1.0 / scale), size, rng).astype(float)
        return rng.laplace(scale=scale, size=size)

    out = np.empty((size, q.size))
    running, block_sum = np.zeros(size), 0.0
    for i, qi in enumerate(q):
        if (i + 1) % block == 0:
            running = block_sum + qi + (noise() if noisy_block else 0.0)
            block_sum = 0.0
        else:
            running = running + qi + noise()
            block_sum += qi
        out[:, i] = running
    return out


#: CheckDP checks BadSmartSum at 2ε (``CHECK: 2 * epsilon``); StatDP's claim 0.7 on 5 queries,
#: so ε = 0.35; blocks of M = 2, the smallest CheckDP's precondition (1 < M < size) allows.
SMART_EPSILON, SMART_QUERIES, SMART_BLOCK = 0.35, 5, 2


def _checkdp_smart_sum(name, *, noisy_block, exact=False):
    function = functools.partial(
        _smart_sum, scale=1 / SMART_EPSILON, block=SMART_BLOCK, noisy_block=noisy_block, exact=exact
    )
    return black_box(
        function,
        claim=(2 * SMART_EPSILON, 0.0, RELATION),
        width=0,
        name=name,
        values=SMART_QUERIES,
    )


def _smart_sum_exact():
    """The second release is q₀ + q₁ with no noise: 1 on the pair's first histogram with
    probability 1, never on the second; P − e^ε Q = 1 at every ε."""
    (a, b) = _SMART_PAIR
    with working_precision():
        p = mpmath.mpf(1 if a[0] + a[1] == 1 else 0)
        q = mpmath.mpf(1 if b[0] + b[1] == 1 else 0)
        return log_ratio(p, q), float(p - mpmath.exp(2 * SMART_EPSILON) * q)


_SMART_PAIR = ((1,) + (0,) * (SMART_QUERIES - 1), (0,) * SMART_QUERIES)


ENTRIES = (
    CorpusEntry(
        name="partial-sum-half-scale",
        family="histogram",
        bug="the sum of the queries released with Laplace(1/(2ε)) noise: twice the ε claimed",
        source="Wang et al., CCS 2020 (CheckDP), cmla-psu/checkdp examples/badpartialsum.c "
        "(BadPartialSum: eta = Lap(1 / (2 * epsilon))), at StatDP's claim 0.7 on 5 queries",
        build=lambda: _checkdp_sum("partial-sum-half-scale", 1 / (2 * PARTIAL_EPSILON)),
        true=TrueGuarantee(
            2 * PARTIAL_EPSILON,
            0.0,
            "exact: closed form 2ε (Laplace(1/(2ε)) density ratio of a shift by 1); mpmath",
            lambda: laplace_shift_loss(1 / (2 * PARTIAL_EPSILON)),
        ),
        pair=((1,) + (0,) * (PARTIAL_QUERIES - 1), (0,) * PARTIAL_QUERIES),
        twin=lambda: _checkdp_sum("partial-sum", 1 / PARTIAL_EPSILON, exact=True),
        twin_source="cmla-psu/checkdp examples/partialsum.c (Lap(1/ε)), with integer "
        "(discrete Laplace) noise so that it is DP on doubles",
    ),
    CorpusEntry(
        name="smart-sum-noiseless-block",
        family="histogram",
        bug="running sums with every M-th release the block's exact sum (no noise): no finite ε",
        source="Wang et al., CCS 2020 (CheckDP), cmla-psu/checkdp examples/badsmartsum.c "
        "(BadSmartSum: eta_1 = 0), claim 2ε (its CHECK) = 0.7 on 5 queries, M = 2",
        build=lambda: _checkdp_smart_sum("smart-sum-noiseless-block", noisy_block=False),
        true=TrueGuarantee(
            float("inf"),
            1.0,
            "exact: the second release is q₀ + q₁ exactly, 1 on the first histogram of the "
            "pair and 0 on the second (P = 1, Q = 0): no finite ε, δ = 1 at the claimed ε",
            _smart_sum_exact,
        ),
        pair=_SMART_PAIR,
        twin=lambda: _checkdp_smart_sum("smart-sum", noisy_block=True, exact=True),
        twin_source="cmla-psu/checkdp examples/smartsum.c (eta_1 = Lap(1/ε), 2ε-DP), with "
        "integer (discrete Laplace) noise so that it is DP on doubles",
    ),
)
