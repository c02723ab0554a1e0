"""diffprivlib as a test client: its exponential mechanism, audited through the public API.

The adapter seeds diffprivlib's ``random_state`` from the audit's generator, so
these tests are reproducible for a fixed diffprivlib version; their docstrings
still state the false-failure probability over seeds. Audits run with
``alpha = 1e-3``. Power figures (10 seeds of dpaudit's ExponentialMechanism with
the same law, budget and alpha) come from ``python benchmarks/bench_library_audits.py power``.
"""

import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits, chi_square_pvalue

import dpaudit
from dpaudit.auditor.results.result import PASSED, VIOLATION
from dpaudit.exact import epsilon_at, output_law
from dpaudit.integrations.diffprivlib import DiffprivlibExponential
from mechanisms import AddRemoveUser, BoundedChange, ExponentialMechanism, PrivacyClaim

ALPHA = 1e-3
AUDIT_SAMPLES = 500_000
# Chi-square tests reject at p < 1e-4 (false-failure probability <= 1e-4 over seeds).
P_REJECT = 1e-4
CHI_SAMPLES = 200_000
COUNTS = (3, 2, 1, 0, 0)  # utilities of 5 candidates


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 1.0, "sensitivity": 0}, "sensitivity"),
        ({"epsilon": 1.0, "sensitivity": 0.5}, "sensitivity"),
        ({"epsilon": 1.0, "monotonic": "no"}, "monotonic"),
    ],
)
def test_rejects_bad_parameters(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        DiffprivlibExponential(**kwargs)


@pytest.mark.parametrize(
    "monotonic, relation", [(False, BoundedChange(1)), (True, AddRemoveUser())]
)
def test_claim_is_diffprivlibs_epsilon_under_its_relation(monotonic, relation):
    claim = DiffprivlibExponential(1.0, monotonic=monotonic).claim
    assert claim == PrivacyClaim(1.0, 0.0, relation)


@pytest.mark.slow
def test_same_seed_same_batch():
    """random_state is drawn from rng: equal generator states give equal batches."""
    mech = DiffprivlibExponential(1.0)
    first = mech.sample(COUNTS, 2_000, np.random.default_rng(5))
    assert np.array_equal(first, mech.sample(COUNTS, 2_000, np.random.default_rng(5)))
    assert not np.array_equal(first, mech.sample(COUNTS, 2_000, np.random.default_rng(6)))


@pytest.mark.slow
@pytest.mark.parametrize(
    "monotonic, right, wrong",
    [
        (False, ExponentialMechanism(0.5, False), ExponentialMechanism(1.0, False)),
        (True, ExponentialMechanism(1.0, True), ExponentialMechanism(0.5, True)),
    ],
)
def test_law_is_the_exponential_mechanism(monotonic, right, wrong):
    """diffprivlib's Exponential(ε=1, Δ=1) fits exp(ε c/((2 − monotonic)Δ)), not the other factor.

    Chi-square at p < 1e-4 (false failure <= 1e-4 over seeds; seed 0 here). The
    law with the other factor of 2 has noncentrality > 30000 at 200k samples, so it
    is rejected with probability > 1 − 1e-100: the test reads diffprivlib's scale.
    """
    mech = DiffprivlibExponential(1.0, monotonic=monotonic)
    assert mech.reference() == right
    batch = mech.sample(COUNTS, CHI_SAMPLES, np.random.default_rng(0))
    assert_sampler_fits(output_law(right, COUNTS), batch, P_REJECT)
    assert chi_square_pvalue(output_law(wrong, COUNTS), batch) < P_REJECT


@pytest.mark.slow
def test_passes_its_claim():
    """Exponential(ε=1, Δ=1) claims ε = 1 under BoundedChange(1): PASSED.

    A VIOLATION has probability <= alpha = 1e-3 (the claim is McSherry-Talwar's
    theorem); INCONCLUSIVE was never seen on the seeded reference (power benchmark).
    """
    result = dpaudit.audit(DiffprivlibExponential(1.0), samples=AUDIT_SAMPLES, alpha=ALPHA, seed=0)
    assert result.neighbours == str(BoundedChange(1))
    assert result.verdict == PASSED, result.explanation
    assert result.epsilon_lower <= 1.0


@pytest.mark.slow
def test_halved_claim_is_flagged():
    """The same mechanism claimed at ε/2 = 0.5: VIOLATION (the audit has teeth).

    A miss was never seen on the seeded reference (power benchmark: bounds well above 0.5).
    """
    result = dpaudit.audit(
        DiffprivlibExponential(1.0),
        claim=(0.5, 0.0, BoundedChange(1)),
        samples=AUDIT_SAMPLES,
        alpha=ALPHA,
        seed=0,
    )
    assert result.verdict == VIOLATION, result.explanation
    assert result.epsilon_lower > 0.5


@pytest.mark.slow
def test_monotone_claim_passes_and_is_flagged_under_a_larger_relation():
    """monotonic=True claims ε = 1 under AddRemoveUser: PASSED; under BoundedChange(1): VIOLATION.

    Under counts moving ±1 either way its true ε is 2 (weights exp(c_i), a gap
    can grow by 2); the bound must be at most the exact ε of its witness pair
    (dpaudit.exact on the reference law). False failures: <= alpha = 1e-3 for the pass;
    INCONCLUSIVE and a missed violation were never seen on the seeded reference (power benchmark).
    """
    mech = DiffprivlibExponential(1.0, monotonic=True)
    passed = dpaudit.audit(mech, samples=AUDIT_SAMPLES, alpha=ALPHA, seed=0)
    assert passed.verdict == PASSED, passed.explanation
    flagged = dpaudit.audit(
        mech, neighbours=BoundedChange(1), samples=AUDIT_SAMPLES, alpha=ALPHA, seed=0
    )
    assert flagged.verdict == VIOLATION, flagged.explanation
    witness = flagged.epsilon_witness
    exact = epsilon_at(
        mech.reference(), witness.counts, witness.counts2, 0, neighbours=BoundedChange(1)
    )
    assert 1.0 < flagged.epsilon_lower <= exact <= 2.0
