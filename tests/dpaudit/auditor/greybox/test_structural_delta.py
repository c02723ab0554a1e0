"""dpaudit.auditor.greybox.structural_delta: δ on a structural zero, against the exact law.

The bound of each run holds with probability >= 1 − α (α = 1e-3 here); the seeds are fixed, so a
pass is a pass on every run. P(S | D) is computed exactly (``dpaudit.exact.output_law``).
"""

import math
from collections import namedtuple
from dataclasses import dataclass

import mpmath
import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.greybox.declared_support import DeclaredSupportError
from dpaudit.auditor.greybox.delta_stage import pair_record
from dpaudit.auditor.greybox.structural_delta import structural_delta
from dpaudit.auditor.greybox.structural_pairs import rank_structural_pairs
from dpaudit.auditor.planning.options import DEFAULT_SAMPLES
from dpaudit.auditor.planning.plan import GREY_DELTA_SHARE
from dpaudit.auditor.results.power import DEFAULT_POWER_FACTOR
from dpaudit.catalog import LimitDomainNoThresholdTerm
from dpaudit.exact import output_law
from mechanisms import PrivacyClaim, top_counts

ALPHA = 1e-3


def _exact_probability(mechanism, counts, items):
    law = output_law(mechanism, counts)
    return float(mpmath.fsum(p for outcome, p in law.items() if set(outcome) & items))


# D: items 3, 4, 5 in the limited domain; D' (one user removed from them): items 0, 1, 2.
D = [4, 4, 4, 5, 5, 5]
D2 = [4, 4, 4, 4, 4, 4]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("delta", [1e-4, 1e-8])
def test_lower_bound_is_below_the_exact_probability(seed, delta):
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=delta)
    result = structural_delta(
        mechanism,
        D,
        D2,
        claim=(1.0, delta),
        alpha=ALPHA,
        seed=seed,
        runs=20_000,
        pilot_runs=2_000,
        check_runs=2_000,
    )
    exact = _exact_probability(mechanism, D, result.items)
    assert result.items == frozenset({3, 4, 5})
    assert result.lower <= exact
    # Tight: the tilted runs resolve P(S | D) (about δ here) to a few per cent.
    assert result.lower > 0.9 * exact
    assert result.estimate == pytest.approx(exact, rel=0.05)
    assert result.delta_lower == result.lower
    assert not result.violation
    assert result.detectable_delta < 1.2 * delta
    assert result.hits > result.runs / 10
    assert [part.item for part in result.parts] == [3, 4, 5]
    assert result.check_runs > 0


@dataclass(frozen=True)
class _DeclaredNoThresholdTerm(LimitDomainNoThresholdTerm):
    """The catalog's LimitDom without its threshold term, declaring its (true) top-k̄ support."""

    def output_support(self, counts):
        return frozenset(int(i) for i in top_counts(counts, self.kbar + 1).items[: self.kbar])


def test_a_broken_threshold_gets_a_delta_bound_above_its_claim():
    mechanism = _DeclaredNoThresholdTerm(k=2, kbar=3, epsilon=1.0, delta=1e-6)
    result = structural_delta(
        mechanism,
        D,
        D2,
        claim=(mechanism.claim.epsilon, mechanism.claim.delta),
        alpha=ALPHA,
        seed=0,
        runs=20_000,
        pilot_runs=2_000,
        check_runs=2_000,
    )
    exact = _exact_probability(mechanism, D, result.items)
    assert result.lower <= exact
    assert result.violation
    assert result.delta_lower > 1000 * mechanism.claim.delta


@dataclass(frozen=True)
class _UnderDeclared(M.LimitDomain):
    """Declares one item fewer than its limited domain: a false structural zero."""

    def output_support(self, counts):
        return frozenset(int(i) for i in top_counts(counts, self.kbar + 1).items[: self.kbar - 1])


def test_a_false_declaration_is_caught_with_its_outcome():
    mechanism = _UnderDeclared(k=1, kbar=3, epsilon=1.0, delta=1e-3)
    counts, neighbour = [5, 6, 6, 4, 0, 0], [5, 5, 5, 4, 0, 0]
    # Declared: {1, 2} on D, {0, 1} on D'; item 2 is in D''s true domain all the same.
    with pytest.raises(DeclaredSupportError) as caught:
        structural_delta(
            mechanism,
            counts,
            neighbour,
            claim=(1.0, 1e-3),
            alpha=ALPHA,
            seed=0,
            runs=2_000,
            pilot_runs=1_000,
            check_runs=1_000,
        )
    error = caught.value
    assert error.counts == tuple(neighbour) or error.counts == tuple(counts)
    assert error.items and not (error.items & error.declared)
    assert set(error.outcome) & error.items
    assert "output_support" in str(error)


def test_refuses_a_pair_without_structural_zero_and_undeclared_mechanisms():
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-4)
    with pytest.raises(ValueError, match="no structural zero"):
        structural_delta(mechanism, D, [4, 4, 4, 5, 5, 6], claim=(1.0, 1e-4), alpha=ALPHA, seed=0)
    with pytest.raises(ValueError, match="declares no output_support"):
        structural_delta(
            M.GumbelTopK(k=2, epsilon=1.0), D, D2, claim=(1.0, 0.0), alpha=ALPHA, seed=0
        )


def test_the_draws_are_tilted_below_the_table_route():
    # LimitDomain(k=3, k̄=10) samples from a table at large batches (one uniform per run); the
    # stage halves its batch until the Gumbel draw is there to tilt.
    mechanism = M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6)
    counts = np.array([4] * 10 + [5] * 10)
    neighbour = counts - np.array([0] * 10 + [1] * 10)
    result = structural_delta(
        mechanism,
        counts,
        neighbour,
        claim=(1.0, 1e-6),
        alpha=ALPHA,
        seed=0,
        runs=20_000,
        pilot_runs=2_000,
        check_runs=2_000,
        chunk=65_536,
    )
    assert len(result.items) == 10
    # P(S | D) = δ / (1 + δ) exactly: every one of the ten items beats ⊥ with δ/10 in total.
    assert result.lower <= 1e-6 / (1 + 1e-6) < 1.25 * result.lower
    assert math.isfinite(result.detectable_delta)


# D: items 1, 2 lead; D' (one user removed from them): items 0, 1. Item 2 is the gap.
SMALL, SMALL2 = [4, 5, 5, 0], [4, 4, 4, 0]


@pytest.mark.parametrize(
    "mechanism",
    [
        M.StabilityRelease(k=2, epsilon=1.0, delta=1e-6),  # one Laplace draw per run (0-d tilt)
        M.FixedThreshold(kbar=2, epsilon=1.0, delta=1e-6),
        M.StrictLimitDomain(k=2, kbar=2, epsilon=1.0, delta=1e-6),
    ],
    ids=lambda m: type(m).__name__,
)
def test_other_declared_mechanisms_against_the_exact_law(mechanism):
    result = structural_delta(
        mechanism,
        SMALL,
        SMALL2,
        claim=(mechanism.claim.epsilon, mechanism.claim.delta),
        alpha=ALPHA,
        seed=0,
        runs=20_000,
        pilot_runs=2_000,
        check_runs=2_000,
    )
    exact = _exact_probability(mechanism, SMALL, result.items)
    assert 2 in result.items
    assert 0.9 * exact < result.lower <= exact
    assert not result.violation


def test_top_stable_bound_stays_valid_where_one_shift_is_not_enough():
    # TS reaches item 2 through two Laplace draws together (gap and threshold noise), which a
    # single location shift covers poorly; the mixture of exponential tilts covers it, and the
    # bound stays below the exact probability.
    mechanism = M.TopStable(k=1, kbar=2, epsilon=1.0, delta=1e-6)
    for seed in (0, 1):
        result = structural_delta(
            mechanism,
            SMALL,
            SMALL2,
            claim=(mechanism.claim.epsilon, mechanism.claim.delta),
            alpha=ALPHA,
            seed=seed,
            runs=20_000,
            pilot_runs=2_000,
            check_runs=2_000,
        )
        assert all(part.components for part in result.parts)
        exact = _exact_probability(mechanism, SMALL, result.items)
        assert 0.75 * exact < result.lower <= exact


# TopStable(2, 3)'s support-edge pair from the default histogram (the audit's own): items 3, 4, 5
# by one count over D'. Part 3 is reached four ways (gap 1, 2 or 3's noise up, the threshold's
# down), part 4 two (gap 3 up, threshold down), part 5 none (outcomes are ascending).
TOP_STABLE = ([10, 10, 10, 11, 11, 11], [10] * 6)


def _stage(mechanism, claim, seed):
    """The audit's own stage on TOP_STABLE: its level (α = 0.05 × GREY_DELTA_SHARE) and sizes."""
    alpha = GREY_DELTA_SHARE * 0.05
    return pair_record(
        mechanism, *TOP_STABLE, claim, alpha=alpha, seed=seed, samples=DEFAULT_SAMPLES
    )


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_top_stable_is_resolved_at_the_stage_default_runs(delta):
    mechanism = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=delta)
    record = _stage(mechanism, mechanism.claim, seed=0)
    assert record["runs"] == 200_000 and record["unreached"] == [5]
    exact = _exact_probability(mechanism, TOP_STABLE[0], frozenset(record["items"]))
    assert 0.85 * exact < record["lower"] <= exact
    assert record["detectable_delta"] <= DEFAULT_POWER_FACTOR * delta
    assert not record["violation"]


@pytest.mark.slow
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_top_stable_claiming_a_third_of_its_delta_is_flagged_on_seeds_0_to_2(delta):
    mechanism = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=delta)
    third = PrivacyClaim(mechanism.claim.epsilon, delta / 3, mechanism.claim.neighbours)
    exact = _exact_probability(mechanism, TOP_STABLE[0], frozenset({3, 4, 5}))
    for seed in (0, 1, 2):
        record = _stage(mechanism, third, seed)
        assert delta / 3 < record["lower"] <= exact
        assert record["violation"]


def test_an_empty_part_is_left_out_and_the_bound_stays_below_the_exact_probability():
    # TopStable(k=2, k̄=3) releases two items, ascending. On D the gap items are 3, 4 and 5 (its
    # top three, by one count over D'), so item 5 is never an outcome's first gap item: that
    # part is empty and no probe can reach it. The stage bounds the union of the other two parts
    # (at α/2 each) instead of giving up, and says which part it left out.
    mechanism = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    d, d2 = [10, 10, 10, 11, 11, 11], [10] * 6
    result = structural_delta(
        mechanism,
        d,
        d2,
        claim=(mechanism.claim.epsilon, mechanism.claim.delta),
        alpha=ALPHA,
        seed=0,
        runs=10_000,
        pilot_runs=1_000,
        check_runs=1_000,
    )
    assert result.items == {3, 4, 5} and result.unreached == {5}
    assert [part.item for part in result.parts] == [3, 4]
    assert 0.0 < result.lower <= _exact_probability(mechanism, d, result.items)
    assert not result.violation


def test_a_claim_of_a_third_of_the_delta_spent_is_flagged():
    # LimitDomain spends δ / (1 + δ) on this pair; claiming δ/3 is refuted on every seed.
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-8)
    for seed in (0, 1, 2):
        result = structural_delta(
            mechanism,
            D,
            D2,
            claim=(1.0, 1e-8 / 3),
            alpha=ALPHA,
            seed=seed,
            runs=10_000,
            pilot_runs=1_000,
            check_runs=0,
        )
        assert result.violation and result.check_runs == 0


def test_pairs_are_ranked_by_their_pilot_estimate_in_both_orientations():
    Pair = namedtuple("Pair", "counts counts2")
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-4)
    same_support = Pair([4, 4, 4, 5, 5, 5], [4, 4, 4, 5, 5, 6])
    ranked = rank_structural_pairs(
        mechanism, [same_support, Pair(D, D2)], claim=(1.0, 1e-4), seed=0, runs=2_000
    )
    # (D, D') spends δ/(1+δ); (D', D) spends about δ/e: items 0-2 sit one below ⊥'s base.
    assert [r.pair for r in ranked] == [(tuple(D), tuple(D2)), (tuple(D2), tuple(D))]
    assert ranked[0].estimate == pytest.approx(1e-4, rel=0.1)
    assert ranked[1].estimate == pytest.approx(1e-4 / math.e, rel=0.1)
