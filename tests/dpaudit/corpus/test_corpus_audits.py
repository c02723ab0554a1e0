"""Slow: the default audit flags every corpus bug and never a correct twin, on seed 0.

The sweep over seeds 0-2 is a benchmark: ``python benchmarks/bench_corpus.py`` runs the same
audits on every entry and twin, seeds 0-2 (the slow step keeps one seed of each so that CI stays
inside 45 minutes; run the benchmark after any change to the auditor).
"""

import pytest

import dpaudit
from dpaudit.corpus import CORPUS

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


#: The twins' budget: a false alarm on a correct twin is a bound above its claim, which each
#: audit reports with probability <= α at any budget, so the assertion below is as strict at
#: 3e6 as at 1e7. At 1e7 the twins spend nearly all of it (8.3M-9.0M samples on
#: rnm-laplace-index, svt-numerical and histogram-statdp, seed 0); at 3e6 an audit takes
#: 33-60 % less CPU (histogram-statdp 12.4 -> 8.3 s, histogram-dpsniper 51.8 -> 21.1 s, one
#: process, seed 0). The float twins keep CORPUS_BUDGET: the flaws of doubles (porous samples)
#: show only with many samples. benchmarks/bench_verdicts.py audits every twin at the default
#: budget (5e7), seeds 0-2.
TWIN_BUDGET = 3_000_000


def _twin_budget(item) -> dict:
    """The ``samples`` option of a twin's audit: :data:`TWIN_BUDGET` but for the float twins."""
    return {"samples": CORPUS_BUDGET if item.name.startswith("float-") else TWIN_BUDGET}


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


#: The seeds of the slow step; benchmarks/bench_corpus.py sweeps 0-2.
SEEDS = (0,)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("item", CORPUS, ids=lambda e: e.name)
def test_default_audit_flags_every_bug(item, seed):
    result = dpaudit.audit(
        item.build(), seed=seed, workers=2, **_budget(item), **item.audit_options
    )
    assert result.violation, f"seed {seed}: {result}"


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("item", _distinct_twins(), ids=lambda e: e.twin().name)
def test_default_audit_never_flags_a_correct_twin(item, seed):
    result = dpaudit.audit(
        item.twin(), seed=seed, workers=2, **_twin_budget(item), **item.audit_options
    )
    assert not result.violation, f"seed {seed}: {result}"
