"""Noisy histograms whose Laplace scale is ε instead of 1/ε, as the auditing papers test them.

Ding et al. (StatDP, CCS 2018) ``cmla-psu/statdp`` ``statdp/algorithms.py`` ``histogram_eps``
(the first noisy count, claims 0.2 / 0.7 / 1.5 in ``examples/benchmark.py``) and Bichsel
et al. (DP-Sniper, S&P 2021) ``dpsniper/mechanisms/noisy_hist.py`` ``NoisyHist2`` (all five
noisy counts, ε = 0.1). One count moves by at most 1 (StatDP's ONE_DIFFER): a user adds or
removes one record, ``AddRemoveUser(1)``.
"""

from __future__ import annotations

import functools

from mechanisms import AddRemoveUser, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from .entry import CorpusEntry, TrueGuarantee, black_box
from .exact import laplace_pdf, log_ratio, working_precision

__all__ = ["ENTRIES"]

RELATION = AddRemoveUser(1)


def _noisy_counts(counts, size, rng, *, scale, first_only, exact=False):
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
    function = functools.partial(_noisy_counts, scale=scale, first_only=True, exact=exact)
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=0, name=name, values=1)


def _sniper(name, scale, epsilon, d, exact=False):
    function = functools.partial(_noisy_counts, scale=scale, first_only=False, exact=exact)
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=0, name=name, values=d)


def _laplace_shift_loss(scale):
    """Exact ln f(x)/f(x − 1) at x = −5 (both below the counts), where it is 1/scale."""
    with working_precision():
        return log_ratio(laplace_pdf(-5, scale), laplace_pdf(-6, scale)), 0.0


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
            lambda: _laplace_shift_loss(STATDP_EPSILON),
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
        build=lambda: _sniper(
            "histogram-scale-eps-dpsniper", SNIPER_EPSILON, SNIPER_EPSILON, SNIPER_ITEMS
        ),
        true=TrueGuarantee(
            1 / SNIPER_EPSILON,
            0.0,
            "exact: closed form 1/ε (Laplace(ε) density ratio of a shift by 1); mpmath",
            lambda: _laplace_shift_loss(SNIPER_EPSILON),
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: _sniper(
            "histogram-dpsniper", 1 / SNIPER_EPSILON, SNIPER_EPSILON, SNIPER_ITEMS, exact=True
        ),
        twin_source="Ding et al., CCS 2018, Alg. 9; DP-Sniper NoisyHist1 (Laplace(1/ε)), with "
        "integer (discrete Laplace) noise so that it is DP on doubles",
    ),
)
