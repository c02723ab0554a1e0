"""Noisy histograms whose Laplace scale is ε instead of 1/ε, as the auditing papers test them.

Ding et al. (StatDP, CCS 2018) ``cmla-psu/statdp`` ``statdp/algorithms.py`` ``histogram_eps``
(the first noisy count, claims 0.2 / 0.7 / 1.5 in ``examples/benchmark.py``) and Bichsel
et al. (DP-Sniper, S&P 2021) ``dpsniper/mechanisms/noisy_hist.py`` ``NoisyHist2`` (all five
noisy counts, ε = 0.1). One count moves by at most 1 (StatDP's ONE_DIFFER): a user adds or
removes one record, ``AddRemoveUser(1)``.

opendp/smartnoise-core issue 360: a two-category histogram with a known number of records
is released with the noise of sensitivity 1, but neighbours substitute one record
(``Substitute(1)``: one count down, one up), so its L1 sensitivity is 2.

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

DataResponsibly/DataSynthesizer issue 34: PrivBayes (Zhang et al., SIGMOD 2014, Alg. 1) adds
Laplace noise of scale 2(d − k)/(nε) to the joint distributions, whose L1 sensitivity under
substitution is 2/n; DataSynthesizer's ``lib/PrivBayes.py`` adds that noise to the counts
(sensitivity 2), so each of its d − k noisy tables spends n times its share ε/(d − k). The
release here is one table, at ``describe_dataset_in_correlated_attribute_mode``'s default
ε = 0.1 with d − k = 1 (two attributes, degree 1: one two-way table of four cells), the noisy
counts with negative ones set to 0 as the code does; the normalised conditionals that follow
are post-processing of it.

opendp/smartnoise-core's simple geometric mechanism (``runtime/src/utilities/noise.rs``
``sample_simple_geometric_mechanism``) adds two-sided geometric noise (ratio α = e^{−ε/Δ})
drawn with at most ``upper − lower`` Bernoulli trials: the noise is 0 with probability
(1 − α)/(1 + α), else a fair sign times the trials to the first success, censored at
R = upper − lower (the tail beyond R lumped on ±R). Shipped as ``data + noise`` with no
clamp, the lumps at v ± R are outputs that v ∓ 1 cannot produce, so ε-DP fails at every ε
(PR 318, "clamp simple geometric mechanism based on sampling bounds": with min == max the
noise is 0). PR 318 clamped the release to [lower, upper]; issue 358 (PR 359) adds the
clamp of the input, without which a count beyond the bounds puts a lump inside them again.
The release here is the count of item 0 at the docstring's own example
``simple_geometric_mechanism(0.1, 1., 0, 10, true)``: ε = 0.1, sensitivity 1, bounds [0, 10].

IBM/differential-privacy-library issues 105 and 104 (item 1), fixed by PR 110: diffprivlib's
``LinearRegression`` (Zhang et al.'s functional mechanism, arXiv:1208.0219) noises each
coefficient of its objective with its own share of ε; the diagonal Σ x² gets
``LaplaceFolded`` (Laplace noise, a negative result folded onto −y) of sensitivity
``max(|lower|, |lower|)²``, the lower bound twice, where adding one record moves Σ x² by up
to ``max(|lower|, |upper|)²``. The release here is that coefficient alone (a marginal of the
fit, so it must keep its share): one feature taking the integer values of its bounds, one
target, ``fit_intercept=False`` (the bounds are used as given), default ε = 1, share ε/3.
With issue 105's bounds (0, 100) the sensitivity is 0 and the coefficient is released
exactly; with bounds (−2, 3) it is 4 where 9 is needed, 2.25 times the share.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from mechanisms import AddRemoveUser, Substitute, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from .entry import CorpusEntry, TrueGuarantee, black_box
from .exact import laplace_cdf, laplace_pdf, log_ratio, working_precision

__all__ = ["ENTRIES", "censored_geometric", "censored_geometric_law", "privbayes_point_loss"]

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


def _binary(name, epsilon, sensitivity):
    """Two noisy counts with discrete Laplace noise for L1 sensitivity ``sensitivity``."""
    function = functools.partial(
        _noisy_counts, scale=sensitivity / epsilon, first_only=False, exact=True
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


def _partial_sum(counts, size, rng, *, scale, exact=False):
    """The sum of the counts plus Laplace noise of ``scale`` (doubles, or discrete Laplace)."""
    q = validate_counts(counts).astype(float)
    if exact:
        noise = discrete_laplace(discrete_laplace_ratio(1.0 / scale), size, rng)
    else:
        noise = rng.laplace(scale=scale, size=size)
    return q.sum() + noise


def _checkdp_sum(name, scale, exact=False):
    function = functools.partial(_partial_sum, scale=scale, exact=exact)
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

# ---------------------------------------------------------------------------
# DataSynthesizer issue 34: the scale of noise on probabilities put on counts.

#: ``describe_dataset_in_correlated_attribute_mode``'s default ε; d − k = 1 noisy table.
PRIVBAYES_EPSILON, PRIVBAYES_TABLES = 0.1, 1


def _privbayes_counts(counts, size, rng, *, per_row, exact=False):
    """A noisy count table as DataSynthesizer releases it: Laplace noise of scale
    2(d − k)/(nε) (``per_row``: n = counts.sum(), the rows), or the fix the issue asks for,
    2(d − k)/ε, drawn as discrete Laplace (``exact``); negative noisy counts set to 0."""
    q = validate_counts(counts)
    # An empty table has no neighbour under substitution; it is released as if n = 1.
    rows = max(int(q.sum()), 1)
    scale = 2 * PRIVBAYES_TABLES / ((rows if per_row else 1) * PRIVBAYES_EPSILON)
    if exact:
        noise = discrete_laplace(discrete_laplace_ratio(1.0 / scale), (size, q.size), rng)
    else:
        noise = rng.laplace(scale=scale, size=(size, q.size))
    return np.maximum(q + noise, 0.0)


def _privbayes(name, *, per_row, exact=False):
    function = functools.partial(_privbayes_counts, per_row=per_row, exact=exact)
    return black_box(
        function,
        claim=(PRIVBAYES_EPSILON / PRIVBAYES_TABLES, 0.0, Substitute(1)),
        width=0,
        name=name,
        values=4,
    )


#: Twenty rows, one moved from cell 0 to cell 1: the scale is 2/(20 · 0.1) = 1.
PRIVBAYES_PAIR = ((20, 0, 0, 0), (19, 1, 0, 0))
#: A witness output: cell 0 above both counts, cell 1 clipped to 0 (both log ratios at 1/b).
_PRIVBAYES_POINT = 25


def privbayes_point_loss(pair, scale, point=_PRIVBAYES_POINT):
    """Exact log ratio of the law of (cell 0 = ``point``, cell 1 = 0) on ``pair``: the density
    of cell 0 times the mass P(q₁ + L <= 0) that the code's clipping puts on 0 (mpmath)."""
    (a, b) = pair
    with working_precision():
        p = laplace_pdf(point - a[0], scale) * laplace_cdf(-a[1], scale)
        q = laplace_pdf(point - b[0], scale) * laplace_cdf(-b[1], scale)
        return log_ratio(p, q)


def _privbayes_exact():
    rows = sum(PRIVBAYES_PAIR[0])
    scale = 2 * PRIVBAYES_TABLES / (rows * PRIVBAYES_EPSILON)
    return privbayes_point_loss(PRIVBAYES_PAIR, scale), 0.0


# ---------------------------------------------------------------------------
# SmartNoise-core's simple geometric mechanism: noise censored at ±(upper − lower).

#: The example in ``simple_geometric_mechanism``'s docstring: ε = 0.1, sensitivity 1, [0, 10].
GEOMETRIC_EPSILON, GEOMETRIC_BOUNDS = 0.1, (0, 10)


def censored_geometric(size, rng, *, alpha, trials):
    """SmartNoise-core's ``sample_simple_geometric_mechanism`` noise, ``size`` draws.

    0 when a uniform falls below (1 − α)/(1 + α); otherwise a fair sign times the number of
    Bernoulli(1 − α) trials to the first success, ``trials`` when none of them succeeds
    (``sample_geometric_censored``; no trial at all when ``trials`` is 0).
    """
    zero = rng.random(size) < (1 - alpha) / (1 + alpha)
    sign = 2 * rng.integers(2, size=size) - 1
    run = np.minimum(rng.geometric(1 - alpha, size=size), trials)
    return np.where(zero, 0, sign * run)


def _geometric_release(counts, size, rng, *, clamp_output, clamp_input):
    """Item 0's count plus the censored noise, as SmartNoise shipped it (no clamp), after PR
    318 (``clamp_output``) and after PR 359 (``clamp_input`` too)."""
    lower, upper = GEOMETRIC_BOUNDS
    value = int(validate_counts(counts)[0])
    if clamp_input:
        value = min(max(value, lower), upper)
    alpha = math.exp(-GEOMETRIC_EPSILON)  # scale Δ/ε = 10, α = e^{−1/scale}
    out = value + censored_geometric(size, rng, alpha=alpha, trials=upper - lower)
    if clamp_output:
        out = np.clip(out, lower, upper)
    return out.astype(float)


def _smartnoise_geometric(name, *, clamp_output, clamp_input):
    function = functools.partial(
        _geometric_release, clamp_output=clamp_output, clamp_input=clamp_input
    )
    return black_box(
        function, claim=(GEOMETRIC_EPSILON, 0.0, RELATION), width=0, name=name, values=1
    )


def censored_geometric_law(value, *, clamp_output, clamp_input):
    """Exact law {output: probability} of ``_geometric_release`` on count ``value``
    (mpmath, ``DIGITS`` digits), at ``GEOMETRIC_BOUNDS``
    (R = 10 trials; the formulas need R >= 1): P(0) = (1 − α)/(1 + α),
    P(±g) = (1 − α)α^g/(1 + α) for 0 < g < R, P(±R) = α^R/(1 + α)."""
    lower, upper = GEOMETRIC_BOUNDS
    trials = upper - lower
    if clamp_input:
        value = min(max(value, lower), upper)
    law: dict[int, mpmath.mpf] = {}
    with working_precision():
        alpha = mpmath.exp(-mpmath.mpf(GEOMETRIC_EPSILON))
        for g in range(-trials, trials + 1):
            if g == 0:
                p = (1 - alpha) / (1 + alpha)
            elif abs(g) < trials:
                p = (1 - alpha) * alpha ** abs(g) / (1 + alpha)
            else:
                p = alpha**trials / (1 + alpha)
            out = value + g
            if clamp_output:
                out = min(max(out, lower), upper)
            law[out] = law.get(out, mpmath.mpf(0)) + p
    return law


def _law_guarantee(pair, **clamps):
    """(ε, δ at the claimed ε) of the release on ``pair``, both orders, from the exact laws."""
    laws = [censored_geometric_law(counts[0], **clamps) for counts in pair]
    with working_precision():
        factor = mpmath.exp(mpmath.mpf(GEOMETRIC_EPSILON))
        epsilon, delta = 0.0, mpmath.mpf(0)
        for p, q in (laws, laws[::-1]):
            for out, mass in p.items():
                epsilon = max(epsilon, log_ratio(mass, q.get(out, 0)))
            delta = max(delta, mpmath.fsum(max(0, m - factor * q.get(o, 0)) for o, m in p.items()))
        return epsilon, float(delta)


#: Counts 0 and 1: the unclamped release puts a lump on 11 (count 1) that count 0 never reaches.
GEOMETRIC_PAIR = ((1, 0, 0, 0, 0), (0, 0, 0, 0, 0))
#: Counts 11 and 10: beyond the upper bound, the release clamped at its output only still puts
#: count 11's lower lump on 1, inside [0, 10], and count 10's on 0, which count 11 never reaches.
GEOMETRIC_BEYOND_PAIR = ((11, 0, 0, 0, 0), (10, 0, 0, 0, 0))


def _geometric_entry(name, *, bug, source, clamp_output, delta, basis, pair):
    """A SmartNoise geometric bug (input never clamped) with its twin: both clamps."""
    clamps = {"clamp_output": clamp_output, "clamp_input": False}
    return CorpusEntry(
        name=name,
        family="histogram",
        bug=bug,
        source=source,
        build=lambda: _smartnoise_geometric(name, **clamps),
        true=TrueGuarantee(math.inf, delta, basis, lambda: _law_guarantee(pair, **clamps)),
        pair=pair,
        twin=lambda: _smartnoise_geometric(
            "smartnoise-geometric-clamped", clamp_output=True, clamp_input=True
        ),
        twin_source="smartnoise-core after PR 318 and PR 359 (issue 358): input and output "
        "clamped to [lower, upper], so both lumps fall on the bounds (ε-DP; opendp/opendp "
        "issue 114: 'two clamps, one on the input, one on the output')",
    )


# ---------------------------------------------------------------------------
# diffprivlib issues 104 and 105 (PR 110): the diagonal sensitivity from the lower bound twice.

#: ``LinearRegression``'s default ε, and the share of each of its noisy coefficients with one
#: feature and one target: ε / (1 + n_targets · n_features + n_features (n_features + 1) / 2).
REGRESSION_EPSILON = 1.0
REGRESSION_SHARE = REGRESSION_EPSILON / 3


def _square_sum(counts, size, rng, *, values, sensitivity, exact=False):
    """The diagonal coefficient Σ x² of ``LinearRegression`` (fit_intercept=False), noised as
    ``LaplaceFolded(epsilon=share, sensitivity, lower=0, upper=inf)`` does it: Laplace noise
    of scale sensitivity/share, a negative result folded onto −y. ``counts[j]`` records have
    the feature value ``values[j]``. ``exact``: discrete Laplace noise on the integer sum."""
    q = validate_counts(counts)
    if q.size != len(values):
        raise ValueError(
            f"counts has {q.size} cells but the feature takes {len(values)} values {values}; "
            f"audit with domain_size={len(values)}"
        )
    total = int(np.dot(q, np.square(values)))
    scale = sensitivity / REGRESSION_SHARE
    if exact:
        noisy = total + discrete_laplace(discrete_laplace_ratio(1.0 / scale), (size, 1), rng)
    elif scale == 0:
        # diffprivlib accepts sensitivity 0: Laplace of scale 0 returns the value itself.
        noisy = np.full((size, 1), float(total))
    else:
        noisy = total + rng.laplace(scale=scale, size=(size, 1))
    return np.abs(noisy)


def _feature_values(bounds):
    lower, upper, step = bounds
    return tuple(range(lower, upper + 1, step))


def _regression(name, bounds, *, fixed):
    """The coefficient's release on integer feature values ``lower..upper`` (step ``bounds[2]``),
    its sensitivity as shipped, ``max(|lower|, |lower|)²``, or as PR 110 fixes it (``fixed``)."""
    lower, upper, _ = bounds
    values = _feature_values(bounds)
    shipped = max(abs(lower), abs(lower)) ** 2
    sensitivity = max(abs(lower), abs(upper)) ** 2 if fixed else shipped
    function = functools.partial(_square_sum, values=values, sensitivity=sensitivity, exact=fixed)
    return black_box(
        function, claim=(REGRESSION_SHARE, 0.0, AddRemoveUser(1)), width=0, name=name, values=1
    )


def _folded_laplace_pdf(y, centre, scale):
    """Density at ``y >= 0`` of |centre + L|, L ~ Laplace(0, scale) (mpmath)."""
    return laplace_pdf(y - centre, scale) + laplace_pdf(-y - centre, scale)


#: Issue 105's own bounds: the shipped sensitivity is 0, so the coefficient has no noise.
REGRESSION_ZERO_BOUNDS = (0, 100, 25)
#: Asymmetric bounds (issue 104, point 1): shipped sensitivity 4, true 9.
REGRESSION_ASYMMETRIC_BOUNDS = (-2, 3, 1)
#: One record at x = 100 (Σ x² = 10⁴) against none (Σ x² = 0).
REGRESSION_ZERO_PAIR = ((0, 0, 0, 0, 1), (0, 0, 0, 0, 0))
#: A record at x = 2 (Σ x² = 4) against it with a record at x = 3 added (Σ x² = 13).
REGRESSION_ASYMMETRIC_PAIR = ((0, 0, 0, 0, 1, 0), (0, 0, 0, 0, 1, 1))


def _regression_zero_exact():
    """No noise: the pair's first histogram releases Σ x² = 10⁴ with probability 1, the
    second never (its Σ x² is 0); P − e^ε Q = 1 at every ε."""
    values = _feature_values(REGRESSION_ZERO_BOUNDS)
    first, second = (
        sum(c * v * v for c, v in zip(counts, values, strict=True))
        for counts in REGRESSION_ZERO_PAIR
    )
    with working_precision():
        p = mpmath.mpf(1)
        q = mpmath.mpf(1 if second == first else 0)
        return log_ratio(p, q), float(p - mpmath.exp(REGRESSION_SHARE) * q)


def _regression_asymmetric_exact():
    """Log ratio of the folded Laplace densities of Σ x² = 4 and 13 at y = 1: on [0, 4] both
    are e^{−centre/b} cosh(y/b)/b, so the ratio is e^{9/b} there (b = 4/share)."""
    scale = mpmath.mpf(4) / mpmath.mpf(REGRESSION_SHARE)
    with working_precision():
        p = _folded_laplace_pdf(1, 4, scale)
        q = _folded_laplace_pdf(1, 13, scale)
        return log_ratio(p, q), 0.0


_REGRESSION_SOURCE = (
    "IBM/differential-privacy-library issue 105 (Sensitivity Misscalibration for Linear "
    "Regression) and issue 104 item 1, fixed by PR 110: models/linear_regression.py "
    "_construct_regression_obj noises the diagonal coefficient Σ x² with LaplaceFolded of "
    "sensitivity np.max(np.abs([bounds_X[0][i], bounds_X[0][i]])) ** 2; one feature, one "
    "target, fit_intercept=False, default ε = 1 (each coefficient's share ε/3)"
)


def _regression_entry(name, bounds, *, bug, true, pair):
    """A diffprivlib diagonal-coefficient bug at ``bounds``, with PR 110's fix as its twin."""
    lower, upper, _ = bounds
    return CorpusEntry(
        name=name,
        family="histogram",
        bug=bug,
        source=f"{_REGRESSION_SOURCE}, bounds_X = ({lower}, {upper})",
        build=lambda: _regression(name, bounds, fixed=False),
        true=true,
        pair=pair,
        twin=lambda: _regression(f"{name}-fixed", bounds, fixed=True),
        twin_source="PR 110's sensitivity max(|lower|, |upper|)², with integer (discrete "
        "Laplace) noise on the integer Σ x² so that it is DP on doubles",
        audit_options={"domain_size": len(_feature_values(bounds))},
    )


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
            lambda: _laplace_shift_loss(1 / (2 * PARTIAL_EPSILON)),
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
    CorpusEntry(
        name="privbayes-count-scale-over-n",
        family="histogram",
        bug="noisy counts with PrivBayes's Laplace scale for probabilities, 2(d − k)/(nε): "
        "n times too little noise on counts of sensitivity 2",
        source="DataResponsibly/DataSynthesizer issue 34 (Wrong Conditional Distributions "
        "Sensitivity: lib/PrivBayes.py laplace_noise_parameter = 2 * (num_attributes - k) / "
        "(num_tuples * epsilon) added to counts), default ε = 0.1, one table (d − k = 1)",
        build=lambda: _privbayes("privbayes-count-scale-over-n", per_row=True),
        true=TrueGuarantee(
            sum(PRIVBAYES_PAIR[0]) * PRIVBAYES_EPSILON,
            0.0,
            "exact: closed form nε/(d − k) on a pair of n rows (L1 distance 2, scale "
            "2(d − k)/(nε)); on the pair's 20 rows 2.0, reached at (cell 0 = 25, cell 1 "
            "clipped to 0): mpmath. Unbounded as n grows",
            _privbayes_exact,
        ),
        pair=PRIVBAYES_PAIR,
        twin=lambda: _privbayes("privbayes-count-scale", per_row=False, exact=True),
        twin_source="the scale issue 34 asks for, 2(d − k)/ε on counts (sensitivity 2 under "
        "substitution), with integer (discrete Laplace) noise so that it is DP on doubles",
        audit_options={"domain_size": 4},
    ),
    _geometric_entry(
        "smartnoise-geometric-censored",
        bug="two-sided geometric noise censored at ±(upper − lower) and added with no clamp: "
        "the censored tails are outputs the neighbouring count cannot produce",
        source="opendp/smartnoise-core PR 318 and issue 319 (clamp simple geometric mechanism "
        "based on sampling bounds; min == max gave zero noise), runtime/src/utilities/noise.rs "
        "sample_simple_geometric_mechanism at its docstring's example (ε = 0.1, bounds [0, 10])",
        clamp_output=False,
        delta=0.3638103553639766,
        basis="exact: the laws of counts 1 and 0 (mpmath, 20 digits): output 11, count 1's "
        "lump α^10/(1 + α), is never output by count 0 (ε = ∞); δ at ε = 0.1 adds count 1's "
        "lower lump against count 0's geometric mass at −9",
        pair=GEOMETRIC_PAIR,
    ),
    _geometric_entry(
        "smartnoise-geometric-input-unclamped",
        bug="censored geometric noise with the release clamped to [lower, upper] but not the "
        "input: a count beyond the bounds puts its censored tail inside them",
        source="opendp/smartnoise-core issue 358 and PR 359 (hardened geometric mechanism, "
        "item 2: the input should be clamped to keep the tail bin of the censored geometric "
        "out of the output domain), at the docstring's example (ε = 0.1, bounds [0, 10])",
        clamp_output=True,
        delta=0.19312905011639028,
        basis="exact: the laws of counts 11 and 10 (mpmath, 20 digits): count 10's lower lump "
        "α^10/(1 + α) falls on 0, which count 11 never outputs (ε = ∞, δ at ε = 0.1 is that "
        "lump); counts within [0, 10] keep the claim",
        pair=GEOMETRIC_BEYOND_PAIR,
    ),
    _regression_entry(
        "diffprivlib-regression-diagonal-unnoised",
        REGRESSION_ZERO_BOUNDS,
        bug="linear regression's Σ x² noised with the sensitivity of the lower bound twice: "
        "0 when the lower bound is 0, so no noise at all",
        true=TrueGuarantee(
            math.inf,
            1.0,
            "exact: Σ x² = 10⁴ (one record at x = 100) is released with probability 1 and "
            "never from the empty histogram: no finite ε, δ = 1 at the claimed ε",
            _regression_zero_exact,
        ),
        pair=REGRESSION_ZERO_PAIR,
    ),
    _regression_entry(
        "diffprivlib-regression-diagonal-asymmetric",
        REGRESSION_ASYMMETRIC_BOUNDS,
        bug="linear regression's Σ x² noised with the sensitivity of the lower bound twice: "
        "4 instead of 9 on bounds (−2, 3), 2.25 times the claimed ε",
        true=TrueGuarantee(
            9 * REGRESSION_SHARE / 4,
            0.0,
            "exact: closed form 9/b with b = 4/share (folded Laplace densities of Σ x² = 4 "
            "and 13 in ratio e^{9/b} on [0, 4]); mpmath at y = 1",
            _regression_asymmetric_exact,
        ),
        pair=REGRESSION_ASYMMETRIC_PAIR,
    ),
)
