"""The corpus of real bugs: entries build, sample and cite; true guarantees match exact routes.

The slow tests run the default audit (seeds 0-2) on every entry and its correct twin.
"""

import itertools
import json
import math
from collections import Counter
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from scipy import integrate, optimize, special, stats

import dpaudit
from dpaudit.auditor.blackbox import BatchedBlackBox, validate_batch
from dpaudit.cli import main
from dpaudit.corpus import (
    CORPUS,
    entry,
    float_noise,
    histogram,
    noisy_max,
    partition_selection,
    sparse_vector,
)
from dpaudit.corpus import exact as X
from dpaudit.neighbours import is_neighbour
from mechanisms import MixedBatch
from mechanisms.discrete_laplace import discrete_laplace_ratio

FAMILIES = {"sparse vector", "noisy max", "histogram", "partition selection", "float noise"}


def test_corpus_covers_the_families_and_names_are_unique():
    assert len(CORPUS) >= 12
    assert len({e.name for e in CORPUS}) == len(CORPUS)
    assert {e.family for e in CORPUS} == FAMILIES
    with pytest.raises(KeyError, match="no corpus entry"):
        entry("no-such-bug")


@pytest.mark.parametrize("item", CORPUS, ids=lambda e: e.name)
def test_entry_cites_its_source_and_states_claimed_and_true_guarantees(item):
    # A source names a repository with an issue/PR or a file, or a paper with its algorithm.
    assert any(word in item.source for word in ("issue", "PR", "Alg.", ".py", "examples/"))
    assert item.true.basis.split(":")[0] in ("exact", "cited")
    claim = item.claim
    # The bug is a bug: the true ε exceeds the claim at the claimed δ, or the true δ at the
    # claimed ε exceeds the claimed δ.
    assert item.true.epsilon > claim.epsilon or item.true.delta > claim.delta
    assert is_neighbour(item.pair[0], item.pair[1], claim.neighbours)
    assert item.twin is None or item.twin().claim.neighbours == claim.neighbours


def _check_batch(mech, counts, size, rng):
    batch = mech.sample(np.array(counts), size, rng)
    if mech.value_width:
        batch = batch if isinstance(batch, MixedBatch) else MixedBatch(np.zeros((size, 0)), batch)
        assert batch.values.shape == (size, mech.value_width)
        assert batch.items.shape == (size, mech.width)
        items = batch.items
    else:
        items = np.asarray(batch)
    validate_batch(items, domain_size=len(counts), name=mech.name)
    return batch


@pytest.mark.parametrize("item", CORPUS, ids=lambda e: e.name)
def test_entry_and_twin_build_and_sample(item):
    rng = np.random.default_rng(3)
    for build in (item.build, item.twin):
        if build is None:
            continue
        mech = build()
        assert isinstance(mech, BatchedBlackBox)
        for counts in item.pair:
            _check_batch(mech, counts, 500, rng)


EXACT = [e for e in CORPUS if e.true.compute is not None]


@pytest.mark.parametrize("item", EXACT, ids=lambda e: e.name)
def test_stated_true_guarantee_is_the_exact_computation(item):
    epsilon, delta = item.true.compute()
    if "epsilon" not in item.true.estimated:
        assert epsilon == pytest.approx(item.true.epsilon, rel=1e-9, abs=1e-12)
    if "delta" not in item.true.estimated:
        assert delta == pytest.approx(item.true.delta, rel=1e-9, abs=1e-15)


# ---------------------------------------------------------------------------
# Independent routes to the exact numbers.


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("m", [-3, 0, 1, 5, 10])
def test_discrete_laplace_tail_series_against_closed_form(m, scale):
    with X.working_precision():
        r = mpmath.exp(-1 / mpmath.mpf(scale))
        # P(Z >= m) = r^m / (1 + r) for m >= 1; 1 − P(Z <= m − 1) = 1 − r^{1−m}/(1 + r) otherwise.
        closed = r**m / (1 + r) if m >= 1 else 1 - r ** (1 - m) / (1 + r)
        # Agreement to all but the last few of the working digits.
        assert abs(X.discrete_laplace_tail(m, scale) / closed - 1) < mpmath.mpf(10) ** (
            3 - X.DIGITS
        )


def test_cutoff_svt_law_sums_to_one_and_matches_its_sampler():
    counts = (0, 1, 2, 0, 1)
    scales = sparse_vector._LC_SCALES
    probabilities = sparse_vector.first_above_law(counts, **scales)
    assert abs(mpmath.fsum(probabilities) - 1) < mpmath.mpf(10) ** (3 - X.DIGITS)
    law = {(j,): p for j, p in enumerate(probabilities[:-1])} | {(): probabilities[-1]}
    batch = sparse_vector.lee_clifton().sample(np.array(counts), 100_000, np.random.default_rng(5))
    assert_sampler_fits(law, batch)  # chi-square, false failure 1e-6


def test_the_correct_twin_keeps_its_claim_on_the_witness_shape():
    # Lyu–Su–Li Alg. 1 (the twin) on Lee & Clifton's witness shape (5 queries): exact ε <= 0.1,
    # while the bug on the same shape already exceeds it.
    pair = ((0,) * 4 + (1,), (1,) * 4 + (0,))
    twin = {
        "threshold": 0.5,
        "rho_scale": 2 / sparse_vector.EPSILON,
        "nu_scale": 4 / sparse_vector.EPSILON,
    }
    assert sparse_vector._cutoff_epsilon(pair, **twin) <= sparse_vector.EPSILON
    assert sparse_vector._cutoff_epsilon(pair, **sparse_vector._LC_SCALES) > sparse_vector.EPSILON


def test_lee_clifton_witness_against_scipy_quadrature():
    # The ε of the pair is attained at "first above at the last query"; scipy in doubles.
    (a, b), scales = sparse_vector._LC_PAIR, sparse_vector._LC_SCALES
    loss = math.log(_last_above_by_quadrature(a, scales) / _last_above_by_quadrature(b, scales))
    assert loss == pytest.approx(sparse_vector._LC_EPSILON, rel=1e-7)


def _last_above_by_quadrature(counts, scales):
    """P(first above at the last query) of a cut-off-1 sparse vector (threshold 1), by scipy."""
    f = stats.laplace(scale=scales["rho_scale"]).pdf
    F = stats.laplace(scale=scales["nu_scale"]).cdf

    def integrand(r):
        value = f(r) * (1 - F(1.0 + r - counts[-1]))
        for c in counts[:-1]:
            value *= F(1.0 + r - c)
        return value

    return sum(
        integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
        for lo, hi in [(-np.inf, -1.0), (-1.0, 0.0), (0.0, np.inf)]
    )


def _pattern_by_quadrature(counts, above, rho_scale, nu_scale, cuts):
    """P(exactly the queries ``above`` answer ⊤) at threshold 1, by scipy quadrature over ρ.

    The route independent of the corpus's mpmath laws: Laplace densities from scipy,
    ``quad`` on the pieces between ``cuts`` (the integrand's kinks).
    """
    f, F = stats.laplace(scale=rho_scale).pdf, stats.laplace(scale=nu_scale).cdf

    def integrand(r):
        value = f(r)
        for j, c in enumerate(counts):
            below = F(1.0 + r - c)
            value *= (1 - below) if j in above else below
        return value

    return sum(
        integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
        for lo, hi in itertools.pairwise(cuts)
    )


def test_chen_witness_against_scipy_quadrature():
    (a, b), s = sparse_vector._CHEN_PAIR, sparse_vector._CHEN_SCALES
    above = set(sparse_vector._CHEN_OUTCOME)

    def probability(counts):
        return _pattern_by_quadrature(
            counts, above, s["rho_scale"], s["nu_scale"], [-np.inf, -1.0, 0.0, np.inf]
        )

    loss = abs(math.log(probability(a) / probability(b)))
    assert loss == pytest.approx(sparse_vector._CHEN_EPSILON, rel=1e-7)


def test_roth_density_ratio_is_the_tail_closed_form():
    # Far below every count, ρ, the nine "below" answers and the released answer all sit in
    # exponential tails: each of the 10 factors changes by e^{ε/2} exactly.
    assert sparse_vector._roth_exact()[0] == pytest.approx(
        10 * sparse_vector.EPSILON / 2, rel=1e-12
    )


def test_gap_noisy_answer_density_ratio_is_the_tail_closed_form():
    # Far below every count, ρ, the nine "below" answers and the released answer sit in
    # exponential tails: each of the 10 query factors changes by e^{ε/4} (ν ~ Lap(4/ε)).
    assert sparse_vector._bad_gap_exact()[0] == pytest.approx(10 * sparse_vector.EPSILON / 4)


def test_statdp_roth_density_ratio_is_the_tail_closed_form():
    expected = sparse_vector.STATDP_QUERIES * sparse_vector.STATDP_EPSILON / 2
    assert sparse_vector._statdp_isvt4_exact()[0] == pytest.approx(expected, rel=1e-12)


def test_gap_svt_twin_releases_the_exact_integer_gap():
    # The twin's released value is q_j + ν − (t + ρ) >= 0 on integers; no value without an id.
    batch = sparse_vector.gap_svt().sample(
        np.zeros(10, dtype=int), 20_000, np.random.default_rng(4)
    )
    hit = batch.items[:, 0] >= 0
    values = batch.values[:, 0]
    assert np.isnan(values[~hit]).all()
    assert (values[hit] >= 0).all() and (values[hit] == np.round(values[hit])).all()


def test_adaptive_svt_density_against_scipy_and_its_tail_closed_form():
    # Far below every count the ratio is the closed form 9 × 3ε/8 + ε/8 (the stated value).
    eps = sparse_vector.ADAPTIVE_EPSILON
    assert sparse_vector._adaptive_exact()[0] == pytest.approx(9 * 3 * eps / 8 + eps / 8)
    # At a moderate point (first release at query 3, value −1) by scipy quadrature in doubles.
    b1, b3, b2 = 2 / eps, 8 / eps, 4 / eps
    margin, t = sparse_vector.ADAPTIVE_MARGIN, 1.0
    f1, F3, F2 = (
        stats.laplace(scale=b1).pdf,
        stats.laplace(scale=b3).cdf,
        stats.laplace(scale=b2).cdf,
    )
    for counts in ((0, 1, 2, 0), (1, 0, 1, 1)):
        j, v = 3, -1.0

        def integrand(r, counts=counts, j=j):
            out = f1(r)
            for c in counts[:j]:
                out *= F3(margin + t + r - c) * F2(t + r - c)
            return out

        cut = v - margin - t
        mass = integrate.quad(integrand, -np.inf, cut, epsabs=0, epsrel=1e-12, limit=200)[0]
        scipy_density = stats.laplace(scale=b3).pdf(v - counts[j]) * mass
        exact = float(sparse_vector.adaptive_top_density(counts, j, v))
        assert exact == pytest.approx(scipy_density, rel=1e-8)


def test_adaptive_svt_twin_releases_integer_gaps_and_the_bug_negative_answers():
    counts = np.zeros(sparse_vector.QUERIES, dtype=int)
    twin = (
        entry("svt-adaptive-noisy-answer").twin().sample(counts, 20_000, np.random.default_rng(22))
    )
    released = ~np.isnan(twin.values[:, 0])
    assert (twin.values[released, 0] >= 0).all()
    assert (twin.values[released, 0] == np.round(twin.values[released, 0])).all()
    # The bug's top branch releases q + η, negative when the noisy threshold is below −16.
    bug = (
        entry("svt-adaptive-noisy-answer")
        .build()
        .sample(counts, 200_000, np.random.default_rng(23))
    )
    assert (bug.values[:, 0] < 0).any()


def _statdp_hamming_by_its_definition(first, queries):
    # StatDP's iSVT summary as written: zip_longest of the answers with the reference.
    answers = [False] * first + ([True] if first < queries else [])
    reference = [i < queries // 2 for i in range(queries)]
    return sum(a != b for a, b in itertools.zip_longest(answers, reference))


@pytest.mark.parametrize("queries", [4, 5, 10])
def test_statdp_hamming_summary_matches_its_definition(queries):
    for first in range(queries + 1):
        expected = _statdp_hamming_by_its_definition(first, queries)
        assert int(sparse_vector.statdp_hamming(first, queries)) == expected


def test_statdp_isvt3_summary_law_matches_its_sampler_and_scipy():
    scales, (a, b) = sparse_vector._STATDP_LC_SCALES, sparse_vector._STATDP_LC_PAIR
    law = sparse_vector.statdp_summary_law(a, **scales)
    assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** (3 - X.DIGITS)
    values = sparse_vector.statdp_isvt3().sample(np.array(a), 100_000, np.random.default_rng(6))
    assert_sampler_fits({(k,): p for k, p in law.items()}, values.astype(np.int64)[:, None])
    # The witness (summary 3 = first above at the last query) by scipy quadrature in doubles.
    loss = math.log(_last_above_by_quadrature(a, scales) / _last_above_by_quadrature(b, scales))
    assert loss == pytest.approx(entry("svt-lee-clifton-statdp").true.epsilon, rel=1e-7)
    assert loss <= (1 + 6) * sparse_vector.STATDP_EPSILON / 4  # Lyu–Su–Li's bound on Alg. 4


def test_truncated_max_probability_by_integrating_the_density():
    scale = 2 / noisy_max.EPSILON
    for counts in noisy_max._LAPLACE_PAIR:
        for k in (-3, 0, 4):
            low, high = (k - 1, k) if k < 0 else ((-1, 1) if k == 0 else (k, k + 1))
            with X.working_precision():
                mass = mpmath.quad(
                    lambda x, c=counts: noisy_max.laplace_max_density(c, x, scale),
                    sorted({low, high, *[c for c in counts if low < c < high]}),
                )
            assert abs(noisy_max.truncated_max_probability(counts, k, scale) - mass) < 1e-15
    assert noisy_max._truncated_value_exact()[0] == pytest.approx(
        noisy_max.QUERIES * noisy_max.EPSILON / 2, rel=1e-12
    )


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


def test_laplace_max_density_against_derivative_of_its_cdf():
    scale = 2 / noisy_max.EPSILON
    for counts in noisy_max._LAPLACE_PAIR:
        with X.working_precision():

            def cdf(x, counts=counts):
                out = mpmath.mpf(1)
                for c in counts:
                    out *= X.laplace_cdf(x - c, scale)
                return out

            for x in (-3, 0.5, 7):
                derivative = mpmath.diff(cdf, x)
                assert abs(noisy_max.laplace_max_density(counts, x, scale) - derivative) < 1e-15


def test_exponential_max_witness_mass_by_quadrature():
    # P(max of d Exp(2/ε) < 1) as the integral of the density of the maximum.
    e, d = noisy_max.EPSILON, noisy_max.QUERIES
    with X.working_precision():
        lam = mpmath.mpf(e) / 2

        def density(x):
            return d * lam * mpmath.exp(-lam * x) * (1 - mpmath.exp(-lam * x)) ** (d - 1)

        mass = mpmath.quad(density, [0, 1])
    assert float(mass) == pytest.approx(entry("rnm-exponential-max-value").true.delta, rel=1e-12)


def test_opendp_noisy_max_against_quadrature_and_a_direct_conversion():
    item = entry("opendp-noisy-max-zcdp")
    low, high = item.pair
    # P(argmax = 1 | (2, 0)) = ∫ e^{−x} P(X₁ > x + 2) dx for X₀, X₁ ~ Exp(1), by scipy.
    p1 = integrate.quad(lambda x: math.exp(-x) * math.exp(-(x + 2.0)), 0, np.inf)[0]
    assert p1 == pytest.approx(math.exp(-2) / 2, rel=1e-12)
    # The claimed curve at the head: the Canonne–Kamath–Steinke bound minimised over α.
    rho, head = noisy_max.OPENDP_EPSILON**2 / 8, noisy_max.OPENDP_HEAD_EPSILON

    def log_bound(alpha):
        return (
            (alpha - 1) * (alpha * rho - head)
            - math.log(alpha - 1)
            + alpha * math.log1p(-1 / alpha)
        )

    best = optimize.minimize_scalar(
        log_bound, bounds=(1.0001, 20), method="bounded", options={"xatol": 1e-10}
    )
    claimed = math.exp(best.fun)
    assert item.claim.delta == pytest.approx(claimed, rel=1e-6)
    true = 0.5 - math.exp(head) * p1
    assert true == pytest.approx(item.true.delta, rel=1e-9) and true > 1.5 * claimed
    assert math.log((0.5 - claimed) / p1) == pytest.approx(item.true.epsilon, rel=1e-5)
    # The samplers: P(1 | (2, 0)) is e^{−2}/2 (bug) and 1/(1 + e²) (Gumbel twin); binomial
    # tests, false failure 1e-6 each.
    n = 400_000
    for build, p in ((item.build, p1), (item.twin, 1 / (1 + math.exp(2)))):
        out = build().sample(np.array(high), n, np.random.default_rng(19))
        assert stats.binomtest(int((out[:, 0] == 1).sum()), n, p).pvalue > 1e-6
        out = build().sample(np.array(low), n, np.random.default_rng(20))
        assert stats.binomtest(int((out[:, 0] == 1).sum()), n, 0.5).pvalue > 1e-6


def _loss_by_logsumexp(p_counts, q_counts, factor, outcome=0):
    """ln P(outcome | p) / P(outcome | q) of softmax(factor · q) in doubles (scipy)."""
    p, q = (factor * np.asarray(c, dtype=float) for c in (p_counts, q_counts))
    return (p[outcome] - special.logsumexp(p)) - (q[outcome] - special.logsumexp(q))


def test_jam_selection_epsilon_by_mbis_own_conversion():
    # ρ = cdp_rho(1, 1e-9) by bisection on mbi's cdp_delta (Canonne–Kamath–Steinke 2020,
    # Prop. 12, minimised over α here by scipy), then ε = √(8 · 0.2ρ/30).
    def cdp_delta(rho, eps):
        def log_bound(alpha):
            return (alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha)

        best = optimize.minimize_scalar(
            lambda a: log_bound(a) - math.log(a - 1),
            bounds=(1.0001, 1e4),
            method="bounded",
            options={"xatol": 1e-12},
        )
        return math.exp(best.fun)

    rho = optimize.brentq(lambda r: cdp_delta(r, 1.0) - 1e-9, 1e-4, 0.5, xtol=1e-15)
    expected = math.sqrt(8 * rho * noisy_max.JAM_ALPHA / noisy_max.JAM_ROUNDS)
    assert expected == pytest.approx(noisy_max.JAM_SELECTION_EPSILON, rel=1e-6)


def test_jam_losses_by_logsumexp_and_the_sampler_fits_the_softmax_law():
    item = entry("jam-exponential-sensitivity")
    eps = item.claim.epsilon
    bug, twin = eps / 4, eps / 8  # 0.5 ε / Δ at Δ = 2 (shipped) and 4 (fixed)
    (a, b) = item.pair
    # The witness pair by scipy in doubles, against the mpmath law.
    law_a, law_b = (noisy_max.softmax_law(c, bug) for c in (a, b))
    loss = _loss_by_logsumexp(b, a, bug)
    assert loss == pytest.approx(float(mpmath.log(law_b[0] / law_a[0])), rel=1e-9)
    assert loss > eps
    # The supremum 8a = 2ε: far scores in doubles agree with the stated value.
    far = (0,) + (10_000,) * 4
    near = (4,) + (9_996,) * 4
    assert _loss_by_logsumexp(near, far, bug) == pytest.approx(item.true.epsilon, rel=1e-12)
    # The fixed twin stays within ε on the same pairs (its supremum is 8 · ε/8 = ε).
    assert _loss_by_logsumexp(b, a, twin) <= eps
    assert _loss_by_logsumexp(near, far, twin) == pytest.approx(eps, rel=1e-12)
    # The sampler: chi-square against the exact law on both histograms (false failure 1e-6).
    for counts, law in ((a, law_a), (b, law_b)):
        out = item.build().sample(np.array(counts), 200_000, np.random.default_rng(41))
        assert_sampler_fits({(i,): p for i, p in enumerate(law)}, out)


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


def test_gumbel_twin_is_within_the_claimed_curve_on_the_pair():
    # The exponential mechanism's two-outcome law on (1, 1) and (2, 0): ½ and 1/(1 + e²).
    claim = entry("opendp-noisy-max-zcdp").twin().claim
    p, q = (0.5, 0.5), (math.exp(2) / (1 + math.exp(2)), 1 / (1 + math.exp(2)))
    for epsilon in np.linspace(0.05, 2.5, 50):
        factor = math.exp(epsilon)
        delta = max(
            sum(max(0.0, a - factor * b) for a, b in zip(p, q)),
            sum(max(0.0, b - factor * a) for a, b in zip(p, q)),
        )
        assert delta <= claim.delta_at(epsilon) + 1e-12


@pytest.mark.parametrize(
    "delta", [partition_selection.GO_DELTA, partition_selection.GO_DELTA_SMALL]
)
def test_go_release_delta_by_quadrature_and_the_fix_is_within_the_claim(delta):
    eps = partition_selection.GO_EPSILON
    tau = partition_selection.go_threshold(eps, delta)
    with X.working_precision():
        for rounding in (math.floor, math.ceil):
            cut = rounding(tau) - 1.5
            tail = mpmath.quad(lambda x: X.laplace_pdf(x, 1 / eps), [cut, mpmath.inf])
            assert float(tail) == pytest.approx(
                partition_selection.go_release_delta(eps, delta, rounding), rel=1e-12
            )
    assert partition_selection.go_release_delta(eps, delta, math.ceil) <= delta
    assert 2.7 < partition_selection.go_release_delta(eps, delta, math.floor) / delta < 3


@pytest.mark.parametrize("name", [e.name for e in CORPUS if e.family == "partition selection"])
def test_release_rate_of_the_smallest_count_matches_the_exact_delta(name):
    # Binomial test at p < 1e-6 (false failure 1e-6): the sampler spends the δ computed.
    item = entry(name)
    n = 2_000_000
    batch = item.build().sample(np.array(item.pair[0]), n, np.random.default_rng(11))
    released = int((batch[:, 0] == 0).sum())
    assert stats.binomtest(released, n, item.true.delta).pvalue > 1e-6


@pytest.mark.parametrize(
    "name",
    [
        "opendp-laplace-threshold-delta",
        "opendp-laplace-threshold-delta-small",
        "opendp-gaussian-threshold-delta",
        "go-count-threshold-truncated",
        "go-count-threshold-truncated-small",
    ],
)
def test_wrong_threshold_bugs_sit_in_issue_20s_hard_band(name):
    # The δ bugs issue 20 reports as PASSED: true δ 2.7× to e× the claim, claims 1e-5 to 5e-3.
    item = entry(name)
    assert 2.7 < item.true.delta / item.claim.delta < 3.0
    assert 1e-5 <= item.claim.delta <= 5e-3


def test_discrete_gaussian_tails_against_a_direct_sum_and_the_sampler():
    sigma, t = partition_selection.GAUSS_SIGMA, partition_selection.GAUSS_THRESHOLD
    k = np.arange(-400, 401)
    weights = np.exp(-(k**2) / (2 * sigma**2))
    for m in (t - 1, t, 0, -3):
        direct = weights[k >= m].sum() / weights.sum()
        assert float(partition_selection.discrete_gaussian_tail(m, sigma)) == pytest.approx(
            direct, rel=1e-12
        )
    # The rejection sampler against the pmf on |k| <= 12, coded k + 13 (outcomes are ids,
    # non-negative), the rest pooled as 0 (chi-square, false failure 1e-6).
    z = partition_selection.discrete_gaussian(np.random.default_rng(21), sigma, (200_000,))
    pmf = weights / weights.sum()
    inside = np.abs(k) <= 12
    law = {(int(j) + 13,): float(p) for j, p in zip(k[inside], pmf[inside])}
    law[(0,)] = float(pmf[~inside].sum())
    assert_sampler_fits(law, np.where(np.abs(z) <= 12, z + 13, 0)[:, None])
    # The claim converts (ρ, P(Z >= t)) at ε = 2; the twin counts the mass at the threshold.
    item = entry("opendp-gaussian-threshold-delta")
    rho_delta, reported, true = partition_selection.opendp_gaussian_deltas(
        sigma, t, item.claim.epsilon
    )
    assert item.claim.delta == pytest.approx(rho_delta + reported, rel=1e-12)
    assert item.twin().claim.delta == pytest.approx(rho_delta + true, rel=1e-12)
    assert rho_delta < 1e-3 * reported


def test_stability_map_as_shipped_accepts_its_unit_tests_claim_and_rejects_past_its_range():
    ps = partition_selection
    n, scale, threshold = ps.STABILITY_N, ps.STABILITY_SCALE, ps.STABILITY_THRESHOLD
    assert ps.stability_map_accepts(n, scale, threshold, ps.STABILITY_EPSILON, ps.STABILITY_DELTA)
    assert not ps.stability_map_accepts(n, scale, threshold, math.log(n), 1e-5)  # ε < ln n
    assert not ps.stability_map_accepts(n, scale, threshold, 1.0, 1.0 / n)  # δ < 1/n
    # The ideal threshold at (2.3, 1e-5) is 0.631, below the test's 1: 1/n too small a scale.
    assert not ps.stability_map_accepts(n, scale, 0.63, ps.STABILITY_EPSILON, ps.STABILITY_DELTA)


@pytest.mark.parametrize("count", [0, 1, 2, 5, 12])
def test_stability_release_probability_against_scipy(count):
    ps = partition_selection
    for scale, threshold in (
        (ps.STABILITY_SCALE, ps.STABILITY_THRESHOLD),
        ps.ptr_scale_threshold(ps.STABILITY_EPSILON, ps.STABILITY_DELTA),
    ):
        expected = stats.laplace.sf(threshold - count, scale=scale)
        assert ps.release_probability(count, scale, threshold) == pytest.approx(expected, rel=1e-9)


def test_count_by_ptr_twin_spends_delta_on_a_new_key_and_epsilon_on_the_others():
    # PR 370's scale and threshold: a count of 1 is released with probability δ (Q = 0
    # without the key), and a present key moving by one changes "released" and "not
    # released" by at most e^ε each way, on every count up to far past the threshold.
    ps = partition_selection
    eps, delta = ps.STABILITY_EPSILON, ps.STABILITY_DELTA
    scale, threshold = ps.ptr_scale_threshold(eps, delta)
    assert ps.release_probability(1, scale, threshold) == pytest.approx(delta, rel=1e-12)
    with X.working_precision():
        # "Not released" from the CDF itself: 1 − P in doubles loses the tail's digits.
        kept = [1 - X.laplace_cdf(threshold - c, scale) for c in range(1, 31)]
        dropped = [X.laplace_cdf(threshold - c, scale) for c in range(1, 31)]
        factor = mpmath.exp(eps) * (1 + 1e-12)  # the scale 1/ε is a double
        for c in range(29):
            assert kept[c + 1] <= factor * kept[c] and dropped[c] <= factor * dropped[c + 1]


def test_smartnoise_release_delta_against_scipy_and_the_gaussian_tau_keeps_the_claim():
    eps, delta = partition_selection.SMARTNOISE_EPSILON, partition_selection.SMARTNOISE_DELTA
    sd = partition_selection.smartnoise_sd(eps, delta)
    tau = partition_selection.smartnoise_tau(eps, delta)
    assert tau == pytest.approx(1 + math.log(1 / (2 * delta)), rel=1e-15)
    true = entry("smartnoise-gaussian-laplace-tau").true.delta
    assert stats.norm.sf(tau, loc=1, scale=sd) == pytest.approx(true, rel=1e-9)
    fixed = partition_selection.smartnoise_tau(eps, delta, gaussian=True)
    assert stats.norm.sf(fixed, loc=1, scale=sd) == pytest.approx(delta, rel=1e-6)


def test_float_laplace_reachability_is_exact_and_finds_unreachable_outputs():
    scale = 1 / float_noise.EPSILON
    rng = np.random.default_rng(2)
    outputs = float_noise.textbook_laplace(0.0, rng.random(20_000) - 0.5, scale)
    # The inversion finds every output on the value that produced it ...
    assert float_noise.reachable(outputs, 0.0, scale).all()
    # ... and most outputs of count 0 are never produced on count 1 (Mironov 2012).
    unreachable = ~float_noise.reachable(outputs, 1.0, scale)
    assert unreachable.mean() > 0.7
    assert float_noise._witness()[0] == math.inf


def test_float_sum_near_zero_is_exact_on_the_coarse_grid():
    # The lemma behind the Box–Muller witness, by exact rational arithmetic: for any double w,
    # fl(1 + w) below ½ in magnitude is 1 + w exactly and a multiple of 2^-53.
    rng = np.random.default_rng(12)
    w = np.concatenate(
        [
            rng.uniform(-1.5, -0.5, 20_000),
            float_noise.box_muller_gaussian(0.0, 1 - rng.random(200_000), rng.random(200_000), 0.3)
            - 1.0,
        ]
    )
    near = np.abs(1.0 + w) < 0.5
    assert near.sum() > 10_000
    for x in w[near][:5_000]:
        exact = Fraction(1) + Fraction(float(x))
        assert Fraction(1.0 + float(x)) == exact
        assert (exact * 2**53).denominator == 1
    assert not float_noise.fine_near_zero(1.0 + w).any()


def test_box_muller_witness_and_the_sampler_spends_the_estimated_delta():
    item = entry("float-gaussian-box-muller")
    assert float_noise._gaussian_witness()[0] == math.inf
    mech = item.build()
    n = 400_000
    on_one = mech.sample(np.array(item.pair[1]), n, np.random.default_rng(13))
    assert not float_noise.fine_near_zero(on_one).any()
    on_zero = mech.sample(np.array(item.pair[0]), n, np.random.default_rng(14))
    # Binomial test at p < 1e-6 (false failure 1e-6) against the stated estimate.
    hits = int(float_noise.fine_near_zero(on_zero).sum())
    assert stats.binomtest(hits, n, item.true.delta).pvalue > 1e-6


def test_rounded_gaussian_twin_is_within_its_claim():
    # The twin rounds a Gaussian release (post-processing): its δ at ε is the Gaussian's,
    # Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)) (Balle & Wang, ICML 2018, Thm. 8), mpmath.
    eps, delta = float_noise.GAUSSIAN_EPSILON, float_noise.GAUSSIAN_DELTA
    sigma = float_noise.gaussian_sigma(eps, delta)
    assert sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-15)
    with X.working_precision():
        s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
        exact = mpmath.ncdf(-e * s + 1 / (2 * s)) - mpmath.exp(e) * mpmath.ncdf(
            -e * s - 1 / (2 * s)
        )
    assert 0 < exact < delta
    scipy_route = stats.norm.cdf(-eps * sigma + 1 / (2 * sigma)) - math.exp(eps) * stats.norm.cdf(
        -eps * sigma - 1 / (2 * sigma)
    )
    assert float(exact) == pytest.approx(scipy_route, rel=1e-6)
    twin = entry("float-gaussian-box-muller").twin()
    out = twin.sample(np.zeros(5, dtype=int), 10_000, np.random.default_rng(15))
    assert (out == np.round(out)).all() and out.std() == pytest.approx(sigma, rel=0.05)


def _statdp_hamming_all_by_its_definition(above):
    reference = [i < len(above) // 2 for i in range(len(above))]
    return sum(a != b for a, b in itertools.zip_longest(above, reference))


def test_statdp_all_answers_summary_matches_its_definition_and_laws_sum_to_one():
    for queries in (4, 5, 10):
        patterns = np.array(list(itertools.product([False, True], repeat=queries)))
        expected = [_statdp_hamming_all_by_its_definition(list(p)) for p in patterns]
        assert sparse_vector.statdp_mismatches(patterns).tolist() == expected
    scales = {"threshold": 1.0, "rho_scale": 2 / sparse_vector.STATDP_EPSILON}
    for counts in entry("svt-stoddard-statdp").pair:
        law = sparse_vector.noiseless_summary_law(counts, **scales)
        assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** (3 - X.DIGITS)


def _noiseless_summary_by_quadrature(counts, eps):
    """{summary: P} of StatDP's iSVT1 by scipy: the indicator of each summary integrated over ρ."""
    f = stats.laplace(scale=2 / eps).pdf
    cuts = sorted({c - 1.0 for c in counts})

    def summary(r):
        return int(sparse_vector.statdp_mismatches([[c >= 1.0 + r for c in counts]])[0])

    edges = [-np.inf, *cuts, np.inf]
    law = {}
    for lo, hi in itertools.pairwise(edges):
        # Constant inside the interval; sampled at its midpoint (or one past a finite end).
        mid = (
            (lo + hi) / 2
            if np.isfinite(lo) and np.isfinite(hi)
            else (hi - 1 if np.isfinite(hi) else lo + 1)
        )
        mass = integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-12)[0]
        law[summary(mid)] = law.get(summary(mid), 0.0) + mass
    return law


def test_statdp_isvt1_against_closed_form_and_scipy_and_the_sampler_fits_its_law():
    eps = sparse_vector.STATDP_EPSILON
    item = entry("svt-stoddard-statdp")
    p, q = (_noiseless_summary_by_quadrature(c, eps) for c in item.pair)
    assert p[0] == pytest.approx((1 - math.exp(-eps / 2)) / 2, rel=1e-9) and 0 not in q
    p, q = (
        _noiseless_summary_by_quadrature(c, eps) for c in sparse_vector._STATDP_STODDARD_DELTA_PAIR
    )
    delta = sum(max(0.0, pk - math.exp(eps) * q.get(k, 0.0)) for k, pk in p.items())
    assert delta == pytest.approx(item.true.delta, rel=1e-9)
    a = item.pair[0]
    law = sparse_vector.noiseless_summary_law(a, threshold=1.0, rho_scale=2 / eps)
    values = item.build().sample(np.array(a), 100_000, np.random.default_rng(17))
    assert_sampler_fits(
        {(k,): p for k, p in law.items() if p > 0}, values.astype(np.int64)[:, None]
    )


def test_statdp_isvt2_witness_against_scipy_quadrature_and_its_sampler():
    eps = sparse_vector.STATDP_EPSILON
    item = entry("svt-chen-statdp")
    # Summary 0: every answer on the reference, i.e. exactly ⊤ ⊤ ⊥ ⊥ ⊥.
    above = set(sparse_vector._STATDP_CHEN_ABOVE)
    assert above == {0, 1}

    def probability(counts):
        cuts = [-np.inf, *sorted({0.0, *(c - 1.0 for c in counts)}), np.inf]
        return _pattern_by_quadrature(counts, above, 2 / eps, 2 / eps, cuts)

    a, b = item.pair
    assert abs(math.log(probability(a) / probability(b))) == pytest.approx(
        item.true.epsilon, rel=1e-7
    )
    scales = {"threshold": 1.0, "rho_scale": 2 / eps, "nu_scale": 2 / eps}
    law = sparse_vector.noisy_summary_law((1, 1, 1, 1, 1), **scales)
    assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** (3 - X.DIGITS)
    values = item.build().sample(np.array((1, 1, 1, 1, 1)), 100_000, np.random.default_rng(18))
    assert_sampler_fits({(k,): p for k, p in law.items()}, values.astype(np.int64)[:, None])


def test_svt34_parallel_witness_against_scipy_quadrature():
    # SVT3's density at (first above at the last query, answer v) and SVT4's probability of
    # "above only at the last query", each by scipy in doubles; the losses add.
    item = entry("svt34-parallel")
    s3, s4 = sparse_vector._P3_SCALES, sparse_vector._P4_SCALES
    j, v = sparse_vector._PARALLEL_POINT
    f, F = stats.laplace(scale=s3["rho_scale"]).pdf, stats.laplace(scale=s3["nu_scale"]).cdf
    g = stats.laplace(scale=s3["nu_scale"]).pdf

    def svt3_density(counts):
        def integrand(r):
            value = f(r)
            for c in counts[:j]:
                value *= F(1.0 + r - c)
            return value

        cuts = [-np.inf, -1.0, 0.0, v - 1.0]
        mass = sum(
            integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
            for lo, hi in itertools.pairwise(cuts)
        )
        return g(v - counts[j]) * mass

    a, b = item.pair
    loss = math.log(svt3_density(a) / svt3_density(b)) + math.log(
        _last_above_by_quadrature(a, s4) / _last_above_by_quadrature(b, s4)
    )
    assert loss == pytest.approx(item.true.epsilon, rel=1e-7)
    assert item.true.epsilon > item.claim.epsilon


def test_svt34_parallel_sampler_layout_and_rates():
    item = entry("svt34-parallel")
    counts = item.pair[0]
    n = 200_000
    batch = item.build().sample(np.array(counts), n, np.random.default_rng(31))
    items, values = batch.items, batch.values
    cutoff = sparse_vector.PARALLEL_CUTOFF
    # SVT3's answers sit exactly beside its ids; SVT4's ids are ids or −1, ascending.
    assert (np.isnan(values[:, :cutoff]) == (items == -2)).all()
    svt4 = values[:, cutoff:]
    assert np.isin(svt4, np.arange(-1, len(counts))).all()
    given = svt4[:, 1] >= 0
    assert (svt4[given, 0] < svt4[given, 1]).all() and (svt4[given, 0] >= 0).all()
    # Rates against the exact laws (binomial tests, false failure 1e-6 each).
    none3 = float(sparse_vector.pattern_probability(counts, (), **sparse_vector._P3_SCALES))
    assert stats.binomtest(int((items[:, 0] == -2).sum()), n, none3).pvalue > 1e-6
    last4 = float(
        sparse_vector.pattern_probability(
            counts, sparse_vector._PARALLEL_ABOVE, **sparse_vector._P4_SCALES
        )
    )
    hits = int(((svt4[:, 0] == len(counts) - 1) & (svt4[:, 1] == -1)).sum())
    assert stats.binomtest(hits, n, last4).pvalue > 1e-6


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


def test_numpy_laplace_is_numpys_own_sampler_and_the_witness_is_unreachable_from_count_1():
    # numpy's Generator.laplace draws U = random() (53-bit doubles) and applies the formula.
    n = 20_000
    drawn = np.random.default_rng(34).laplace(loc=1.0, scale=10.0, size=n)
    formula = float_noise.numpy_laplace(1.0, np.random.default_rng(34).random(n), 10.0)
    assert np.array_equal(drawn, formula)
    item = entry("float-laplace-numpy-dpsniper")
    assert item.true.compute()[0] == math.inf
    mech = item.build()
    on_one = mech.sample(np.array(item.pair[1]), 400_000, np.random.default_rng(35))
    assert not float_noise.fine_near_zero(on_one).any()
    on_zero = mech.sample(np.array(item.pair[0]), 400_000, np.random.default_rng(36))
    hits = int(float_noise.fine_near_zero(on_zero).sum())
    assert stats.binomtest(hits, 400_000, item.true.delta).pvalue > 1e-6


def test_snapping_twin_releases_multiples_of_lambda_at_the_laplace_rates():
    item = entry("float-laplace-numpy-dpsniper")
    eps = float_noise.SNIPER_EPSILON
    step = float_noise.snapping_lambda((1 + 100 * 2.0**-49) / eps)
    assert step == 16.0
    n = 400_000
    out = item.twin().sample(np.array(item.pair[0]), n, np.random.default_rng(37))
    assert (np.abs(out) <= 100).all()
    inner = np.abs(out) < 100
    assert (np.fmod(out[inner], step) == 0).all()
    # Output 0 (either sign) iff |noise| < Λ/2: P = 1 − e^{−εΛ/2} (binomial, false failure 1e-6).
    p = -math.expm1(-eps * step / 2)
    assert stats.binomtest(int((out == 0).sum()), n, p).pvalue > 1e-6


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


def _nvflare_accept(t, v):
    """P(v + ν >= t), ν ~ Lap(4γc/ε₂), by scipy."""
    return stats.laplace(scale=sparse_vector.NVFLARE_NU_SCALE).sf(t - v)


def _nvflare_threshold_quad(integrand):
    """∫ integrand(t) f(t − τ) dt over the noisy threshold t, by scipy on its pieces.

    Over |t| <= 800 (the threshold's Laplace(20) mass beyond is e^{−40}, below the tests'
    tolerances), where the acceptance probability stays strictly inside (0, 1) in doubles.
    """
    f = stats.laplace(loc=sparse_vector.NVFLARE_TAU, scale=sparse_vector.NVFLARE_RHO_SCALE).pdf
    cuts = [-800.0, 0.0, sparse_vector.NVFLARE_TAU, 1.0, 800.0]
    return sum(
        integrate.quad(lambda t: f(t) * integrand(t), lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
        for lo, hi in itertools.pairwise(cuts)
    )


def test_nvflare_leak_by_the_closed_form_and_the_sampler_spends_it():
    item = entry("nvflare-svt-raw-leak")
    d = sparse_vector.QUERIES

    def leak(t):
        # P(K >= 2 | K >= 1) = 1 − da(1 − a)^{d−1} / (1 − (1 − a)^d), in doubles.
        a = _nvflare_accept(t, 1.0)
        one = d * a * math.exp((d - 1) * math.log1p(-a))
        return 1 - one / -math.expm1(d * math.log1p(-a))

    assert _nvflare_threshold_quad(leak) == pytest.approx(item.true.delta, rel=1e-7)
    assert item.true.compute() == (math.inf, pytest.approx(item.true.delta, rel=1e-9))
    # The sampler: a raw count 2 released at the exact rate (binomial test, false failure
    # 1e-6); never a 2 on the neighbour (every count 1), nor from the twin.
    n = 200_000
    a, b = (np.array(c) for c in item.pair)
    out = item.build().sample(a, n, np.random.default_rng(46))
    hits = int((out == 2.0).any(axis=1).sum())
    assert stats.binomtest(hits, n, item.true.delta).pvalue > 1e-6
    assert not (item.build().sample(b, n, np.random.default_rng(47)) == 2.0).any()
    assert not (item.twin().sample(a, n, np.random.default_rng(48)) == 2.0).any()


def test_nvflare_accepted_set_size_fits_its_law_and_the_twin_keeps_one_integer():
    # All ten counts at 2 (clipped to 1): K ~ Binomial(10, a) given K >= 1 are accepted, one is
    # kept (a value in [−1, 1]) and the other K − 1 are released raw as 2.0. Chi-square of
    # K − 1 against the law integrated over the threshold (false failure 1e-6).
    item = entry("nvflare-svt-raw-leak")
    d = sparse_vector.QUERIES
    counts = np.full(d, 2)
    out = item.build().sample(counts, 100_000, np.random.default_rng(49))
    leaked = (out == 2.0).sum(axis=1)

    def size_law(k):
        def given(t):
            a = _nvflare_accept(t, 1.0)
            return stats.binom.pmf(k + 1, d, a) / -math.expm1(d * math.log1p(-a))

        return _nvflare_threshold_quad(given)

    law = {(k,): size_law(k) for k in range(d)}
    assert sum(law.values()) == pytest.approx(1.0, rel=1e-9)
    assert_sampler_fits(law, leaked[:, None].astype(np.int64))
    # The twin releases one kept value in {−1, 0, 1} and zeros elsewhere.
    twin = item.twin().sample(counts, 20_000, np.random.default_rng(50))
    assert ((twin != 0).sum(axis=1) <= 1).all() and np.isin(twin, (-1.0, 0.0, 1.0)).all()


def test_nvflare_twins_selection_loss_is_within_its_claim():
    # P(coordinate 0 kept) = ∫ f(t) a₀ E[1/(1 + K₋₀)] / P(K >= 1), E[1/(1 + K)] = ∫₀¹ Π(1 − a_j
    # + a_j x) dx; on the worst pair of clipped patterns found over one coordinate against the
    # others (0.0557), plus the kept value's loss, at most 2/(2γ/ε₃) = ε₃ for a move of 2γ.
    item = entry("nvflare-svt-raw-leak")
    d = sparse_vector.QUERIES

    def kept_zero(clipped):
        def given(t):
            a = _nvflare_accept(t, np.asarray(clipped, dtype=float))
            rest = a[1:]
            mean = integrate.quad(lambda x: np.prod(1 - rest + rest * x), 0, 1)[0]
            return a[0] * mean / -math.expm1(np.log1p(-a).sum())

        return _nvflare_threshold_quad(given)

    low, high = (1,) + (0,) * (d - 1), (0,) + (1,) * (d - 1)
    loss = abs(math.log(kept_zero(low) / kept_zero(high)))
    # The patterns differ, so selection loses something; with the value's ε₃ it stays within.
    assert loss > 0
    assert loss + sparse_vector.NVFLARE_EPSILON_3 < item.twin().claim.epsilon


# ---------------------------------------------------------------------------
# The command line.


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
        epsilon, delta = histogram._law_guarantee(pair, **CLAMPS["clamped"])
        assert epsilon <= histogram.GEOMETRIC_EPSILON * (1 + 1e-12) and delta == 0
        epsilon, delta = histogram._law_guarantee(pair, **CLAMPS["input-unclamped"])
        broken = upper < v + 1 <= upper + (upper - lower)
        assert (math.isinf(epsilon) and delta > 0.19) is broken, v


def test_cli_audits_a_corpus_entry_and_records_it(capsys):
    status = main(
        [
            "audit",
            "corpus:opendp-laplace-threshold-delta",
            "--samples",
            "100000",
            "--no-progress",
            "--json",
            "-",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert status in (0, 1, 3)
    assert data["evidence"]["corpus"]["name"] == "opendp-laplace-threshold-delta"
    assert "opendp/opendp issue 2922" in data["evidence"]["corpus"]["reference"]


def test_cli_unknown_corpus_entry_is_a_usage_error(capsys):
    assert main(["audit", "corpus:no-such-bug", "--no-progress"]) == 2
    assert "no corpus entry" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Slow: the default audit flags every bug on seeds 0-2 and never a correct twin.

#: The corpus audits run at a budget of 1e7 samples (the default is 5e7): value releases spend
#: their whole budget, and the sweep must fit the slow step's box. benchmarks/bench_corpus.py
#: measures the default budget.
CORPUS_BUDGET = 10_000_000

#: Bugs audited at the default budget: at 1e7 a δ claim this small is not resolved (the
#: verdict is INCONCLUSIVE for δ, never PASSED), and both are selection releases that stop
#: early, 13-17 s per audit at the default budget (`python benchmarks/bench_corpus.py --only
#: go-count-threshold-truncated-small smartnoise-gaussian-laplace-tau --no-twins --seeds 0 1 2`,
#: 2026-11-28: flagged on every seed, δ ≥ 1.85e-5 and ≥ 2.33e-6).
AT_DEFAULT_BUDGET = {
    "go-count-threshold-truncated-small": "δ = 1.5e-5 (true 4.4e-5): at 1e7 a release needs "
    "P >= 6.6e-5 to be flagged at the last look",
    "smartnoise-gaussian-laplace-tau": "δ = 1e-15 (true 2.6e-5): at 1e7 the δ bound is 0",
}


def _budget(item) -> dict:
    """The ``samples`` option of a corpus audit: :data:`CORPUS_BUDGET` unless listed above."""
    return {} if item.name in AT_DEFAULT_BUDGET else {"samples": CORPUS_BUDGET}


def _distinct_twins():
    """One entry per distinct twin (Lyu–Su–Li Alg. 1 is the twin of three SVT variants)."""
    seen, out = set(), []
    for item in CORPUS:
        if item.twin is not None and item.twin().name not in seen:
            seen.add(item.twin().name)
            out.append(item)
    return out


# The default audit except workers=2: the result for a seed is the same with any number of
# workers (the plan's seed streams), and the two cores halve the wall time.


@pytest.mark.slow
@pytest.mark.parametrize("item", CORPUS, ids=lambda e: e.name)
def test_default_audit_flags_every_bug_on_three_seeds(item):
    for seed in range(3):
        result = dpaudit.audit(
            item.build(), seed=seed, workers=2, **_budget(item), **item.audit_options
        )
        assert result.violation, f"seed {seed}: {result}"


@pytest.mark.slow
@pytest.mark.parametrize("item", _distinct_twins(), ids=lambda e: e.twin().name)
def test_default_audit_never_flags_a_correct_twin(item):
    for seed in range(3):
        result = dpaudit.audit(
            item.twin(), seed=seed, workers=2, **_budget(item), **item.audit_options
        )
        assert not result.violation, f"seed {seed}: {result}"
