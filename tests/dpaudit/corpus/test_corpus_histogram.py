"""The histogram bugs: losses by scipy, the censored geometric by its trial loop, samplers."""

import math
from collections import Counter

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from scipy import stats

from dpaudit.corpus import entry, histogram
from dpaudit.corpus import exact as X
from dpaudit.corpus.histogram import geometric
from mechanisms.discrete_laplace import discrete_laplace_ratio


def test_binary_histogram_loss_is_twice_epsilon_and_the_sampler_spends_it():
    item = entry("histogram-binary-substitute")
    numerator = discrete_laplace_ratio(histogram.BINARY_EPSILON)
    # Closed form: the pmf of each count moves by 1/r, r = numerator / 2^53.
    assert item.true.compute()[0] == pytest.approx(2 * math.log(2.0**53 / numerator), rel=1e-12)
    # P(out = (1, 0) | counts (1, 0)) = pmf(0)²: binomial test, false failure 1e-6.
    n = 400_000
    out = item.build().sample(np.array(item.pair[0]), n, np.random.default_rng(8))
    hits = int(((out[:, 0] == 1) & (out[:, 1] == 0)).sum())
    p = float(histogram.discrete_laplace_pmf(0, numerator) ** 2)
    assert stats.binomtest(hits, n, p).pvalue > 1e-6


def test_smart_sum_releases_exact_block_sums_and_its_twin_noises_them():
    item = entry("smart-sum-noiseless-block")
    counts = np.array((2, 1, 0, 3, 1))
    n = 50_000
    out = item.build().sample(counts, n, np.random.default_rng(42))
    # Every second release is the block's exact sum; the first is q₀ + Lap(1/ε) (KS test).
    assert (out[:, 1] == 3.0).all() and (out[:, 3] == 3.0).all()
    scale = 1 / histogram.SMART_EPSILON
    assert stats.kstest(out[:, 0] - 2, stats.laplace(scale=scale).cdf).pvalue > 1e-6
    # Within a block the running sum continues from the last release: out₂ − out₁ = q₂ + η.
    assert stats.kstest(out[:, 2] - out[:, 1], stats.laplace(scale=scale).cdf).pvalue > 1e-6
    assert item.true.compute() == (math.inf, 1.0)
    # The twin: integer releases, block sums noised with discrete Laplace of scale 1/ε.
    twin = item.twin().sample(counts, n, np.random.default_rng(43))
    assert (twin == np.round(twin)).all()
    r = math.exp(-histogram.SMART_EPSILON)
    variance = 2 * r / (1 - r) ** 2
    assert np.var(twin[:, 1] - 3) == pytest.approx(variance, rel=0.05)
    assert (twin[:, 1] != 3).mean() > 0.3


def test_partial_sum_loss_by_scipy_and_the_samplers_scales():
    item = entry("partial-sum-half-scale")
    eps = histogram.PARTIAL_EPSILON
    law = stats.laplace(scale=1 / (2 * eps))
    assert law.logpdf(-5.0) - law.logpdf(-6.0) == pytest.approx(item.true.epsilon, rel=1e-12)
    assert item.true.epsilon == pytest.approx(2 * item.claim.epsilon)
    counts = np.array(item.pair[0])
    values = item.build().sample(counts, 50_000, np.random.default_rng(32))
    assert (
        stats.kstest(values, stats.laplace(loc=counts.sum(), scale=1 / (2 * eps)).cdf).pvalue > 1e-6
    )
    # The twin: integer noise of scale 1/ε, so every release is an integer.
    twin = item.twin().sample(counts, 50_000, np.random.default_rng(33))
    assert (twin == np.round(twin)).all()
    assert np.var(twin) == pytest.approx(2 / eps**2, rel=0.05)


def test_privbayes_loss_by_scipy_and_no_output_exceeds_it():
    item = entry("privbayes-count-scale-over-n")
    (a, b) = item.pair
    rows = sum(a)
    scale = 2 / (rows * histogram.PRIVBAYES_EPSILON)
    law = stats.laplace(scale=scale)

    def log_law(counts, y0, y1):
        # Cell 0 a density, cell 1 clipped to 0 (its mass P(q₁ + L <= 0)) or a density.
        first = law.logpdf(y0 - counts[0])
        second = law.logcdf(-counts[1]) if y1 == 0 else law.logpdf(y1 - counts[1])
        return first + second

    # The witness point, by scipy in doubles: the closed form nε/(d − k) = 2.
    loss = log_law(a, 25.0, 0) - log_law(b, 25.0, 0)
    assert loss == pytest.approx(item.true.epsilon, rel=1e-12)
    assert item.true.epsilon == pytest.approx(rows * item.claim.epsilon, rel=1e-12)
    # Nowhere on a grid of outputs does the log ratio exceed 2/b (cells 2 and 3 cancel).
    grid = np.linspace(0.0, 30.0, 61)  # y1 = 0 is the clipped mass
    worst = max(
        abs(log_law(a, y0, y1) - log_law(b, y0, y1))
        for y0 in np.linspace(0.5, 30.0, 60)
        for y1 in grid
    )
    assert worst == pytest.approx(2 / scale, rel=1e-9)
    # The scale goes with n: ten rows give 2/(10ε) = 2, a loss of 10ε.
    assert histogram.privbayes_point_loss(((10, 0, 0, 0), (9, 1, 0, 0)), 2.0) == pytest.approx(1.0)


def test_privbayes_sampler_scale_and_clipping_and_the_twins_integer_noise():
    item = entry("privbayes-count-scale-over-n")
    counts = np.array((6, 0, 3, 1))  # n = 10 rows: scale 2/(10 · 0.1) = 2
    n = 100_000
    out = item.build().sample(counts, n, np.random.default_rng(44))
    # Cell 0: Laplace(6, 2), clipped below 0 (P = e^{−3}/2); KS above the clip.
    kept = out[:, 0][out[:, 0] > 0]
    cdf = stats.laplace(loc=6, scale=2).cdf
    assert stats.kstest(kept, lambda x: (cdf(x) - cdf(0)) / (1 - cdf(0))).pvalue > 1e-6
    # Cell 1 (count 0) is exactly 0 with P = 1/2 (binomial test, false failure 1e-6).
    assert stats.binomtest(int((out[:, 1] == 0).sum()), n, 0.5).pvalue > 1e-6
    # The twin: integer releases, discrete Laplace of scale 2/ε = 20 (variance 2r/(1 − r)²).
    far = np.array((400, 400, 400, 400))
    twin = item.twin().sample(far, n, np.random.default_rng(45))
    assert (twin == np.round(twin)).all()
    r = math.exp(-histogram.PRIVBAYES_EPSILON / 2)
    assert np.var(twin[:, 0] - 400) == pytest.approx(2 * r / (1 - r) ** 2, rel=0.05)


def _censored_law_by_the_trial_loop(value, *, clamp_output, clamp_input):
    """The law of SmartNoise's geometric release by walking its trial loop: the zero branch,
    then for each sign the survival after t failed Bernoulli(1 − α) trials (no closed form)."""
    lower, upper = histogram.GEOMETRIC_BOUNDS
    trials = upper - lower
    value = min(max(value, lower), upper) if clamp_input else value
    law = {}

    def add(out, p):
        out = min(max(out, lower), upper) if clamp_output else out
        law[out] = law.get(out, 0) + p

    with mpmath.workdps(30):
        alpha = mpmath.exp(-mpmath.mpf(histogram.GEOMETRIC_EPSILON))
        zero = (1 - alpha) / (1 + alpha)
        add(value, zero)
        for sign in (1, -1):
            alive = (1 - zero) / 2  # this sign, no success yet
            for t in range(1, trials + 1):
                add(value + sign * t, alive * (1 - alpha))
                alive *= alpha
            add(value + sign * trials, alive)  # no success in `trials` trials: censored
    return law


CLAMPS = {
    "censored": {"clamp_output": False, "clamp_input": False},
    "input-unclamped": {"clamp_output": True, "clamp_input": False},
    "clamped": {"clamp_output": True, "clamp_input": True},
}


@pytest.mark.parametrize("clamps", CLAMPS.values(), ids=CLAMPS.keys())
@pytest.mark.parametrize("value", [0, 1, 5, 10, 11, 14])
def test_censored_geometric_law_by_the_trial_loop(value, clamps):
    law = histogram.censored_geometric_law(value, **clamps)
    loop = _censored_law_by_the_trial_loop(value, **clamps)
    assert set(law) == set(loop)
    assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** (2 - X.DIGITS)
    for out, p in law.items():
        assert abs(p - loop[out]) < mpmath.mpf(10) ** (2 - X.DIGITS), out


@pytest.mark.parametrize(
    "name, bug",
    [
        ("smartnoise-geometric-censored", "censored"),
        ("smartnoise-geometric-input-unclamped", "input-unclamped"),
    ],
)
def test_smartnoise_geometric_samplers_fit_their_laws(name, bug):
    # Bug and twin on both counts of the witness pair, 100k draws each (chi-square, false
    # failure 1e-6 per check, four checks a parameter).
    item = entry(name)
    rng = np.random.default_rng(8)
    for mech, clamps in ((item.build(), CLAMPS[bug]), (item.twin(), CLAMPS["clamped"])):
        for counts in item.pair:
            law = histogram.censored_geometric_law(counts[0], **clamps)
            values = mech.sample(np.array(counts), 100_000, rng)
            assert np.array_equal(values, np.round(values))  # integer outputs
            observed = Counter((int(v),) for v in values)
            assert_sampler_fits({(k,): p for k, p in law.items()}, observed)


def test_min_equal_to_max_releases_the_count_itself():
    # PR 318's circumvention: zero trials, so zero noise whatever the uniform says.
    noise = histogram.censored_geometric(1000, np.random.default_rng(0), alpha=0.9, trials=0)
    assert not noise.any()


def test_clamped_geometric_keeps_its_claim_on_every_count_and_the_input_clamp_is_needed():
    # The twin: ε <= 0.1 and δ = 0 on every pair (v + 1, v), v = 0..24 (exact laws). Without
    # the input clamp the claim holds within the bounds and fails when the larger count is
    # above them by at most R = 10 (further out, both release the upper bound alone).
    lower, upper = histogram.GEOMETRIC_BOUNDS
    for v in range(25):
        pair = ((v + 1,), (v,))
        epsilon, delta = geometric._law_guarantee(pair, **CLAMPS["clamped"])
        assert epsilon <= histogram.GEOMETRIC_EPSILON * (1 + 1e-12) and delta == 0
        epsilon, delta = geometric._law_guarantee(pair, **CLAMPS["input-unclamped"])
        broken = upper < v + 1 <= upper + (upper - lower)
        assert (math.isinf(epsilon) and delta > 0.19) is broken, v


REGRESSION_NAMES = (
    "diffprivlib-regression-diagonal-unnoised",
    "diffprivlib-regression-diagonal-asymmetric",
)


def _folded_laplace_cdf(y, centre, scale):
    # |centre + L| <= y  ⟺  −y − centre <= L <= y − centre.
    law = stats.laplace(scale=scale)
    return law.cdf(y - centre) - law.cdf(-y - centre)


def test_regression_diagonal_is_the_folded_laplace_of_the_square_sum():
    # Σ x² on (−2, 3): x = −2, 0, 0, 2, 3 gives 4 + 0 + 4 + 9 = 17; scale 4 / share (KS test,
    # false failure 1e-6). With issue 105's bounds (0, 100) the release is Σ x² itself.
    asymmetric, unnoised = (entry(name) for name in reversed(REGRESSION_NAMES))
    out = asymmetric.build().sample(np.array((1, 0, 2, 0, 1, 1)), 100_000, np.random.default_rng(3))
    scale = 4 / histogram.REGRESSION_SHARE
    assert (out >= 0).all()
    assert stats.kstest(out[:, 0], lambda y: _folded_laplace_cdf(y, 17, scale)).pvalue > 1e-6
    out = unnoised.build().sample(np.array((1, 2, 0, 1, 3)), 1_000, np.random.default_rng(3))
    assert (out == 2 * 25**2 + 75**2 + 3 * 100**2).all()


def test_regression_diagonal_loss_by_scipy_is_nine_over_the_scale():
    item = entry("diffprivlib-regression-diagonal-asymmetric")
    scale = 4 / histogram.REGRESSION_SHARE
    y = np.linspace(0, 200, 400_001)
    law = stats.laplace(scale=scale)
    first, second = (law.pdf(y - c) + law.pdf(-y - c) for c in (4, 13))
    loss = np.log(first / second)
    # The folded densities are in ratio e^{9/b} on [0, 4], and nearer 1 everywhere else.
    assert loss.max() == pytest.approx(9 / scale, rel=1e-12)
    assert np.abs(loss[y > 4.001]).max() < 9 / scale - 1e-6
    assert item.true.epsilon == pytest.approx(9 / scale, rel=1e-12)
    assert item.true.compute()[0] == pytest.approx(9 / scale, rel=1e-12)


def _folded_discrete_laplace_log_pmf(y, centre, numerator):
    # log P(|centre + Z| = y), Z discrete Laplace with r = numerator / 2^53 (float64 logs).
    r = numerator / 2.0**53

    def log_p(k):
        return np.log1p(-r) - np.log1p(r) + np.abs(k) * np.log(r)

    fold = np.where(y > 0, log_p(-y - centre), -np.inf)
    return np.logaddexp(log_p(y - centre), fold)


@pytest.mark.parametrize(
    ("name", "bounds"),
    [
        (REGRESSION_NAMES[0], histogram.REGRESSION_ZERO_BOUNDS),
        (REGRESSION_NAMES[1], histogram.REGRESSION_ASYMMETRIC_BOUNDS),
    ],
    ids=REGRESSION_NAMES,
)
def test_regression_twin_keeps_its_claim_on_every_added_record(name, bounds):
    twin = entry(name).twin()
    values = range(bounds[0], bounds[1] + 1, bounds[2])
    sensitivity = max(bounds[0] ** 2, bounds[1] ** 2)
    numerator = discrete_laplace_ratio(histogram.REGRESSION_SHARE / sensitivity)
    # Beyond both centres the two pmfs are in ratio r^{−Δ}: exact over 0..centre + Δ + 2.
    for centre in (0, 1, 4, 13, 2 * sensitivity):
        for x in values:
            y = np.arange(centre + x * x + 3)
            low = _folded_discrete_laplace_log_pmf(y, centre, numerator)
            high = _folded_discrete_laplace_log_pmf(y, centre + x * x, numerator)
            assert np.abs(low - high).max() <= histogram.REGRESSION_SHARE + 1e-9
    # Its sampler: integer releases of that law (chi-square, false failure 1e-6).
    counts = np.zeros(len(values), dtype=np.int64)
    counts[-1] = 1
    out = twin.sample(counts, 100_000, np.random.default_rng(5))
    observed = Counter((int(v),) for v in out[:, 0])
    support = np.arange(int(out.max()) + 1)
    log_pmf = _folded_discrete_laplace_log_pmf(support, sensitivity, numerator)
    law = {(int(v),): math.exp(p) for v, p in zip(support, log_pmf, strict=True)}
    law[(int(support[-1]) + 1,)] = 1 - sum(law.values())  # the tail beyond the largest draw
    assert_sampler_fits(law, observed)


def test_regression_release_names_the_domain_size_it_needs():
    item = entry("diffprivlib-regression-diagonal-asymmetric")
    with pytest.raises(ValueError, match="domain_size=6"):
        item.build().sample(np.array((1, 0, 2)), 10, np.random.default_rng(0))
    assert item.audit_options == {"domain_size": 6}
