"""Noisy counts with the wrong Laplace scale or sensitivity: StatDP's, DP-Sniper's, SmartNoise's.

Ding et al. (StatDP, CCS 2018) ``cmla-psu/statdp`` ``statdp/algorithms.py`` ``histogram_eps``
(the first noisy count, claims 0.2 / 0.7 / 1.5 in ``examples/benchmark.py``) and Bichsel
et al. (DP-Sniper, S&P 2021) ``dpsniper/mechanisms/noisy_hist.py`` ``NoisyHist2`` (all five
noisy counts, ε = 0.1). One count moves by at most 1 (StatDP's ONE_DIFFER): a user adds or
removes one record, ``AddRemoveUser(1)``.

opendp/smartnoise-core issue 360: a two-category histogram with a known number of records
is released with the noise of sensitivity 1, but neighbours substitute one record
(``Substitute(1)``: one count down, one up), so its L1 sensitivity is 2.
"""

from __future__ import annotations

import functools

import mpmath

from mechanisms import AddRemoveUser, Substitute, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import laplace_pdf, log_ratio, working_precision

RELATION = AddRemoveUser(1)


def noisy_counts(counts, size, rng, *, scale, first_only, exact=False):
    """Counts plus Laplace noise of ``scale``: as the papers ship it (numpy doubles), or
    ``exact``: the integer Laplace mechanism (discrete Laplace, ratio e^{-1/scale}), which is
    DP on doubles too (a double Laplace sample is porous, Mironov 2012)."""
    q = validate_counts(counts).astype(float)
    if exact:
        noise = discrete_laplace(discrete_laplace_ratio(1.0 / scale), (size, q.size), rng)
    else:
        noise = rng.laplace(scale=scale, size=(size, q.size))
    noisy = q + noise
    return noisy[:, 0] if first_only else noisy


def _statdp(name, scale, epsilon, exact=False):
    function = functools.partial(noisy_counts, scale=scale, first_only=True, exact=exact)
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=0, name=name, values=1)


def sniper(name, scale, epsilon, d, exact=False):
    function = functools.partial(noisy_counts, scale=scale, first_only=False, exact=exact)
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=0, name=name, values=d)


def laplace_shift_loss(scale):
    """Exact ln f(x)/f(x − 1) at x = −5 (both below the counts), where it is 1/scale."""
    with working_precision():
        return log_ratio(laplace_pdf(-5, scale), laplace_pdf(-6, scale)), 0.0


def _binary(name, epsilon, sensitivity):
    """Two noisy counts with discrete Laplace noise for L1 sensitivity ``sensitivity``."""
    function = functools.partial(
        noisy_counts, scale=sensitivity / epsilon, first_only=False, exact=True
    )
    return black_box(function, claim=(epsilon, 0.0, Substitute(1)), width=0, name=name, values=2)


def discrete_laplace_pmf(z, numerator):
    """P(Z = z) = (1 − r)/(1 + r) · r^{|z|}, r = numerator / 2^53 (the sampler's own ratio)."""
    with working_precision():
        r = mpmath.mpf(numerator) / mpmath.mpf(2) ** 53
        return (1 - r) / (1 + r) * r ** abs(int(z))


#: Substituting the record of category 0 by one of category 1: both counts move by 1.
_BINARY_PAIR = ((1, 0), (0, 1))


def _binary_exact(epsilon):
    """ln P(out = (1, 0) | (1, 0)) / P(out = (1, 0) | (0, 1)): each count's pmf moves by 1/r."""
    numerator = discrete_laplace_ratio(epsilon)
    (a, b), (c, d) = _BINARY_PAIR
    p = discrete_laplace_pmf(1 - a, numerator) * discrete_laplace_pmf(0 - b, numerator)
    q = discrete_laplace_pmf(1 - c, numerator) * discrete_laplace_pmf(0 - d, numerator)
    return log_ratio(p, q), 0.0


#: SmartNoise's default budget per query (PrivateReader(epsilon=1.0)).
BINARY_EPSILON = 1.0

STATDP_EPSILON = 0.7
SNIPER_EPSILON, SNIPER_ITEMS = 0.1, 5


ENTRIES = (
    CorpusEntry(
        name="histogram-scale-eps-statdp",
        family="histogram",
        bug="noisy count with Laplace(ε) noise instead of Laplace(1/ε)",
        source="Ding et al., CCS 2018 (StatDP), statdp/algorithms.py histogram_eps (claim 0.7)",
        build=lambda: _statdp("histogram-scale-eps-statdp", STATDP_EPSILON, STATDP_EPSILON),
        true=TrueGuarantee(
            1 / STATDP_EPSILON,
            0.0,
            "exact: closed form 1/ε (Laplace(ε) density ratio of a shift by 1); mpmath",
            lambda: laplace_shift_loss(STATDP_EPSILON),
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: _statdp("histogram-statdp", 1 / STATDP_EPSILON, STATDP_EPSILON, exact=True),
        twin_source="StatDP statdp/algorithms.py histogram (Laplace(1/ε)), with integer "
        "(discrete Laplace) noise so that it is DP on doubles",
    ),
    CorpusEntry(
        name="histogram-scale-eps-dpsniper",
        family="histogram",
        bug="five noisy counts with Laplace(ε) noise instead of Laplace(1/ε)",
        source="Ding et al., CCS 2018, Alg. 10; DP-Sniper (S&P 2021) NoisyHist2 (ε = 0.1)",
        build=lambda: sniper(
            "histogram-scale-eps-dpsniper", SNIPER_EPSILON, SNIPER_EPSILON, SNIPER_ITEMS
        ),
        true=TrueGuarantee(
            1 / SNIPER_EPSILON,
            0.0,
            "exact: closed form 1/ε (Laplace(ε) density ratio of a shift by 1); mpmath",
            lambda: laplace_shift_loss(SNIPER_EPSILON),
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: sniper(
            "histogram-dpsniper", 1 / SNIPER_EPSILON, SNIPER_EPSILON, SNIPER_ITEMS, exact=True
        ),
        twin_source="Ding et al., CCS 2018, Alg. 9; DP-Sniper NoisyHist1 (Laplace(1/ε)), with "
        "integer (discrete Laplace) noise so that it is DP on doubles",
    ),
    CorpusEntry(
        name="histogram-binary-substitute",
        family="histogram",
        bug="two-category histogram with known size: noise for L1 sensitivity 1, but "
        "substituting a record moves both counts (sensitivity 2)",
        source="opendp/smartnoise-core issue 360 (underestimated sensitivity on binary "
        "histograms with known N), geometric noise, SmartNoise's default ε = 1",
        build=lambda: _binary("histogram-binary-substitute", BINARY_EPSILON, 1),
        true=TrueGuarantee(
            2 * BINARY_EPSILON,
            0.0,
            "exact: output (1, 0) on the pair (mpmath, discrete Laplace pmf with the "
            "sampler's own ratio r): ln(1/r²) = 2ε to 1e-15; no larger, each count's pmf "
            "moving by at most 1/r",
            lambda: _binary_exact(BINARY_EPSILON),
        ),
        pair=_BINARY_PAIR,
        twin=lambda: _binary("histogram-binary-substitute-fixed", BINARY_EPSILON, 2),
        twin_source="the fix smartnoise-core issue 360 asks for: L1 sensitivity 2 under "
        "substitution (discrete Laplace of scale 2/ε)",
        audit_options={"domain_size": 2},
    ),
)
