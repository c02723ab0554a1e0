"""dpaudit.auditor.greybox.importance and argmax_weights: rare events by importance sampling.

Every probability is checked against the exact law (``dpaudit.exact.output_law``).

False failures: a statistical assertion either compares a mean with a Hoeffding interval at
failure probability 1e-6, or counts the bounds on the wrong side of the exact value over 200
seeds — stochastically at most Binomial(200, α) for a valid bound — against that law's
99.9 % quantile (probability <= 0.001 each; 6 such counts). The bounds of a single run hold
each with probability >= 1 − α (stated at each test). The seeds are fixed: a pass is a pass on
every run.
"""

import math

import numpy as np
import pytest
from helpers import ThreeDraws
from scipy import stats

import dpaudit
import mechanisms as M
from dpaudit.auditor.bounds.statistics import event_bounds, one_sided_lower
from dpaudit.auditor.bounds.weighted_bounds import privacy_lower_bounds
from dpaudit.auditor.greybox.argmax_weights import (
    gumbel_dominating_shift,
    noisy_max_weight_bound,
)
from dpaudit.auditor.greybox.cross_entropy import cross_entropy_tilt
from dpaudit.auditor.greybox.importance import importance_sampled_probability
from dpaudit.catalog import EMNonMonotoneClaimsEpsilon, ReportNoisyMaxHalfNoise

SEED = 20261203
LAMBDA = 0.1


def _item(j):
    return lambda outcomes: outcomes[:, 0] == j


def _exact(mechanism, counts, outcome):
    return float(dpaudit.exact.output_law(mechanism, counts)[outcome])


# ------------------------------------------------------------------- (a) refusals


def test_tilts_that_match_nothing_are_refused():
    with pytest.raises(ValueError, match=r"tilts \[1\] matched no .* draw .* #1 random"):
        importance_sampled_probability(
            ThreeDraws(), [1, 0], _item(1), tilts={1: 1.0}, samples=10, seed=0, alpha=0.1
        )


def test_a_weight_bound_the_runs_refute_is_refused():
    with pytest.raises(ValueError, match="is not a bound on the weight over the event"):
        importance_sampled_probability(
            M.GumbelTopK(k=1, epsilon=1.0), [3, 0, 0], _item(1), tilts={0: [0.0, 3.0, 0.0]},
            samples=2_000, seed=0, alpha=0.1, weight_bound=1e-6,
        )  # fmt: skip


# -------------------------------------------------------------- the weight bounds


def _min_log_ratio_on_event(method, offsets, item, sigma, grid):
    """``min ln p̃/p`` over a grid of (x_j, x_i) with ``a_j + x_j > a_i + x_i`` (two items)."""
    law = {"gumbel": stats.gumbel_r, "laplace": stats.laplace}[method]
    xj, xi = np.meshgrid(grid, grid, indexing="ij")
    i = 1 - item
    inside = offsets[item] + xj > offsets[i] + xi
    log_ratio = (
        law.logpdf(xj, sigma[item]) - law.logpdf(xj)
        + law.logpdf(xi, sigma[i]) - law.logpdf(xi)
    )  # fmt: skip
    return float(log_ratio[inside].min())


@pytest.mark.parametrize(
    ("method", "sigma"),
    [("laplace", [-3.0, 3.0]), ("laplace", [-1.0, 4.0]), ("laplace", [2.0, 5.0]),
     ("gumbel", [-1.0, 5.0])],
)  # fmt: skip
def test_noisy_max_weight_bound_is_the_supremum_over_the_event(method, sigma):
    offsets, item = np.array([8.0, 0.0]), 1
    bound = noisy_max_weight_bound(method, offsets, item, sigma, mixture=LAMBDA)
    grid = np.linspace(-40.0, 40.0, 1601)
    low = _min_log_ratio_on_event(method, offsets, item, np.array(sigma), grid)
    on_grid = 1.0 / (LAMBDA + (1 - LAMBDA) * math.exp(low))
    assert on_grid <= bound <= 1.0 / LAMBDA
    assert bound == pytest.approx(on_grid, rel=1e-3)  # reached (Laplace) or approached (x_j → ∞)


def test_only_raising_the_winner_leaves_the_weight_unbounded_below_one_over_lambda():
    offsets = np.array([0.0, -30.0, -30.0])
    assert noisy_max_weight_bound("gumbel", offsets, 1, [0.0, 29.0, 0.0], mixture=LAMBDA) == 10.0
    shift = gumbel_dominating_shift(offsets, 1, [-1.0, 30.0, 0.2])
    assert shift[0] == -1.0 and shift[2] == 0.0
    assert shift[1] == pytest.approx(math.log1p((1 - math.exp(-1.0)) * math.exp(30.0)), rel=1e-5)
    bound = noisy_max_weight_bound("gumbel", offsets, 1, shift, mixture=LAMBDA)
    assert bound == pytest.approx(math.exp(-shift.sum()) / (1 - LAMBDA), rel=1e-6)
    assert noisy_max_weight_bound("laplace", [5.0, 0.0], 1, [-2.0, 2.0], mixture=LAMBDA) >= 1.0


# ---------------------------------------------------------------- (b) a rare event


def test_a_probability_of_1e_minus_13_is_bracketed_within_five_percent():
    # GumbelTopK adds Gumbel(1) to ε(c − max c) = (0, −30, −30): P(item 1) = 1/(e^30 + 2).
    mechanism, counts = M.GumbelTopK(k=1, epsilon=1.0), [30, 0, 0]
    exact = _exact(mechanism, counts, (1,))
    assert exact == pytest.approx(9.3576e-14, rel=1e-4)
    pilot = cross_entropy_tilt(
        mechanism.sample, counts, _item(1), initial={0: [0.0, 25.0, 0.0]}, samples=20_000, seed=SEED
    )
    base = np.array([0.0, -30.0, -30.0])
    shift = gumbel_dominating_shift(base, 1, pilot.tilts[0])
    bound = noisy_max_weight_bound("gumbel", base, 1, shift, mixture=LAMBDA)
    assert bound < 1e-11  # far below 1/λ = 10
    n, alpha = 200_000, 1e-3
    result = importance_sampled_probability(
        mechanism, counts, _item(1), tilts={0: shift}, samples=n, seed=SEED, alpha=alpha,
        weight_bound=bound,
    )  # fmt: skip
    # Each side holds with probability >= 1 − 1e-3. Measured: low/P = 0.992, high/P = 1.015,
    # relative width 0.023, 1.1e5 hits, Kish effective sample size 2.0e4, B = 4.7 P.
    # The shift the pilot found, (−0.98, 30.02, 0.01), is moved to (−0.98, 29.53, 0).
    assert result.low <= exact <= result.high
    assert exact / 1.05 < result.low
    assert result.relative_width < 0.05
    # The same runs at the generic weight bound 1/λ: the lower bound is 0 (n P λ is far
    # below ln(1/α)) and the upper one sits at its floor B ln(1/α)/n.
    generic = importance_sampled_probability(
        mechanism, counts, _item(1), tilts={0: shift}, samples=n, seed=SEED, alpha=alpha
    )
    assert generic.low == 0.0 and generic.high >= generic.upper_floor / 2
    # Plain sampling, the same number of runs: no hit, Clopper–Pearson lower bound 0.
    plain_hits = int(_item(1)(mechanism.sample(counts, n, np.random.default_rng(SEED))).sum())
    assert plain_hits == 0 and one_sided_lower(plain_hits, n, alpha) == 0.0


# ------------------------------------------------------------------- (c) coverage


def _coverage_case(name):
    """``(mechanism, counts, shift, weight bound, runs, median relative width measured)``."""
    if name == "gumbel-small-bound":
        base = np.array([0.0, -7.0, -7.0])
        shift = gumbel_dominating_shift(base, 1, [-1.0, 7.0, 0.0])
        bound = noisy_max_weight_bound("gumbel", base, 1, shift, mixture=LAMBDA)
        return M.GumbelTopK(k=1, epsilon=1.0), [7, 0, 0], shift, bound, 2_000, 0.15
    if name == "gumbel-one-over-lambda":
        return M.GumbelTopK(k=1, epsilon=1.0), [7, 0, 0], [0.0, 7.0, 0.0], None, 20_000, 4.0
    bound = noisy_max_weight_bound("laplace", [8, 0], 1, [-2.0, 2.0], mixture=LAMBDA)
    return ReportNoisyMaxHalfNoise(epsilon=1.0), [8, 0], [-2.0, 2.0], bound, 20_000, 0.65


@pytest.mark.parametrize("name", ["gumbel-small-bound", "gumbel-one-over-lambda", "rnm-half-noise"])
def test_each_one_sided_bound_misses_no_more_often_than_alpha(name):
    # P(item 1) = 9.1e-4 (GumbelTopK, [7, 0, 0]; weight bound 4.3e-3 or 1/λ = 10) and 8.4e-4
    # (Laplace(1) report-noisy-max, [8, 0]; weight bound 1). Measured misses at α = 0.05:
    # 3 and 3, 0 and 0, 0 and 0 of 200 (allowed: 21 each).
    mechanism, counts, shift, bound, n, width = _coverage_case(name)
    exact = _exact(mechanism, counts, (1,))
    seeds, alpha = 200, 0.05
    lows, highs = [], []
    for seed in range(seeds):
        result = importance_sampled_probability(
            mechanism, counts, _item(1), tilts={0: shift}, samples=n, seed=seed, alpha=alpha,
            weight_bound=bound,
        )  # fmt: skip
        lows.append(result.low)
        highs.append(result.high)
    lows, highs = np.array(lows), np.array(highs)
    allowed = stats.binom.ppf(0.999, seeds, alpha)
    assert (lows > exact).sum() <= allowed and (highs < exact).sum() <= allowed
    # Not vacuous: the bounds are informative, as measured.
    assert np.median(lows) > 0 and np.median((highs - lows) / exact) < 1.5 * width


# ------------------------------------------------------------ (d) ε on a neighbour pair


def _epsilon_from_two_sides(mechanism, d, d2, tilt, tilt2, bound, bound2, n, alpha):
    p = importance_sampled_probability(
        mechanism, d, _item(1), tilts={0: tilt}, samples=n, seed=SEED, alpha=alpha / 2,
        weight_bound=bound,
    )  # fmt: skip
    q = importance_sampled_probability(
        mechanism, d2, _item(1), tilts={0: tilt2}, samples=n, seed=SEED + 1, alpha=alpha / 2,
        weight_bound=bound2,
    )  # fmt: skip
    return p, q, privacy_lower_bounds(p.bound, q.bound, epsilon=mechanism.claim.epsilon, delta=0.0)


def _plain_epsilon(mechanism, d, d2, n, alpha):
    rng = np.random.default_rng(SEED)
    hits = int(_item(1)(mechanism.sample(d, n, rng)).sum())
    hits2 = int(_item(1)(mechanism.sample(d2, n, rng)).sum())
    return event_bounds(hits, n, hits2, n, alpha / 2, mechanism.claim.epsilon, 0.0)[2]


def test_epsilon_lower_bound_on_report_noisy_max_with_half_the_noise():
    # rnm-half-noise: Laplace(1/ε) report-noisy-max claiming ε = 1 under BoundedChange(1). On
    # D = (11, 1), D' = (12, 0) the event "item 1" has P = 1.36e-4, Q = 2.15e-5 and exact
    # ε = 2 + ln(12/14) = 1.846: the loss grows towards 2ε as the event gets rarer (on
    # (c − 1, 1), (c, 0) it is 2 + ln(c/(c + 2)): 1.31 where Q = 0.14), so it lives in rare
    # events. Given x_1 − x_0 > gap the split of the gap is
    # uniform, so symmetric shifts ±gap/4 are used; a Laplace shift cannot bring the weight
    # bound below 1 (argmax_weights), so the floor stays about ln(1/α)/n.
    mechanism = ReportNoisyMaxHalfNoise(epsilon=1.0)
    d, d2 = [11, 1], [12, 0]
    exact_p, exact_q = _exact(mechanism, d, (1,)), _exact(mechanism, d2, (1,))
    exact = math.log(exact_p / exact_q)
    assert exact == pytest.approx(2 + math.log(12 / 14), rel=1e-9)
    tilt, tilt2 = [-2.5, 2.5], [-3.0, 3.0]
    bound = noisy_max_weight_bound("laplace", d, 1, tilt, mixture=LAMBDA)
    bound2 = noisy_max_weight_bound("laplace", d2, 1, tilt2, mixture=LAMBDA)
    assert bound == pytest.approx(1.0) and bound2 == pytest.approx(1.0)
    n, alpha = 1_000_000, 0.05
    p, q, found = _epsilon_from_two_sides(mechanism, d, d2, tilt, tilt2, bound, bound2, n, alpha)
    # Holds with probability >= 1 − α. Measured: ε >= 1.45 (P within [0.93, 1.13]·P, Q within
    # [0.80, 1.38]·Q); plain sampling with the same n: 1.29.
    assert p.low <= exact_p <= p.high and q.low <= exact_q <= q.high
    assert found.epsilon_lower <= exact
    assert found.epsilon_lower > mechanism.claim.epsilon  # the violation is found
    assert found.epsilon_lower > _plain_epsilon(mechanism, d, d2, n, alpha)


def test_epsilon_lower_bound_on_the_non_monotone_exponential_mechanism():
    # em-non-monotone: the EM (Gumbel(1/ε) argmax) claiming ε = 1 under BoundedChange(1). On
    # D = (11, 1), D' = (12, 0), "item 1" has P = e/(e^11 + e) = 4.5e-5, Q = 1/(e^12 + 1) =
    # 6.1e-6 and exact ε = 2 − 1e-5 (the loss tends to 2ε as the event gets rarer). A Gumbel
    # proposal that also lowers item 0 dominates p on the event: B ≈ 5 P, not 1/λ.
    mechanism = EMNonMonotoneClaimsEpsilon(epsilon=1.0)
    d, d2 = [11, 1], [12, 0]
    exact_p, exact_q = _exact(mechanism, d, (1,)), _exact(mechanism, d2, (1,))
    exact = math.log(exact_p / exact_q)
    shifts, bounds = [], []
    for counts in (d, d2):
        base = 1.0 * (np.array(counts) - max(counts))
        shift = gumbel_dominating_shift(base, 1, [-1.0, 20.0])
        shifts.append(shift)
        bounds.append(noisy_max_weight_bound("gumbel", base, 1, shift, mixture=LAMBDA))
    n, alpha = 200_000, 0.05
    p, q, found = _epsilon_from_two_sides(mechanism, d, d2, *shifts, *bounds, n, alpha)
    # Holds with probability >= 1 − α. Measured: ε >= 1.98 (relative widths 0.017 on each
    # side, B = 4.8 P and 4.8 Q); plain sampling with the same n: 0.
    assert p.low <= exact_p <= p.high and q.low <= exact_q <= q.high
    assert found.epsilon_lower <= exact
    assert found.epsilon_lower > 1.9
    assert _plain_epsilon(mechanism, d, d2, n, alpha) < 1.0
