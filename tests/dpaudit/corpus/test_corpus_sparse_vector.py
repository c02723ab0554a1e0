"""The sparse-vector bugs: exact laws and witnesses by scipy quadrature; samplers fit their laws."""

import itertools
import math

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from scipy import integrate, stats

from dpaudit.corpus import entry, sparse_vector
from dpaudit.corpus import exact as X
from dpaudit.corpus.sparse_vector import adaptive, gap, laws, lyu, parallel, statdp


def test_cutoff_svt_law_sums_to_one_and_matches_its_sampler():
    counts = (0, 1, 2, 0, 1)
    scales = lyu._LC_SCALES
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
    assert laws.cutoff_epsilon(pair, **twin) <= sparse_vector.EPSILON
    assert laws.cutoff_epsilon(pair, **lyu._LC_SCALES) > sparse_vector.EPSILON


def test_lee_clifton_witness_against_scipy_quadrature():
    # The ε of the pair is attained at "first above at the last query"; scipy in doubles.
    (a, b), scales = lyu.LC_PAIR, lyu._LC_SCALES
    loss = math.log(_last_above_by_quadrature(a, scales) / _last_above_by_quadrature(b, scales))
    assert loss == pytest.approx(lyu._LC_EPSILON, rel=1e-7)


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
    (a, b), s = lyu._CHEN_PAIR, lyu._CHEN_SCALES
    above = set(lyu._CHEN_OUTCOME)

    def probability(counts):
        return _pattern_by_quadrature(
            counts, above, s["rho_scale"], s["nu_scale"], [-np.inf, -1.0, 0.0, np.inf]
        )

    loss = abs(math.log(probability(a) / probability(b)))
    assert loss == pytest.approx(lyu._CHEN_EPSILON, rel=1e-7)


def test_roth_density_ratio_is_the_tail_closed_form():
    # Far below every count, ρ, the nine "below" answers and the released answer all sit in
    # exponential tails: each of the 10 factors changes by e^{ε/2} exactly.
    assert lyu._roth_exact()[0] == pytest.approx(10 * sparse_vector.EPSILON / 2, rel=1e-12)


def test_gap_noisy_answer_density_ratio_is_the_tail_closed_form():
    # Far below every count, ρ, the nine "below" answers and the released answer sit in
    # exponential tails: each of the 10 query factors changes by e^{ε/4} (ν ~ Lap(4/ε)).
    assert gap._bad_gap_exact()[0] == pytest.approx(10 * sparse_vector.EPSILON / 4)


def test_statdp_roth_density_ratio_is_the_tail_closed_form():
    expected = sparse_vector.STATDP_QUERIES * sparse_vector.STATDP_EPSILON / 2
    assert statdp._statdp_isvt4_exact()[0] == pytest.approx(expected, rel=1e-12)


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
    assert adaptive._adaptive_exact()[0] == pytest.approx(9 * 3 * eps / 8 + eps / 8)
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
    scales, (a, b) = statdp._STATDP_LC_SCALES, statdp._STATDP_LC_PAIR
    law = sparse_vector.statdp_summary_law(a, **scales)
    assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** (3 - X.DIGITS)
    values = sparse_vector.statdp_isvt3().sample(np.array(a), 100_000, np.random.default_rng(6))
    assert_sampler_fits({(k,): p for k, p in law.items()}, values.astype(np.int64)[:, None])
    # The witness (summary 3 = first above at the last query) by scipy quadrature in doubles.
    loss = math.log(_last_above_by_quadrature(a, scales) / _last_above_by_quadrature(b, scales))
    assert loss == pytest.approx(entry("svt-lee-clifton-statdp").true.epsilon, rel=1e-7)
    assert loss <= (1 + 6) * sparse_vector.STATDP_EPSILON / 4  # Lyu–Su–Li's bound on Alg. 4


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
    p, q = (_noiseless_summary_by_quadrature(c, eps) for c in statdp._STATDP_STODDARD_DELTA_PAIR)
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
    above = set(statdp._STATDP_CHEN_ABOVE)
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
    s3, s4 = parallel._P3_SCALES, parallel._P4_SCALES
    j, v = parallel._PARALLEL_POINT
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
    none3 = float(sparse_vector.pattern_probability(counts, (), **parallel._P3_SCALES))
    assert stats.binomtest(int((items[:, 0] == -2).sum()), n, none3).pvalue > 1e-6
    last4 = float(
        sparse_vector.pattern_probability(counts, parallel._PARALLEL_ABOVE, **parallel._P4_SCALES)
    )
    hits = int(((svt4[:, 0] == len(counts) - 1) & (svt4[:, 1] == -1)).sum())
    assert stats.binomtest(hits, n, last4).pvalue > 1e-6


#: ν's law, frozen once: the integrands below evaluate it thousands of times per quadrature.
_NVFLARE_NU = stats.laplace(scale=sparse_vector.NVFLARE_NU_SCALE)


def _nvflare_accept(t, v):
    """P(v + ν >= t), ν ~ Lap(4γc/ε₂), by scipy."""
    return _NVFLARE_NU.sf(t - v)


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
