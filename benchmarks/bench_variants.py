"""The default audit on parameter variants of the corpus's bugs: does flagging generalize?

Every entry of :mod:`dpaudit.corpus` is flagged at the parameters of its source. A
held-out set of the same kinds of bugs, rebuilt by others, uses other parameters: another
ε, number of queries or candidates, threshold, histogram size, integer instead of
floating-point noise, a rounded release. Each variant here changes one or two such
parameters of one corpus entry (through the corpus's own samplers where they take them,
else a few lines here) and cites that entry's source. Each states its claim and a true
guarantee known exactly (closed form or mpmath, on a stated pair), or — for floating-point
noise — ε = ∞ shown by a witness output and δ estimated; every variant is buggy by at
least 1.5× on ε or δ (``--list`` prints the numbers without auditing).

For every variant and seed, ``dpaudit.audit(variant.build(), seed=s, **variant.options)``
with every other option at its default (``--budget`` replaces the default budget).
Seconds are wall-clock on a shared machine (all from this run).

Usage: python benchmarks/bench_variants.py [--seeds 0] [--only NAME ...] [--budget 5e7]
                                           [--workers N] [--list] [--with-pair] [--witnesses]

``--with-pair`` names the variant's witness pair (``pairs=``: it is confirmed beside the
pairs screening keeps); ``--witnesses`` prints every confirmed pair and event with its
frequencies.
"""

from __future__ import annotations

import argparse
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import mpmath
import numpy as np

import dpaudit
from dpaudit.corpus import entry
from dpaudit.corpus import float_noise as fn
from dpaudit.corpus import histogram as hg
from dpaudit.corpus import noisy_max as nm
from dpaudit.corpus import partition_selection as ps
from dpaudit.corpus import sparse_vector as sv
from dpaudit.corpus.entry import black_box
from dpaudit.corpus.exact import laplace_cdf, log_ratio, working_precision
from mechanisms import AddRemoveUser, BoundedChange, Substitute, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

_SHORT = {"violation": "VIOL", "passed": "PASS", "inconclusive": "INC"}


@dataclass(frozen=True)
class Variant:
    """A corpus bug rebuilt with other parameters.

    Parameters
    ----------
    name : short id (``--only``).
    of : the corpus entry it varies (its source is the variant's source).
    change : what differs from that entry.
    build : the black box, with the claim its authors would state at these parameters.
    true : ``() -> (ε, δ)``: the true guarantee (lower bounds where ``basis`` says so).
    basis : how ``true`` is known.
    options : options of the default audit that describe the setting (number of queries).
    pair : a neighbouring pair that witnesses ``true`` (``--with-pair`` adds it to the audit).
    """

    name: str
    of: str
    change: str
    build: Callable
    true: Callable[[], tuple[float, float]]
    basis: str
    options: dict = field(default_factory=dict)
    pair: tuple | None = None

    @property
    def source(self) -> str:
        return entry(self.of).source


# ---------------------------------------------------------------------------
# Sparse vector (Lyu, Su, Li, PVLDB 2017; the corpus's sv module).

_BC1 = BoundedChange(1)


def _svt(name, epsilon, *, rho_scale, nu_scale, cutoff, queries, threshold=sv.THRESHOLD):
    function = functools.partial(
        sv.svt_batch,
        rho_scale=rho_scale,
        nu_scale=nu_scale,
        threshold=threshold,
        cutoff=cutoff,
        queries=queries,
    )
    width = queries if cutoff is None else min(cutoff, queries)
    return black_box(function, claim=(epsilon, 0.0, _BC1), width=width, name=name)


def _lc_scales(epsilon, threshold=sv.THRESHOLD):
    return {"threshold": threshold, "rho_scale": 4 / epsilon, "nu_scale": 4 / (3 * epsilon)}


def _lc_pair(queries, moved=1):
    """``queries − moved`` zeros then ``moved`` ones, against the same with 0 ↔ 1."""
    low = (0,) * (queries - moved) + (1,) * moved
    return low, tuple(1 - c for c in low)


def _pattern_loss(pair, above, scales):
    p, q = (sv.pattern_probability(c, above, **scales) for c in pair)
    return log_ratio(p, q), 0.0


def _lc_exact(epsilon, queries, threshold=sv.THRESHOLD):
    return sv.cutoff_epsilon(_lc_pair(queries), **_lc_scales(epsilon, threshold)), 0.0


def _lc_c2_exact(epsilon):
    """Loss of "above exactly at the last two of 10" (no third "above": no stop) on (0⁸1², 1⁸0²)."""
    return _pattern_loss(_lc_pair(10, 2), (8, 9), _lc_scales(epsilon))


def _chen_scales(epsilon):
    return {"threshold": sv.THRESHOLD, "rho_scale": 2 / epsilon, "nu_scale": 2 / epsilon}


def _chen_pair(queries):
    half = queries // 2
    return (1,) * half + (0,) * (queries - half), (0,) * half + (1,) * (queries - half)


def _chen_exact(epsilon, queries):
    return _pattern_loss(_chen_pair(queries), tuple(range(queries // 2)), _chen_scales(epsilon))


def _stoddard_exact(epsilon, threshold):
    """No query noise: "above at query 0 only" has P = P(t + ρ ∈ (0, 1]) on (1, 0, …) and
    probability 0 on (0, 1, 0, …)."""
    with working_precision():
        b = 2 / mpmath.mpf(epsilon)
        p = laplace_cdf(1 - threshold, b) - laplace_cdf(-threshold, b)
    return math.inf, float(p)


def _roth_exact(epsilon, queries):
    scales = {"threshold": sv.THRESHOLD, "rho_scale": 2 / epsilon, "nu_scale": 2 / epsilon}
    pair = ((0,) * queries, (1,) * queries)
    return sv.density_ratio(pair, (queries - 1, -20.0 / epsilon), scales)


def _answer_int(name, epsilon, queries, *, nu_scale):
    function = functools.partial(
        sv.integer_first_above_batch,
        rho_scale=2 / epsilon,
        nu_scale=nu_scale,
        threshold=sv.THRESHOLD,
        queries=queries,
        release="answer",
    )
    return black_box(function, claim=(epsilon, 0.0, _BC1), width=1, name=name, values=1)


def _answer_int_exact(nu_scale, queries):
    """Closed form on (0, …, 0) against (1, …, 1) at (first "above" = last query, answer v <= 0).

    With r the sampler's ratio for ν, P(Z <= m) = r^{−m}/(1 + r) for m <= 0: every earlier
    "below" factor P(ν_i <= t + ρ − q_i − 1) and the answer's pmf r^{|v − q|} gain a factor
    1/r when q drops by 1 (ρ <= v − t keeps every argument <= 0), so the ratio is r^{−d}.
    """
    numerator = discrete_laplace_ratio(1 / nu_scale)
    with working_precision():
        r = mpmath.mpf(numerator) / mpmath.mpf(2) ** 53
        return float(-queries * mpmath.log(r)), 0.0


def _statdp_summary(name, epsilon, batch, *, rho_scale, nu_scale):
    """A StatDP iSVT at claim ``epsilon`` on 5 queries, released as StatDP's one number."""
    function = functools.partial(
        batch, rho_scale=rho_scale, nu_scale=nu_scale, threshold=sv.THRESHOLD, queries=5
    )
    return black_box(function, claim=(epsilon, 0.0, _BC1), width=0, name=name, values=1)


_STATDP_LC_PAIR = _lc_pair(5)
_STATDP_CHEN_PAIR = ((0, 0, 8, 8, 8), (1, 1, 7, 7, 7))


def _statdp_lc_exact(epsilon):
    """Largest loss of the Hamming summary (exact law, mpmath) on (0⁴1, 1⁴0)."""
    scales = _lc_scales(epsilon)
    p, q = (sv.statdp_summary_law(c, **scales) for c in _STATDP_LC_PAIR)
    return max(log_ratio(p[k], q[k]) for k in p), 0.0


def _statdp_chen_exact(epsilon):
    """Loss of the summary 0 (answers ⊤ ⊤ ⊥ ⊥ ⊥; exact law, mpmath) on (0, 0, 8, 8, 8) and
    (1, 1, 7, 7, 7)."""
    p, q = (sv.noisy_summary_law(c, **_chen_scales(epsilon)) for c in _STATDP_CHEN_PAIR)
    return log_ratio(p[0], q[0]), 0.0


# ---------------------------------------------------------------------------
# Noisy max releasing the maximum (StatDP Algs. 7-8; DP-Sniper ReportNoisyMax3-4; CheckDP).


def _max_value(name, epsilon, *, noise, release):
    function = functools.partial(
        nm._noisy_max_batch, noise=noise, scale=2 / epsilon, release=release
    )
    return black_box(function, claim=(epsilon, 0.0, _BC1), width=0, name=name, values=1)


def _max_rounded_batch(counts, size, rng, *, scale):
    q = validate_counts(counts).astype(float)
    return np.round((q + rng.laplace(scale=scale, size=(size, q.size))).max(axis=1))


def _max_geometric_batch(counts, size, rng, *, scale):
    q = validate_counts(counts)
    noise = discrete_laplace(discrete_laplace_ratio(1.0 / scale), (size, q.size), rng)
    return (q + noise).max(axis=1).astype(float)


def _max_batch(name, epsilon, batch):
    function = functools.partial(batch, scale=2 / epsilon)
    return black_box(function, claim=(epsilon, 0.0, _BC1), width=0, name=name, values=1)


def _all(value, d):
    return (value,) * d


def _laplace_max_exact(epsilon, d):
    """Density ratio of the maximum at −3 (below every count) on 0^d against 1^d: dε/2."""
    p, q = (nm.laplace_max_density(_all(c, d), -3, 2 / epsilon) for c in (0, 1))
    return log_ratio(p, q), 0.0


def _exponential_max_exact(epsilon, d):
    """max < 1 has P = (1 − e^{−ε/2})^d on 0^d, Q = 0 on 1^d (exponential noise is >= 0)."""
    with working_precision():
        p = (1 - mpmath.exp(-mpmath.mpf(epsilon) / 2)) ** d
    return math.inf, float(p)


def _rounded_max_exact(epsilon, d):
    """P(round(max) = −3) = F(−2.5) − F(−3.5) with F the CDF of the maximum (mpmath)."""
    b = 2 / epsilon
    p, q = (
        nm.laplace_max_cdf(_all(c, d), -2.5, b) - nm.laplace_max_cdf(_all(c, d), -3.5, b)
        for c in (0, 1)
    )
    return log_ratio(p, q), 0.0


def _geometric_max_exact(epsilon, d):
    """P(max = −3) on 0^d against 1^d: every factor P(Z <= m) = r^{−m}/(1 + r), m <= 0, moves
    by r, so the ratio is r^{−d} (r the sampler's own ratio, ≈ e^{−ε/2})."""
    numerator = discrete_laplace_ratio(epsilon / 2)
    with working_precision():
        r = mpmath.mpf(numerator) / mpmath.mpf(2) ** 53

        def cdf(m):
            return r ** (-m) / (1 + r) if m <= 0 else 1 - r ** (m + 1) / (1 + r)

        def pmf_max(c):
            return cdf(-3 - c) ** d - cdf(-4 - c) ** d

        return log_ratio(pmf_max(0), pmf_max(1)), 0.0


# ---------------------------------------------------------------------------
# Histograms (StatDP histogram_eps, DP-Sniper NoisyHist2, smartnoise-core 360, CheckDP).


def _substitute_hist(name, epsilon, d):
    function = functools.partial(hg.noisy_counts, scale=1 / epsilon, first_only=False, exact=True)
    return black_box(function, claim=(epsilon, 0.0, Substitute(1)), width=0, name=name, values=d)


def _substitute_exact(epsilon, d):
    """Output (1, 0, …) on (1, 0, …) against (0, 1, 0, …): two pmfs move by 1/r each."""
    numerator = discrete_laplace_ratio(epsilon)
    pmf = functools.partial(hg.discrete_laplace_pmf, numerator=numerator)
    p = pmf(0) * pmf(0) * pmf(0) ** (d - 2)
    q = pmf(1) * pmf(-1) * pmf(0) ** (d - 2)
    return log_ratio(p, q), 0.0


def _sum_int_exact(epsilon):
    numerator = discrete_laplace_ratio(2 * epsilon)
    p, q = (hg.discrete_laplace_pmf(z, numerator) for z in (0, 1))
    return log_ratio(p, q), 0.0


# ---------------------------------------------------------------------------
# Partition selection (opendp 2922, google/differential-privacy PR 101, smartnoise-sdk 204).

_AR1 = AddRemoveUser(1)


def _opendp_laplace(name, scale, threshold):
    reported, _ = ps.opendp_deltas(scale, threshold)
    function = functools.partial(ps._opendp_threshold, scale=scale, threshold=threshold)
    return black_box(function, claim=(1 / scale, reported, _AR1), width=5, name=name)


def _opendp_gaussian(name, sigma, threshold, epsilon):
    rho_delta, reported, _ = ps.opendp_gaussian_deltas(sigma, threshold, epsilon)
    function = functools.partial(ps._gaussian_threshold, sigma=sigma, threshold=threshold)
    return black_box(function, claim=(epsilon, rho_delta + reported, _AR1), width=5, name=name)


def _go(name, epsilon, delta):
    function = functools.partial(ps._go_count, epsilon=epsilon, delta=delta, rounding=math.floor)
    return black_box(function, claim=(epsilon, delta, _AR1), width=5, name=name)


def _smartnoise(name, epsilon, delta):
    function = functools.partial(
        ps._smartnoise_count,
        sd=ps.smartnoise_sd(epsilon, delta),
        tau=ps.smartnoise_tau(epsilon, delta),
    )
    return black_box(function, claim=(epsilon, delta, _AR1), width=5, name=name)


# ---------------------------------------------------------------------------
# Floating-point noise (diffprivlib issue 19; Mironov 2012; Jin et al. 2022).

#: Samples of count 0 for the δ estimates of the floating-point variants (seed below).
_FLOAT_ESTIMATE_SAMPLES, _FLOAT_ESTIMATE_SEED = 200_000, 12345


def _textbook(name, epsilon):
    function = functools.partial(fn._textbook_batch, scale=1 / epsilon)
    return black_box(function, claim=(epsilon, 0.0, _AR1), width=0, name=name, values=1)


def _textbook_true(epsilon):
    """ε = ∞ by a witness (an output of count 0 unreachable from count 1, by inverting the
    sampler's own arithmetic); δ estimated: the share of count-0 outputs unreachable from 1."""
    scale = 1 / epsilon
    u = np.floor(0.6 * 2.0**53) * 2.0**-53 - 0.5
    y = fn.textbook_laplace(0.0, u, scale)
    witness = bool(fn.reachable([y], 0.0, scale)[0]) and not bool(fn.reachable([y], 1.0, scale)[0])
    rng = np.random.default_rng(_FLOAT_ESTIMATE_SEED)
    out = fn._textbook_batch((0,), _FLOAT_ESTIMATE_SAMPLES // 10, rng, scale=scale)
    share = float(np.mean(~fn.reachable(out, 1.0, scale)))
    return (math.inf if witness else 0.0), share


def _box_muller(name, epsilon, delta):
    function = functools.partial(fn._box_muller_batch, scale=fn.gaussian_sigma(epsilon, delta))
    return black_box(function, claim=(epsilon, delta, _AR1), width=0, name=name, values=1)


def _box_muller_true(epsilon, delta):
    """ε = ∞: below ½ in magnitude fl(1 + w) is a multiple of 2^-53, any output of count 0
    there that is not is unreachable from count 1; δ estimated as the share of such outputs."""
    rng = np.random.default_rng(_FLOAT_ESTIMATE_SEED)
    scale = fn.gaussian_sigma(epsilon, delta)
    out = fn._box_muller_batch((0,), _FLOAT_ESTIMATE_SAMPLES, rng, scale=scale)
    share = float(np.mean(fn.fine_near_zero(out)))
    return (math.inf if share > 0 else 0.0), share


# ---------------------------------------------------------------------------

#: One count of 1 against none: where a noisy count's scale, a threshold's δ or a sampler's
#: doubles show.
_ONE_COUNT_10 = ((1,) + (0,) * 9, (0,) * 10)
_ONE_KEY = ((1, 0, 0, 0, 0), (0, 0, 0, 0, 0))

VARIANTS: tuple[Variant, ...] = (
    Variant(
        "lc-eps0.5",
        "svt-lee-clifton",
        "ε = 0.5 instead of 0.1",
        lambda: _svt("lc-eps0.5", 0.5, rho_scale=8.0, nu_scale=8 / 3, cutoff=1, queries=10),
        lambda: _lc_exact(0.5, 10),
        "exact: ε of the first-'above' law (d + 1 outcomes, mpmath) on (0⁹1, 1⁹0)",
        options={"domain_size": 10},
        pair=_lc_pair(10),
    ),
    Variant(
        "lc-eps1-8q-t2",
        "svt-lee-clifton",
        "ε = 1, 8 queries, threshold 2",
        lambda: _svt(
            "lc-eps1-8q-t2", 1.0, rho_scale=4.0, nu_scale=4 / 3, cutoff=1, queries=8, threshold=2.0
        ),
        lambda: _lc_exact(1.0, 8, threshold=2.0),
        "exact: ε of the first-'above' law (mpmath) on (0⁷1, 1⁷0)",
        options={"domain_size": 8},
        pair=_lc_pair(8),
    ),
    Variant(
        "lc-c2",
        "svt-lee-clifton",
        "cutoff c = 2 (query noise still Lap(4/(3ε)), not scaled with c), ε = 0.1",
        lambda: _svt("lc-c2", 0.1, rho_scale=40.0, nu_scale=40 / 3, cutoff=2, queries=10),
        lambda: _lc_c2_exact(0.1),
        "exact: loss of 'above exactly at queries 9, 10' (mpmath) on (0⁸1², 1⁸0²)",
        options={"domain_size": 10},
        pair=_lc_pair(10, 2),
    ),
    Variant(
        "chen-eps0.5",
        "svt-chen",
        "ε = 0.5 instead of 0.1",
        lambda: _svt("chen-eps0.5", 0.5, rho_scale=4.0, nu_scale=4.0, cutoff=None, queries=10),
        lambda: _chen_exact(0.5, 10),
        "exact: loss of 'above exactly on the first five' (mpmath) on (1⁵0⁵, 0⁵1⁵)",
        options={"domain_size": 10},
        pair=_chen_pair(10),
    ),
    Variant(
        "chen-eps1-6q",
        "svt-chen",
        "ε = 1, 6 queries",
        lambda: _svt("chen-eps1-6q", 1.0, rho_scale=2.0, nu_scale=2.0, cutoff=None, queries=6),
        lambda: _chen_exact(1.0, 6),
        "exact: loss of 'above exactly on the first three' (mpmath) on (1³0³, 0³1³)",
        options={"domain_size": 6},
        pair=_chen_pair(6),
    ),
    Variant(
        "stoddard-eps1-t3",
        "svt-stoddard",
        "ε = 1, threshold 3, 5 queries",
        lambda: _svt(
            "stoddard-eps1-t3",
            1.0,
            rho_scale=2.0,
            nu_scale=0.0,
            cutoff=None,
            queries=5,
            threshold=3.0,
        ),
        lambda: _stoddard_exact(1.0, 3.0),
        "exact: 'above at query 1 only' has P = P(ρ ∈ (−3, −2]) on (1, 0, …), Q = 0 on "
        "(0, 1, 0, …) (closed form)",
        options={"domain_size": 5},
        pair=((1, 0, 0, 0, 0), (0, 1, 0, 0, 0)),
    ),
    Variant(
        "roth-eps1-5q",
        "svt-roth",
        "ε = 1, 5 queries",
        lambda: sv.value_svt("roth-eps1-5q", 1.0, rho_scale=2.0, nu_scale=2.0, queries=5),
        lambda: _roth_exact(1.0, 5),
        "exact: log density ratio at (first above = query 5, answer −20) on (0⁵, 1⁵) "
        "(mpmath), a lower bound (5ε/2 in the tails); doubles: porous, no finite ε",
        options={"domain_size": 5},
        pair=(_all(0, 5), _all(1, 5)),
    ),
    Variant(
        "gap-answer-int-eps0.5",
        "svt-gap-noisy-answer",
        "ε = 0.5, integer (discrete Laplace) noise and threshold: no porous doubles",
        lambda: _answer_int("gap-answer-int-eps0.5", 0.5, 10, nu_scale=8.0),
        lambda: _answer_int_exact(8.0, 10),
        "exact: closed form r^{−d} = e^{dε/4} (d = 10) at (first above = query 10, answer "
        "<= 0) on (0¹⁰, 1¹⁰), a lower bound",
        options={"domain_size": 10},
        pair=(_all(0, 10), _all(1, 10)),
    ),
    Variant(
        "rnm-laplace-value-eps1-4q",
        "rnm-laplace-max-value",
        "ε = 1, 4 candidates",
        lambda: _max_value("rnm-laplace-value-eps1-4q", 1.0, noise="laplace", release="value"),
        lambda: _laplace_max_exact(1.0, 4),
        "exact: density ratio of the maximum at −3 on (0⁴, 1⁴) (mpmath): dε/2; doubles: "
        "porous, no finite ε",
        options={"domain_size": 4},
        pair=(_all(0, 4), _all(1, 4)),
    ),
    Variant(
        "rnm-exponential-value-eps0.5-3q",
        "rnm-exponential-max-value",
        "ε = 0.5, 3 candidates",
        lambda: _max_value(
            "rnm-exponential-value-eps0.5-3q", 0.5, noise="exponential", release="value"
        ),
        lambda: _exponential_max_exact(0.5, 3),
        "exact: max < 1 has P = (1 − e^{−ε/2})³ on 0³ and Q = 0 on 1³ (closed form)",
        options={"domain_size": 3},
        pair=(_all(0, 3), _all(1, 3)),
    ),
    Variant(
        "rnm-laplace-rounded-eps0.5",
        "rnm-laplace-max-int",
        "ε = 0.5, the maximum rounded to the nearest integer (not truncated)",
        lambda: _max_batch("rnm-laplace-rounded-eps0.5", 0.5, _max_rounded_batch),
        lambda: _rounded_max_exact(0.5, 5),
        "exact: P(round(max) = −3) on (0⁵, 1⁵) from the CDF of the maximum (mpmath): dε/2",
        pair=(_all(0, 5), _all(1, 5)),
    ),
    Variant(
        "rnm-geometric-value-eps1",
        "rnm-laplace-max-value",
        "ε = 1, integer (discrete Laplace, scale 2/ε) noise: the maximum is an integer",
        lambda: _max_batch("rnm-geometric-value-eps1", 1.0, _max_geometric_batch),
        lambda: _geometric_max_exact(1.0, 5),
        "exact: P(max = −3) on (0⁵, 1⁵), closed-form discrete Laplace CDF (mpmath): dε/2",
        pair=(_all(0, 5), _all(1, 5)),
    ),
    Variant(
        "hist-scale-eps0.5-10",
        "histogram-scale-eps-dpsniper",
        "ε = 0.5, 10 counts (Laplace(ε) instead of Laplace(1/ε))",
        lambda: hg.sniper("hist-scale-eps0.5-10", 0.5, 0.5, 10),
        lambda: hg.laplace_shift_loss(0.5),
        "exact: closed form 1/ε (Laplace(ε) density ratio of a shift by 1); doubles: porous, "
        "no finite ε",
        options={"domain_size": 10},
        pair=_ONE_COUNT_10,
    ),
    Variant(
        "hist-substitute-3cat-eps0.5",
        "histogram-binary-substitute",
        "ε = 0.5, 3 categories",
        lambda: _substitute_hist("hist-substitute-3cat-eps0.5", 0.5, 3),
        lambda: _substitute_exact(0.5, 3),
        "exact: output (1, 0, 0) on (1, 0, 0) against (0, 1, 0) (discrete Laplace pmf, mpmath): 2ε",
        options={"domain_size": 3},
        pair=((1, 0, 0), (0, 1, 0)),
    ),
    Variant(
        "partial-sum-int-eps1",
        "partial-sum-half-scale",
        "ε = 1, 10 queries, integer (discrete Laplace) noise of scale 1/(2ε)",
        lambda: black_box(
            functools.partial(hg.partial_sum, scale=0.5, exact=True),
            claim=(1.0, 0.0, _AR1),
            width=0,
            name="partial-sum-int-eps1",
            values=1,
        ),
        lambda: _sum_int_exact(1.0),
        "exact: discrete Laplace pmf ratio of a shift by 1 (mpmath): 2ε",
        options={"domain_size": 10},
        pair=_ONE_COUNT_10,
    ),
    Variant(
        "opendp-laplace-eps0.5-t15",
        "opendp-laplace-threshold-delta",
        "scale 2 (ε = 0.5), threshold 15",
        lambda: _opendp_laplace("opendp-laplace-eps0.5-t15", 2.0, 15),
        lambda: (math.inf, ps.opendp_deltas(2.0, 15)[1]),
        "exact: P(Z >= t − 1) by the discrete Laplace series (mpmath), e^{ε}× the claim; Q = 0",
        pair=_ONE_KEY,
    ),
    Variant(
        "opendp-gaussian-s2-t7-eps3",
        "opendp-gaussian-threshold-delta",
        "σ = 2, threshold 7, (ρ, δ) converted at ε = 3",
        lambda: _opendp_gaussian("opendp-gaussian-s2-t7-eps3", 2.0, 7, 3.0),
        lambda: (math.inf, ps.opendp_gaussian_deltas(2.0, 7, 3.0)[2]),
        "exact: P(Z >= t − 1) by the discrete Gaussian series (mpmath); Q = 0",
        pair=_ONE_KEY,
    ),
    Variant(
        "go-threshold-eps1-d1e-4",
        "go-count-threshold-truncated",
        "ε = 1, δ = 1e-4",
        lambda: _go("go-threshold-eps1-d1e-4", 1.0, 1e-4),
        lambda: (math.inf, ps.go_release_delta(1.0, 1e-4, math.floor)),
        "exact: e^{−ε(⌊τ⌋ − 3/2)}/2 (closed form, mpmath); Q = 0",
        pair=_ONE_KEY,
    ),
    Variant(
        "go-threshold-eps0.5-d1e-3",
        "go-count-threshold-truncated",
        "ε = 0.5, δ = 1e-3",
        lambda: _go("go-threshold-eps0.5-d1e-3", 0.5, 1e-3),
        lambda: (math.inf, ps.go_release_delta(0.5, 1e-3, math.floor)),
        "exact: e^{−ε(⌊τ⌋ − 3/2)}/2 (closed form, mpmath); Q = 0",
        pair=_ONE_KEY,
    ),
    Variant(
        "smartnoise-tau-eps2-d1e-6",
        "smartnoise-gaussian-laplace-tau",
        "ε = 2, δ = 1e-6",
        lambda: _smartnoise("smartnoise-tau-eps2-d1e-6", 2.0, 1e-6),
        lambda: (
            math.inf,
            ps.smartnoise_release_delta(2.0, 1e-6, ps.smartnoise_tau(2.0, 1e-6)),
        ),
        "exact: Φ((1 − τ)/σ) (mpmath); Q = 0",
        pair=_ONE_KEY,
    ),
    Variant(
        "float-laplace-eps0.1",
        "float-laplace-textbook",
        "ε = 0.1 (scale 10)",
        lambda: _textbook("float-laplace-eps0.1", 0.1),
        lambda: _textbook_true(0.1),
        "ε exact (witness output); δ estimated on 20,000 count-0 outputs (seed 12345): the "
        "share unreachable from count 1, a lower bound",
        pair=_ONE_KEY,
    ),
    Variant(
        "float-gaussian-eps0.5-d1e-6",
        "float-gaussian-box-muller",
        "ε = 0.5, δ = 1e-6 (σ = 10.5)",
        lambda: _box_muller("float-gaussian-eps0.5-d1e-6", 0.5, 1e-6),
        lambda: _box_muller_true(0.5, 1e-6),
        "ε exact (fine doubles below ½ unreachable from count 1); δ estimated on 200,000 "
        "count-0 outputs (seed 12345): that event's P, a lower bound",
        pair=_ONE_KEY,
    ),
    # Near the edge: small ε, few queries, true/claim between 1.5 and 2.7, no porous doubles.
    Variant(
        "lc-eps0.1-5q",
        "svt-lee-clifton",
        "5 queries (ε = 0.1)",
        lambda: _svt("lc-eps0.1-5q", 0.1, rho_scale=40.0, nu_scale=40 / 3, cutoff=1, queries=5),
        lambda: _lc_exact(0.1, 5),
        "exact: ε of the first-'above' law (mpmath) on (0⁴1, 1⁴0)",
        options={"domain_size": 5},
        pair=_lc_pair(5),
    ),
    Variant(
        "lc-eps2-10q",
        "svt-lee-clifton",
        "ε = 2",
        lambda: _svt("lc-eps2-10q", 2.0, rho_scale=2.0, nu_scale=2 / 3, cutoff=1, queries=10),
        lambda: _lc_exact(2.0, 10),
        "exact: ε of the first-'above' law (mpmath) on (0⁹1, 1⁹0)",
        options={"domain_size": 10},
        pair=_lc_pair(10),
    ),
    Variant(
        "chen-eps0.1-4q",
        "svt-chen",
        "4 queries (ε = 0.1)",
        lambda: _svt("chen-eps0.1-4q", 0.1, rho_scale=20.0, nu_scale=20.0, cutoff=None, queries=4),
        lambda: _chen_exact(0.1, 4),
        "exact: loss of 'above exactly on the first two' (mpmath) on (1²0², 0²1²)",
        options={"domain_size": 4},
        pair=_chen_pair(4),
    ),
    Variant(
        "roth-int-eps0.1-5q",
        "svt-roth",
        "5 queries, integer (discrete Laplace) noise and threshold: no porous doubles",
        lambda: _answer_int("roth-int-eps0.1-5q", 0.1, 5, nu_scale=20.0),
        lambda: _answer_int_exact(20.0, 5),
        "exact: closed form r^{−d} = e^{dε/2} (d = 5) at (first above = query 5, answer "
        "<= 0) on (0⁵, 1⁵), a lower bound",
        options={"domain_size": 5},
        pair=(_all(0, 5), _all(1, 5)),
    ),
    Variant(
        "gap-answer-int-eps0.1",
        "svt-gap-noisy-answer",
        "integer (discrete Laplace) noise and threshold: no porous doubles (ε = 0.1, 10 queries)",
        lambda: _answer_int("gap-answer-int-eps0.1", 0.1, 10, nu_scale=40.0),
        lambda: _answer_int_exact(40.0, 10),
        "exact: closed form r^{−d} = e^{dε/4} (d = 10) at (first above = query 10, answer "
        "<= 0) on (0¹⁰, 1¹⁰), a lower bound",
        options={"domain_size": 10},
        pair=(_all(0, 10), _all(1, 10)),
    ),
    Variant(
        "rnm-laplace-rounded-eps0.1-3q",
        "rnm-laplace-max-int",
        "3 candidates, the maximum rounded to the nearest integer (ε = 0.1)",
        lambda: _max_batch("rnm-laplace-rounded-eps0.1-3q", 0.1, _max_rounded_batch),
        lambda: _rounded_max_exact(0.1, 3),
        "exact: P(round(max) = −3) on (0³, 1³) from the CDF of the maximum (mpmath): dε/2",
        options={"domain_size": 3},
        pair=(_all(0, 3), _all(1, 3)),
    ),
    Variant(
        "hist-substitute-2cat-eps0.1",
        "histogram-binary-substitute",
        "ε = 0.1",
        lambda: _substitute_hist("hist-substitute-2cat-eps0.1", 0.1, 2),
        lambda: _substitute_exact(0.1, 2),
        "exact: output (1, 0) on (1, 0) against (0, 1) (discrete Laplace pmf, mpmath): 2ε",
        options={"domain_size": 2},
        pair=((1, 0), (0, 1)),
    ),
    Variant(
        "partial-sum-int-eps0.1",
        "partial-sum-half-scale",
        "ε = 0.1, integer (discrete Laplace) noise of scale 1/(2ε)",
        lambda: black_box(
            functools.partial(hg.partial_sum, scale=5.0, exact=True),
            claim=(0.1, 0.0, _AR1),
            width=0,
            name="partial-sum-int-eps0.1",
            values=1,
        ),
        lambda: _sum_int_exact(0.1),
        "exact: discrete Laplace pmf ratio of a shift by 1 (mpmath): 2ε",
        options={"domain_size": 5},
        pair=((1, 0, 0, 0, 0), _all(0, 5)),
    ),
    Variant(
        "opendp-laplace-eps1-t11",
        "opendp-laplace-threshold-delta",
        "threshold 11 (scale 1): claimed δ 1.2e-5",
        lambda: _opendp_laplace("opendp-laplace-eps1-t11", 1.0, 11),
        lambda: (math.inf, ps.opendp_deltas(1.0, 11)[1]),
        "exact: P(Z >= t − 1) by the discrete Laplace series (mpmath), e^{ε}× the claim; Q = 0",
        pair=_ONE_KEY,
    ),
    # StatDP's other claims (examples/benchmark.py runs 0.2, 0.7 and 1.5).
    *(
        Variant(
            f"statdp-isvt3-eps{e:g}",
            "svt-lee-clifton-statdp",
            f"claim {e:g} instead of 0.7",
            functools.partial(
                _statdp_summary,
                f"statdp-isvt3-eps{e:g}",
                e,
                sv.statdp_isvt3_batch,
                rho_scale=4 / e,
                nu_scale=4 / (3 * e),
            ),
            functools.partial(_statdp_lc_exact, e),
            "exact: largest loss of the summary's law (mpmath) on (0⁴1, 1⁴0)",
            options={"domain_size": 5},
            pair=_STATDP_LC_PAIR,
        )
        for e in (0.2, 1.5)
    ),
    *(
        Variant(
            f"statdp-isvt2-eps{e:g}",
            "svt-chen-statdp",
            f"claim {e:g} instead of 0.7",
            functools.partial(
                _statdp_summary,
                f"statdp-isvt2-eps{e:g}",
                e,
                sv.statdp_all_answers_batch,
                rho_scale=2 / e,
                nu_scale=2 / e,
            ),
            functools.partial(_statdp_chen_exact, e),
            "exact: loss of the summary 0 (mpmath) on (0, 0, 8, 8, 8) and (1, 1, 7, 7, 7), a "
            "lower bound",
            options={"domain_size": 5},
            pair=_STATDP_CHEN_PAIR,
        )
        for e in (0.2, 1.5)
    ),
)


def _fmt(x, digits=4):
    return "inf" if math.isinf(x) else f"{x:.{digits}g}"


def _ratio(claim, true):
    """How far the true guarantee is above the claim: on δ at the claimed ε for a claimed
    δ > 0 (such bugs spend δ on events with Q = 0, so their ε is ∞), else on ε."""
    if claim.delta > 0:
        return true[1] / claim.delta
    return true[0] / claim.epsilon


def _print_witnesses(result):
    """Every confirmed (pair, event): its family, P̂, Q̂, bounds and detectable ε, δ."""
    print(
        f"    detectable ε {_fmt(result.detectable_epsilon)}, δ {result.detectable_delta:.3g}; "
        f"pairs screened {result.pairs_screened}; events confirmed {result.events_confirmed}"
    )
    for w in result.witnesses:
        print(
            f"    {w.family:24s} {w.counts} vs {w.counts2}: P̂ {w.p_hat:.4g} Q̂ {w.q_hat:.4g} "
            f"(n {w.samples_p}) ε≥{w.epsilon_lower:.4g} δ≥{w.delta_lower:.3g} "
            f"det ε {_fmt(w.detectable_epsilon)} δ {w.detectable_delta:.3g}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--only", nargs="+", default=None, help="variant names to run")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--budget", default=None, help="samples (5e7) or seconds (60s)")
    parser.add_argument("--list", action="store_true", help="claims and true guarantees only")
    parser.add_argument(
        "--with-pair",
        action="store_true",
        help="name the variant's witness pair (pairs=: it is confirmed)",
    )
    parser.add_argument(
        "--witnesses", action="store_true", help="print every confirmed pair and event"
    )
    args = parser.parse_args(argv)
    by_name = {v.name: v for v in VARIANTS}
    unknown = [n for n in args.only or () if n not in by_name]
    if unknown:
        parser.error(f"--only: no variant {', '.join(unknown)}")
    variants = VARIANTS if args.only is None else [by_name[n] for n in args.only]
    header = (
        f"{'variant':32s} {'claim ε,δ':>17s} {'true ε,δ':>17s} {'×':>5s} seed {'verdict':7s} "
        f"{'ε lower':>8s} {'δ lower':>9s} {'samples':>9s} {'s':>5s}"
    )
    print(header)
    print("-" * len(header))
    flagged, missed, total_seconds = 0, [], 0.0
    for variant in variants:
        claim = variant.build().claim
        true = variant.true()
        lead = (
            f"{variant.name:32s} {claim.epsilon:>7.4g},{claim.delta:<9.3g} "
            f"{_fmt(true[0]):>7s},{true[1]:<9.3g} {_fmt(_ratio(claim, true), 3):>5s}"
        )
        if args.list:
            print(f"{lead}  [{variant.of}: {variant.change}; {variant.basis}]", flush=True)
            continue
        for seed in args.seeds:
            started = time.perf_counter()
            result = dpaudit.audit(
                variant.build(),
                seed=seed,
                workers=args.workers,
                budget=args.budget,
                pairs=[variant.pair] if args.with_pair else None,
                **variant.options,
            )
            seconds = time.perf_counter() - started
            total_seconds += seconds
            if result.verdict == "violation":
                flagged += 1
            else:
                missed.append(f"{variant.name}@{seed}")
            print(
                f"{lead} {seed:4d} {_SHORT[result.verdict]:7s} {result.epsilon_lower:8.4g} "
                f"{result.delta_lower:9.3g} {result.samples:9d} {seconds:5.1f}",
                flush=True,
            )
            if args.witnesses:
                _print_witnesses(result)
    if args.list:
        return
    print("-" * len(header))
    print(
        f"audits flagged: {flagged}/{flagged + len(missed)}; missed: {', '.join(missed) or '-'}; "
        f"audit seconds in all: {total_seconds:.0f}"
    )


if __name__ == "__main__":
    main()
