"""dpaudit.auditor.greybox.delta_stage: the structural-δ stage of a live audit.

Each audit is seeded, so a pass is a pass on every run. The exact δ of the stage's pair comes
from ``dpaudit.exact.privacy_profile``; the bound holds with probability >= 1 − α/10 (α = 0.05).
"""

import copy
import math
from dataclasses import dataclass

import numpy as np
import pytest

import dpaudit
import mechanisms as M
from dpaudit.auditor.greybox.delta_stage import plans_grey_delta, stage_sizes
from dpaudit.auditor.greybox.part_bounds import GapItemBound
from dpaudit.auditor.greybox.structural_delta import detectable_delta
from dpaudit.auditor.planning.plan import GREY_DELTA_SHARE
from dpaudit.consistency import grey_delta_problems
from dpaudit.exact import privacy_profile
from dpaudit.levels import derived_level
from dpaudit.rerun import rerun
from mechanisms import top_counts

# A fixed pair keeps the black-box part small; the stage builds its own pair from the
# default histogram (BASE_COUNT on each of k̄ + 3 items).
PAIR = ([4, 4, 0, 0, 0, 0], [4, 4, 0, 0, 1, 1])
FAST = {"pairs": [PAIR], "restrict": True, "samples": 200_000}


def _exact_delta(mechanism, record, epsilon):
    d, d2 = (np.array(h) for h in record["pair"])
    return float(privacy_profile(mechanism, d, d2, epsilon))


@pytest.fixture(scope="module")
def passed():
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6)
    return mechanism, dpaudit.audit(mechanism, seed=1, **FAST)


@pytest.fixture(scope="module")
def violated():
    # The claimed δ ten times below the δ the mechanism spends on its threshold.
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6)
    claim = (mechanism.claim.epsilon, mechanism.claim.delta / 10)
    return mechanism, dpaudit.audit(mechanism, claim=claim, seed=3, **FAST)


def test_the_stage_resolves_delta_where_sampling_cannot(passed):
    mechanism, result = passed
    record = result.evidence["greybox"]["delta"]
    assert result.evidence["options"]["grey_delta"] is True
    assert record["alpha"] == pytest.approx(GREY_DELTA_SHARE * result.alpha)
    assert record["runs"] >= stage_sizes(FAST["samples"])["runs"] - len(record["items"])
    exact = _exact_delta(mechanism, record, result.claim_epsilon)
    assert 0.8 * exact < record["lower"] <= exact
    assert record["detectable_delta"] <= result.power_factor * result.claim_delta
    assert result.detectable_delta == record["detectable_delta"]
    assert result.delta_lower == max(record["lower"], result.delta_witness.delta_lower)
    assert not result.violation
    assert result.delta_resolved
    assert "grey box δ: P >= " in str(result)
    assert "grey box δ" in result._repr_html_()


def test_recheck_derives_the_grey_level_from_the_plan(passed):
    _, result = passed
    checked = dpaudit.recheck(result)
    assert checked.agrees, checked.first_problem
    data = result.to_dict()
    tampered = copy.deepcopy(data)
    tampered["evidence"]["greybox"]["delta"]["alpha"] = 0.05
    assert any("greybox.delta.alpha" in p for p in dpaudit.recheck(tampered).problems)
    tampered = copy.deepcopy(data)
    tampered["evidence"]["greybox"]["delta"]["detectable_delta"] = 1e-9
    assert any("detectable_delta" in p for p in dpaudit.recheck(tampered).problems)
    # Turning the stage off in the options would loosen the sampled bounds' level.
    tampered = copy.deepcopy(data)
    tampered["evidence"]["options"]["grey_delta"] = False
    problems = dpaudit.recheck(tampered).problems
    assert any("evidence.options.grey_delta" in p for p in problems)


def test_plain_recheck_runs_the_stage_again_and_refuses_a_self_consistent_forgery(passed):
    # The file holds each part's sums, not its weighted runs, so a forger can rewrite the parts
    # (here: every part's variance / 100, so a smaller detectable δ) and recompute every derived
    # field with the project's own code; the record is then consistent with itself at the plan's
    # level (grey_delta_problems finds nothing), and only running the stage again shows it.
    mechanism, result = passed
    claim = mechanism.claim
    data = copy.deepcopy(result.to_dict())
    record = data["evidence"]["greybox"]["delta"]
    for part in record["parts"]:
        part["variance"] /= 100
    level = derived_level(data, result.witnesses, claim, claim.neighbours)
    parts = tuple(GapItemBound(p["item"], p["runs"], p["hits"], {}, p["scale"], p["estimate"],
                               p["lower"], p["variance"]) for p in record["parts"])  # fmt: skip
    record["detectable_delta"] = detectable_delta(parts, result.claim_delta, level.grey_alpha)
    assert (
        record["detectable_delta"]
        < result.to_dict()["evidence"]["greybox"]["delta"]["detectable_delta"]
    )
    assert grey_delta_problems(record, level.grey_alpha, claim, claim.neighbours) == []
    problems = dpaudit.recheck(data).problems
    assert any("the stage run again" in p and "detectable_delta" in p for p in problems), problems


def test_levels_sum_to_alpha(passed):
    _, result = passed
    data = result.to_dict()
    level = derived_level(data, result.witnesses, result.claim_epsilon, None)
    looks = data["evidence"]["options"]["looks"]
    sampled = 2 * level.covered * level.alpha_each * looks
    assert level.grey_alpha == pytest.approx(GREY_DELTA_SHARE * result.alpha)
    assert sampled + level.grey_alpha == pytest.approx(result.alpha)
    assert data["evidence"]["confirmation_looks"]["alpha_each_look"] == pytest.approx(
        level.alpha_each
    )


def test_a_claimed_delta_below_the_true_one_is_a_violation(violated):
    mechanism, result = violated
    record = result.evidence["greybox"]["delta"]
    exact = _exact_delta(mechanism, record, result.claim_epsilon)
    assert exact > 5 * result.claim_delta
    assert result.claim_delta < record["lower"] <= exact
    assert record["violation"] and result.violation
    assert result.verdict == "violation" and result.exit_status == 1
    assert "grey-box pair" in result.explanation


def test_recheck_and_rerun_of_a_grey_violation_agree(violated):
    _, result = violated
    checked = dpaudit.recheck(result)
    assert checked.agrees, checked.first_problem
    again = rerun(result)
    assert again.agrees, again.line


@dataclass(frozen=True)
class _UnderDeclared(M.LimitDomain):
    """Declares one item fewer than its limited domain: a false structural zero."""

    def output_support(self, counts):
        return frozenset(int(i) for i in top_counts(counts, self.kbar + 1).items[: self.kbar - 1])


def test_a_false_declaration_is_a_finding_not_a_violation():
    mechanism = _UnderDeclared(k=1, kbar=3, epsilon=1.0, delta=1e-6)
    result = dpaudit.audit(
        mechanism,
        seed=0,
        pairs=[([4, 0, 0, 0, 0, 0], [4, 1, 0, 0, 0, 0])],
        restrict=True,
        samples=200_000,
    )
    record = result.evidence["greybox"]["delta"]
    error = record["declaration_error"]
    assert set(error["items"]) & set(error["outcome"])
    assert not set(error["items"]) & set(error["declared"])
    assert "lower" not in record
    assert not result.violation
    assert not result.delta_resolved  # the void bound lends the verdict no power
    assert "declared output support is FALSE" in str(result)


def test_black_box_and_undeclared_mechanisms_plan_no_stage():
    limit = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6)
    assert plans_grey_delta(limit, black_box=False)
    assert not plans_grey_delta(limit, black_box=True)
    assert not plans_grey_delta(M.GumbelTopK(k=2, epsilon=1.0), black_box=False)
    result = dpaudit.audit(limit, seed=1, black_box=True, **FAST)
    assert result.evidence["options"]["grey_delta"] is False
    assert "delta" not in result.evidence["greybox"]
    assert not math.isfinite(result.detectable_delta) or not result.delta_resolved


def test_a_refined_audit_bounds_its_event_at_the_sampled_share():
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6)
    result = dpaudit.audit(mechanism, seed=4, refine=True, **dict(FAST, samples=600_000))
    checked = dpaudit.recheck(result)
    assert checked.agrees, checked.first_problem
    assert checked.level == pytest.approx((1 - GREY_DELTA_SHARE) * result.alpha / 2)


# StabilityRelease reads every count (no limited domain): a fixed pair away from the support
# edge keeps the sampled part small; the stage builds its own pair from the default histogram.
FAST_STABILITY = {
    "pairs": [([6, 3, 0, 0, 0], [6, 2, 0, 0, 0])],
    "restrict": True,
    "samples": 200_000,
}


@pytest.mark.parametrize("delta", [1e-6, 1e-10])
def test_stability_release_has_its_delta_resolved_and_a_third_of_it_flagged(delta):
    # StabilityRelease(k = 2) on the default histogram's support-edge pair (10, 10, 11, 11, 10)
    # vs ten everywhere: its gap items are 2 and 3, released ascending, so the part of item 3 is
    # empty and left out; the part of item 2 holds all of P(S | D) = δ/2 exactly.
    mechanism = M.StabilityRelease(k=2, epsilon=1.0, delta=delta)
    result = dpaudit.audit(mechanism, seed=0, **FAST_STABILITY)
    record = result.evidence["greybox"]["delta"]
    assert record["unreached"] == [3]
    exact = _exact_delta(mechanism, record, result.claim_epsilon)
    assert 0.9 * exact < record["lower"] <= exact
    assert result.delta_resolved and not result.violation
    third = dpaudit.audit(mechanism, claim=(1.0, delta / 3), seed=0, **FAST_STABILITY)
    assert third.violation
    assert third.evidence["greybox"]["delta"]["lower"] > delta / 3
