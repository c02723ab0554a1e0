"""Thorough (slow) checks of the auditor: no false alarms, tight bounds, honest coverage."""

import numpy as np
import pytest
from scipy import stats

import dpaudit
import mechanisms as M
from dpaudit.catalog.base import _plackett_luce_law
from dpaudit.catalog.limit_domain import _LimitDomainBase
from dpaudit.exact import output_law
from dpaudit.exact.profile import epsilon_from_laws

pytestmark = pytest.mark.slow


def _law(mech, counts):
    """The project's exact law when registered, else the catalog's Plackett–Luce reference.

    The reference follows seed 003 Alg. 1 / Lemma 4.2 (003_9293f5da18078e1b.txt)
    and is checked against the samplers' output in tests/dpaudit/test_catalog.py.
    """
    try:
        return output_law(mech, counts)
    except TypeError:
        if isinstance(mech, M.GumbelTopK):
            return _plackett_luce_law(list(counts), mech.epsilon, mech.k, list(range(len(counts))))
        if isinstance(mech, M.LimitDomain):
            ref = _LimitDomainBase(
                k=mech.k,
                kbar=mech.kbar,
                epsilon=mech.epsilon,
                delta=mech.delta,
                max_items=mech.max_items,
            )
            return output_law(ref, counts)
        raise


def _exact_epsilon(mech, counts, counts2):
    a, b = np.array(counts), np.array(counts2)
    return float(epsilon_from_laws(_law(mech, a), _law(mech, b), mech.claim.delta))


def _correct_mechanisms():
    mechs = [
        M.ExponentialMechanism(epsilon=1.0),
        M.ExponentialMechanism(epsilon=0.5, monotonic=False),
        M.GumbelTopK(k=2, epsilon=1.0),
        M.PeelingEM(k=2, epsilon=0.7),
        M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3),
        M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6),
    ]
    by_name = [
        ("Joint", {"k": 2, "epsilon": 1.0}),
        ("ReportNoisyMax", {"epsilon": 1.0}),
        ("StrictLimitDomain", {"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 1e-3}),
        ("TopStable", {"k": 2, "kbar": 4, "epsilon": 1.0, "delta": 1e-3}),
        (
            "RestrictedGumbel",
            {"k": 2, "kbar": 4, "epsilon": 1.0, "delta": 1e-3, "epsilon_r": 1.0, "delta_r": 1e-3},
        ),
        ("LaplaceTopK", {"k": 2, "epsilon": 1.0}),
        ("PermuteAndFlip", {"epsilon": 1.0}),
        ("JointSequence", {"k": 2, "epsilon": 1.0}),
    ]
    for name, params in by_name:
        mechs.append(getattr(M, name)(**params))
    # Releases with real values (the value encoders' path).
    mechs.append(M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=0.5), epsilon_counts=1.0))
    mechs.append(
        M.NoisyCountsRelease(
            M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3), epsilon_counts=0.5
        )
    )
    return mechs


def test_no_false_alarms_in_200_audits():
    # Every audited mechanism is correct, so a violation is a false alarm; each audit
    # has false-alarm probability <= alpha = 0.05 only in the worst case of a tight
    # claim — the claims here are not tight on these families, so zero is expected.
    mechs = _correct_mechanisms()
    violations = []
    verdicts = {"passed": 0, "inconclusive": 0, "violation": 0}
    for seed in range(200):
        mech = mechs[seed % len(mechs)]
        d = 5 if not hasattr(mech, "kbar") else mech.kbar + 2
        rng = np.random.default_rng(seed)
        counts = rng.integers(0, 6, size=d)
        result = dpaudit.audit(mech, samples=20_000, alpha=0.05, seed=seed, counts=counts, keep=1)
        verdicts[result.verdict] += 1
        if result.violation:
            violations.append(str(result))
    # Reported (pytest -rP shows it): how many of the 200 small audits had no power.
    print(f"200 audits of correct mechanisms at 20,000 samples: {verdicts}")
    assert not violations, "\n\n".join(violations)
    assert verdicts["passed"] + verdicts["inconclusive"] == 200


@pytest.mark.parametrize(
    "mech, pair",
    [
        (M.GumbelTopK(k=1, epsilon=1.0), ((0, 0, 0, 0, 0), (1, 0, 0, 0, 0))),
        (M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3), ((5, 4, 3, 2, 0), (5, 4, 3, 1, 0))),
    ],
)
def test_bound_is_tight_on_tiny_histograms(mech, pair):
    # 4M samples on one pair: 1.4M per histogram in confirmation. For LimitDomain's best
    # event (P ≈ 0.0148, Q ≈ 0.0055, δ = 1e-3) the one-sided intervals at alpha/6 cost about
    # 1.8 % on P − δ and 2.7 % on Q, i.e. about 0.045 in ε: the bound is expected near
    # 0.95 × exact, so 0.93 × exact is the bar (the seed is fixed; this is deterministic).
    exact = _exact_epsilon(mech, *pair)
    assert exact > 0.5
    # looks=1: one fixed-size confirmation (a sequential audit stops once it has power,
    # before its bound is as tight as the budget allows).
    result = dpaudit.audit(mech, pairs=[pair], restrict=True, samples=4_000_000, seed=0, looks=1)
    assert result.epsilon_lower >= 0.93 * exact, (result.epsilon_lower, exact)
    assert not result.violation


def test_bound_exceeds_exact_at_most_at_the_stated_rate():
    # 200 seeded audits at alpha = 0.05 on one pair: the number of runs whose bound
    # exceeds the exact ε is Binomial(200, <= 0.05); fail only above its 1 - 1e-6
    # quantile, so the false-failure probability is <= 1e-6.
    mech = M.GumbelTopK(k=1, epsilon=1.0)
    pair = ((0, 0, 0), (1, 0, 0))
    exact = _exact_epsilon(mech, *pair)
    above = 0
    for seed in range(200):
        result = dpaudit.audit(
            mech, pairs=[pair], restrict=True, samples=4_000, alpha=0.05, seed=1000 + seed
        )
        above += result.epsilon_lower > exact
    assert above <= stats.binom.ppf(1 - 1e-6, 200, 0.05)


def test_value_bounds_exceed_the_true_epsilon_at_most_at_the_stated_rate():
    # DP-Sniper's ReportNoisyMax3 on (0,0,0) vs (1,1,1): below every count the maximum's
    # densities differ by exactly e^{dε/2} = e^{1.5} (dpaudit.exact.value_laws), and no
    # event does better, so its true ε is 1.5. 200 seeded value audits at alpha = 0.05
    # (encoders learned on their own split): the number of bounds above 1.5 is
    # Binomial(200, <= 0.05); fail above its 1 - 1e-6 quantile (false failure <= 1e-6).
    from dpaudit.catalog import ReportNoisyMaxFloatValue

    mech = ReportNoisyMaxFloatValue(epsilon=1.0)
    pair = ((0, 0, 0), (1, 1, 1))
    bounds = [
        dpaudit.audit(
            mech, pairs=[pair], restrict=True, samples=20_000, alpha=0.05, seed=2000 + seed
        ).epsilon_lower
        for seed in range(200)
    ]
    above = sum(b > 1.5 for b in bounds)
    print(
        f"value audits: {above}/200 bounds above the true ε 1.5; median bound "
        f"{np.median(bounds):.3f}"
    )
    assert above <= stats.binom.ppf(1 - 1e-6, 200, 0.05)
    assert np.median(bounds) > 0.5  # and the audits see something


#: Budget of the INCONCLUSIVE-rate check: one tenth of the default, affordable in the
#: slow step (the default audit's rate is measured by benchmarks/bench_verdicts.py).
RATE_BUDGET = 3_000_000

#: Measured: 1 of the 6 audits below is INCONCLUSIVE at RATE_BUDGET (TopStable, for δ: its
#: claimed δ = 1e-3 needs about a million samples per histogram at the last look, more
#: than 3M samples give it; at the default 5e7 all six pass, benchmarks/bench_verdicts.py).
MAX_INCONCLUSIVE = 1


def _rate_cases():
    from dpaudit.corpus import entry

    return [
        ("svt-lyu-alg1 ε=0.1", entry("svt-lee-clifton").twin, {"domain_size": 10}),
        ("rnm-laplace-index ε=0.1", entry("rnm-laplace-max-value").twin, {}),
        ("opendp threshold, δ fixed", entry("opendp-laplace-threshold-delta").twin, {}),
        ("TopStable(1, 2, 1, 1e-3)", lambda: M.TopStable(k=1, kbar=2, epsilon=1.0, delta=1e-3), {}),
        ("ReportNoisyMax(1)", lambda: M.ReportNoisyMax(epsilon=1.0), {}),
        ("GumbelTopK(2, 1)", lambda: M.GumbelTopK(k=2, epsilon=1.0), {}),
    ]


def test_inconclusive_rate_of_correct_mechanisms_at_a_tenth_of_the_default_budget():
    # Correct mechanisms only (a violation is a false alarm), seed 0, 3M samples each. The
    # audits are deterministic per seed, so this test cannot fail by chance: it fails only
    # when a change of the auditor makes one of these audits flag, or leaves more of them
    # without power than measured (MAX_INCONCLUSIVE, see its comment).
    verdicts = {}
    for name, build, options in _rate_cases():
        result = dpaudit.audit(build(), seed=0, budget=RATE_BUDGET, **options)
        verdicts[name] = (result.verdict, result.power_shortfall, result.separated)
    print(verdicts)
    assert not [n for n, v in verdicts.items() if v[0] == "violation"], verdicts
    inconclusive = [n for n, v in verdicts.items() if v[0] == "inconclusive"]
    assert len(inconclusive) <= MAX_INCONCLUSIVE, verdicts
