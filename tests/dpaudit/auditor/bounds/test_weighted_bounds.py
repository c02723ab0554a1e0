"""Bounds on weighted hits (dpaudit.auditor.bounds.weighted_bounds) on importance-sampled runs.

The runs: ``X ~ Laplace(0, 1)``, event ``S = {X >= t}`` with ``P(S) = e^{−t}/2`` exactly,
proposal ``q = λ p + (1 − λ) Laplace(t + 1, 1)`` with ``λ = 0.1``; ``Y = (p/q)(X) 1{X >= t}``
has mean ``P(S)``. On ``S`` the weight falls from ``x = t`` on, so ``sup_S p/q`` is its value
at ``t``, far below ``1/λ``.

False failures: every coverage assertion compares a count of bounds on the wrong side of
the truth — stochastically at most Binomial(repetitions, α) when the bound is valid — with
that law's 99.9 % quantile, so it fails a valid bound with probability <= 0.001; the module
makes 17 such assertions (<= 1.7 % in all, by the union bound). The seeds are fixed: a pass
is a pass on every run.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.auditor.bounds.statistics import (
    delta_lower_bound,
    epsilon_lower_bound,
    one_sided_lower,
    one_sided_upper,
)
from dpaudit.auditor.bounds.weighted_bounds import (
    BETTING,
    EMPIRICAL_BERNSTEIN,
    WeightedBound,
    betting_bound,
    betting_lower_bound,
    betting_sequence,
    empirical_bernstein_bound,
    log_capital,
    privacy_lower_bounds,
)

LAMBDA = 0.1  # weight of the original law in the defensive mixture
RARE = math.log(5e5)  # threshold t with P(S) = e^{-t}/2 = 1e-6


def probability(t):
    return math.exp(-t) / 2.0


def weighted_hits(rng, size, t):
    """``Y = w 1{X >= t}`` for runs from the defensive mixture shifted to ``t + 1``."""
    shift = t + 1.0
    from_p = rng.random(size) < LAMBDA
    x = rng.laplace(0.0, 1.0, size) + np.where(from_p, 0.0, shift)
    # p/q with p̃/p = exp(|x| − |x − shift|) for the two Laplace densities.
    weight = 1.0 / (LAMBDA + (1.0 - LAMBDA) * np.exp(np.abs(x) - np.abs(x - shift)))
    return weight * (x >= t)


def bound_on_event(t):
    """``sup_{x >= t} p/q``: ``|x| − |x − shift|`` is ``2x − shift`` on ``[t, shift]``, rising."""
    return (1.0 + 1e-12) / (LAMBDA + (1.0 - LAMBDA) * math.exp(2.0 * t - (t + 1.0)))


def quantile(repetitions, alpha):
    """99.9 % quantile of Binomial(repetitions, alpha): the most wrong sides a test allows."""
    return int(stats.binom.ppf(0.999, repetitions, alpha))


BOUNDS = {
    "betting": lambda y, b, a: betting_bound(y, weight_bound=b, alpha=a),
    "betting-horizon": lambda y, b, a: betting_bound(
        y, weight_bound=b, alpha=a, horizon=y.shape[-1]
    ),
    "empirical-bernstein": lambda y, b, a: empirical_bernstein_bound(y, weight_bound=b, alpha=a),
}


@pytest.mark.parametrize("method", sorted(BOUNDS))
@pytest.mark.parametrize(
    ("t", "tight"),
    [(RARE, True), (0.5, False)],
    ids=["P=1e-6,B=sup_S(p/q)", "P=0.30,B=1/lambda"],
)
def test_each_one_sided_bound_covers_the_exact_probability(method, t, tight):
    # 2000 independent repetitions of 300 runs, α = 0.1 for each one-sided bound.
    # Measured wrong sides (low > P, high < P) of 2000, allowed 243 each (expected <= 200):
    #   P=1e-6, B=sup: betting 19/18, betting-horizon 28/32, empirical Bernstein 0/0;
    #   P=0.30, B=1/λ: betting 1/0, betting-horizon 7/0, empirical Bernstein 0/0.
    repetitions, runs, alpha = 2000, 300, 0.1
    rng = np.random.default_rng([43, int(1000 * t)])
    y = weighted_hits(rng, (repetitions, runs), t)
    bound = BOUNDS[method](y, bound_on_event(t) if tight else 1.0 / LAMBDA, alpha)
    truth = probability(t)
    assert bound.low.shape == bound.high.shape == (repetitions,)
    assert np.all(bound.low <= bound.high)
    assert int(np.sum(bound.low > truth)) <= quantile(repetitions, alpha)
    assert int(np.sum(bound.high < truth)) <= quantile(repetitions, alpha)


def test_rare_event_is_bracketed_tightly_where_plain_sampling_sees_nothing():
    # P(S) = 1e-6 from 20 000 runs, α = 0.05 each side. Importance sampling with
    # B = sup_S p/q: measured betting [0.990, 1.046] × P (relative width 0.056), empirical
    # Bernstein [0.983, 1.030] × P (0.047). Plain sampling of the same number of runs sees S
    # with probability 2 %: here 0 hits, Clopper–Pearson [0, 1.5e-4], 143 times the betting
    # upper bound. With the always-valid B = 1/λ the lower bound is 0 and the upper 3.0e-3:
    # no upper bound can go below about B ln(1/α)/n = 1.5e-3 (the module docstring says why).
    runs, alpha = 20_000, 0.05
    truth = probability(RARE)
    rng = np.random.default_rng(4301)
    y = weighted_hits(rng, runs, RARE)
    tight = betting_bound(y, weight_bound=bound_on_event(RARE), alpha=alpha)
    assert tight.low <= truth <= tight.high
    assert (tight.high - tight.low) / truth < 0.1
    eb = empirical_bernstein_bound(y, weight_bound=bound_on_event(RARE), alpha=alpha)
    assert eb.low <= truth <= eb.high
    assert (eb.high - eb.low) / truth < 0.1

    hits = int(np.sum(rng.laplace(0.0, 1.0, runs) >= RARE))
    assert hits == 0
    assert one_sided_lower(hits, runs, alpha) == 0.0
    plain_high = one_sided_upper(hits, runs, alpha)
    assert plain_high > 100 * tight.high

    loose = betting_bound(y, weight_bound=1.0 / LAMBDA, alpha=alpha)
    assert loose.low <= truth <= loose.high
    assert loose.high > (1.0 / LAMBDA) * math.log(1.0 / alpha) / runs / 2


def test_a_million_runs():
    # Measured: [0.9941, 1.0044] × P, relative width 0.010 (0.26 s for both bounds on an
    # idle core; empirical Bernstein on the same runs: width 0.006 in 0.006 s).
    rng = np.random.default_rng(4302)
    truth = probability(RARE)
    y = weighted_hits(rng, 1_000_000, RARE)
    bound = betting_bound(y, weight_bound=bound_on_event(RARE), alpha=0.05)
    assert bound.samples == 1_000_000
    assert bound.low <= truth <= bound.high
    assert (bound.high - bound.low) / truth < 0.02


@pytest.mark.parametrize("weighted", [False, True], ids=["bernoulli", "weighted"])
@pytest.mark.parametrize("horizon", [None, 5000])
def test_returned_ends_are_rejected_and_the_search_is_tight(weighted, horizon):
    # low is a candidate mean the lower capital rejects (K >= 1/α), the one just above it
    # (relative 1e-5) is not; the same for high. So the bound errs on the safe side, by
    # no more than the search's tolerance (1e-7 relative).
    rng = np.random.default_rng(4303)
    alpha = 0.01
    if weighted:
        y, b = weighted_hits(rng, 5000, RARE), bound_on_event(RARE)
    else:
        y, b = (rng.random(5000) < 0.03).astype(float), 1.0
    bound = betting_bound(y, weight_bound=b, alpha=alpha, horizon=horizon)
    threshold = math.log(1.0 / alpha)

    def final(mean, side):
        return log_capital(y, mean, weight_bound=b, alpha=alpha, side=side, horizon=horizon)[-1]

    assert final(bound.low, "lower") >= threshold > final(bound.low * (1 + 1e-5), "lower")
    assert final(bound.high, "upper") >= threshold > final(bound.high * (1 - 1e-5), "upper")


def test_the_sequence_is_right_at_every_look_at_once():
    # 1000 paths of 2000 runs, bounds read at 25 looks from 10 to 2000, α = 0.05 each side.
    # Measured: paths whose lower bound ever exceeds P: 31; whose upper bound ever falls
    # below P: 21; whose lower (upper) capital at P ever reaches 1/α, at any of the 2000
    # times: 35 (28). Allowed 73 each (expected <= 50). The looks' crossings are among the
    # capital's.
    paths, runs, alpha = 1000, 2000, 0.05
    looks = sorted({int(n) for n in np.geomspace(10, runs, 25)})
    truth = probability(RARE)
    b = bound_on_event(RARE)
    y = weighted_hits(np.random.default_rng(4304), (paths, runs), RARE)
    sequence = betting_sequence(y, looks, weight_bound=b, alpha=alpha)
    assert [bound.samples for bound in sequence] == looks
    lows = np.stack([bound.low for bound in sequence])
    highs = np.stack([bound.high for bound in sequence])
    assert np.all(np.diff(lows, axis=0) >= 0) and np.all(np.diff(highs, axis=0) <= 0)
    crossed_low = np.any(lows > truth, axis=0)
    crossed_high = np.any(highs < truth, axis=0)
    threshold = math.log(1.0 / alpha)
    capital_low = np.any(
        log_capital(y, truth, weight_bound=b, alpha=alpha, side="lower") >= threshold, axis=1
    )
    capital_high = np.any(
        log_capital(y, truth, weight_bound=b, alpha=alpha, side="upper") >= threshold, axis=1
    )
    assert not np.any(crossed_low & ~capital_low)
    assert not np.any(crossed_high & ~capital_high)
    allowed = quantile(paths, alpha)
    for crossed in (crossed_low, crossed_high, capital_low, capital_high):
        assert int(crossed.sum()) <= allowed


def test_fixed_n_bounds_read_at_every_look_cross_too_often():
    # The test above has power: Clopper–Pearson at α = 0.05, read at the same 25 looks on
    # Bernoulli(0.3) paths, crosses on 286 of 1000 paths (allowed 73); the betting sequence
    # on the same paths on 28.
    paths, runs, alpha, p = 1000, 2000, 0.05, 0.3
    looks = sorted({int(n) for n in np.geomspace(10, runs, 25)})
    y = (np.random.default_rng(4305).random((paths, runs)) < p).astype(float)
    hits = np.cumsum(y, axis=1)[:, np.array(looks) - 1]
    fixed_n = np.asarray(one_sided_lower(hits, np.array(looks), alpha))
    naive = int(np.sum(np.any(fixed_n > p, axis=1)))
    sequence = betting_sequence(y, looks, weight_bound=1.0, alpha=alpha)
    betting = int(np.sum(sequence[-1].low > p))  # running maximum: the last look has all
    assert naive > quantile(paths, alpha) >= betting


@pytest.mark.parametrize("p", [0.5, 0.05, 0.002])
def test_on_bernoulli_data_betting_is_within_a_small_factor_of_clopper_pearson(p):
    # 20 sequences of 10 000 Bernoulli(p), α = 0.05 each side: width ratio to the
    # Clopper–Pearson interval (each end one-sided at α), measured medians
    #   p = 0.5: anytime 2.94, horizon-tuned 1.48;  p = 0.05: 2.30, 1.47;
    #   p = 0.002: 1.69, 1.46  (empirical Bernstein: 1.75, 1.86, 2.53).
    # 1.48 is sqrt(2 ln(1/α)) / z_{1−α} = 2.45 / 1.645, the price of any Chernoff-type
    # (supermartingale) bound at α = 0.05; it falls towards 1 as α does.
    runs, alpha = 10_000, 0.05
    y = (np.random.default_rng([4306, int(p * 1000)]).random((20, runs)) < p).astype(float)
    hits = y.sum(axis=1)
    exact = one_sided_upper(hits, runs, alpha) - one_sided_lower(hits, runs, alpha)
    anytime = betting_bound(y, weight_bound=1.0, alpha=alpha)
    tuned = betting_bound(y, weight_bound=1.0, alpha=alpha, horizon=runs)
    anytime_ratio = np.median((anytime.high - anytime.low) / exact)
    tuned_ratio = np.median((tuned.high - tuned.low) / exact)
    assert 1.0 < tuned_ratio < 1.6
    assert 1.0 < anytime_ratio < 3.5
    assert np.all(anytime.low <= hits / runs) and np.all(hits / runs <= anytime.high)


def test_privacy_lower_bounds_use_the_clopper_pearson_formulas():
    p = WeightedBound(0.02, 0.03, 0.99, 1000, 10.0, BETTING, 0.025)
    q = WeightedBound(0.001, 0.004, 0.995, 1000, 10.0, EMPIRICAL_BERNSTEIN, 0.002)
    bounds = privacy_lower_bounds(p, q, epsilon=1.0, delta=1e-3)
    assert bounds.epsilon_lower == epsilon_lower_bound(0.02, 0.004, 1e-3)
    assert bounds.epsilon_lower == pytest.approx(math.log(0.019 / 0.004))
    assert bounds.delta_lower == delta_lower_bound(0.02, 0.004, 1.0)
    assert bounds.level == pytest.approx(0.985)
    nothing = privacy_lower_bounds(q, p, epsilon=1.0, delta=1e-3)
    assert nothing.epsilon_lower == 0.0 and nothing.delta_lower == 0.0


def test_a_single_value_and_a_batch_give_the_same_bound():
    y = weighted_hits(np.random.default_rng(4307), (3, 200), 1.0)
    batch = betting_bound(y, weight_bound=1.0 / LAMBDA, alpha=0.05)
    one = betting_bound(y[1], weight_bound=1.0 / LAMBDA, alpha=0.05)
    assert isinstance(one.low, float) and batch.low[1] == one.low and batch.high[1] == one.high
    assert one.mean == pytest.approx(y[1].mean()) and one.alpha == pytest.approx(0.05)
    # All zeros: nothing rejects a mean of 0; all at the bound: nothing rejects B.
    assert betting_bound(np.zeros(50), weight_bound=2.0, alpha=0.05).low == 0.0
    assert betting_bound(np.full(50, 2.0), weight_bound=2.0, alpha=0.05).high == 2.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: betting_bound([0.5, 11.0], weight_bound=10, alpha=0.05), "weight_bound"),
        (lambda: betting_bound([0.5, -0.1], weight_bound=10, alpha=0.05), r"values\[1\]"),
        (lambda: betting_bound([0.5, math.nan], weight_bound=10, alpha=0.05), "values must lie"),
        (lambda: betting_bound([], weight_bound=10, alpha=0.05), "at least one sample"),
        (lambda: betting_bound(["a"], weight_bound=10, alpha=0.05), "values must be"),
        (lambda: betting_bound([0.5], weight_bound=0, alpha=0.05), "weight_bound must be"),
        (lambda: betting_bound([0.5], weight_bound=-1, alpha=0.05), "weight_bound must be"),
        (lambda: betting_bound([0.5], weight_bound=math.inf, alpha=0.05), "weight_bound"),
        (lambda: betting_bound([0.5], weight_bound=1, alpha=0), "alpha must be"),
        (lambda: betting_bound([0.5], weight_bound=1, alpha=1.0), "alpha must be"),
        (lambda: betting_bound([0.5], weight_bound=1, alpha=0.05, horizon=0), "horizon"),
        (lambda: empirical_bernstein_bound([0.5], weight_bound=1, alpha=0.05), "at least 2"),
        (lambda: empirical_bernstein_bound([0.5, 2], weight_bound=1, alpha=0.05), "values"),
        (lambda: betting_sequence([0.5, 0.2], [2, 1], weight_bound=1, alpha=0.05), "looks"),
        (lambda: betting_sequence([0.5, 0.2], [3], weight_bound=1, alpha=0.05), "looks"),
        (
            lambda: log_capital([0.5], 2.0, weight_bound=1, alpha=0.05, side="lower"),
            "mean must lie",
        ),
        (lambda: log_capital([0.5], 0.2, weight_bound=1, alpha=0.05, side="both"), "side"),
        (lambda: WeightedBound(0, 1, 1.5, 10, 1.0, BETTING, 0.5), "level"),
        (lambda: WeightedBound(0, 1, 0.9, 10, 1.0, "bootstrap", 0.5), "method"),
        (lambda: privacy_lower_bounds((0, 1), None, epsilon=1, delta=0), "p must be"),
    ],
)
def test_bad_input_is_refused_with_the_argument_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_weight_above_the_bound_says_how_to_fix_it():
    with pytest.raises(ValueError) as error:
        betting_bound(np.array([[0.1, 0.2], [0.3, 12.0]]), weight_bound=10, alpha=0.05)
    text = str(error.value)
    assert "values[(1, 1)] = 12.0" in text and "1/λ" in text and "supremum of p/q" in text


# ----------------------------------------------------------------- lower bound, no upper bound


def test_betting_lower_bound_matches_betting_bound_when_the_scale_is_the_weight_bound():
    rng = np.random.default_rng(7)
    y = np.where(rng.random(5_000) < 0.3, rng.uniform(0.0, 2.0, 5_000), 0.0)
    full = betting_bound(y, weight_bound=2.0, alpha=1e-3, horizon=y.size)
    assert betting_lower_bound(y, scale=2.0, alpha=1e-3, horizon=y.size) == full.low


def test_betting_lower_bound_needs_no_upper_bound_and_a_small_scale_resolves_rare_means():
    # Weighted hits of about 1e-7: tuned in units of 1/λ = 10 the bound stays 0; tuned in the
    # unit of a hit it is within a few per cent of the mean, values above the scale included.
    rng = np.random.default_rng(8)
    n = 50_000
    y = np.where(rng.random(n) < 0.5, rng.exponential(1e-7, n), 0.0)
    assert betting_bound(y, weight_bound=10.0, alpha=1e-3, horizon=n).low == 0.0
    low = betting_lower_bound(y, scale=1e-7, alpha=1e-3, horizon=n)
    assert 0.9 * 0.5e-7 < low < 0.5e-7


def test_betting_lower_bound_covers_an_unbounded_mean():
    # Y = Exp(1) · Bernoulli(0.01), mean 0.01, no upper bound: over 200 seeds the bound at
    # α = 0.05 lies above the mean Binomial(200, 0.05)-often at most; its 99.9 % quantile is 21.
    rng = np.random.default_rng(9)
    wrong = 0
    for _ in range(200):
        y = np.where(rng.random(2_000) < 0.01, rng.exponential(1.0, 2_000), 0.0)
        wrong += betting_lower_bound(y, scale=1.0, alpha=0.05, horizon=2_000) > 0.01
    assert wrong <= 21


def test_betting_lower_bound_refuses_negative_values():
    with pytest.raises(ValueError, match=">= 0"):
        betting_lower_bound(np.array([0.1, -0.2]), scale=1.0, alpha=0.05)
