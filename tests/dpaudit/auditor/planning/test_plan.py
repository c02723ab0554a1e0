"""``planning.plan``: budgets that add up, the minimum that keeps every bound computable, seeds."""

import math

import numpy as np
import pytest

from dpaudit.auditor.planning.plan import (
    GREY_DELTA_SHARE,
    MIN_PER_HISTOGRAM,
    PHASES,
    AuditPlan,
    Budget,
)

# -- Budget ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, budget",
    [
        (20_000_000, Budget(samples=20_000_000)),
        (2e7, Budget(samples=20_000_000)),
        ("2e7", Budget(samples=20_000_000)),
        (np.int64(5000), Budget(samples=5000)),
        ("60s", Budget(seconds=60.0)),
        (" 1.5 sec ", Budget(seconds=1.5)),
        ("2m", Budget(seconds=120.0)),
        ("3min", Budget(seconds=180.0)),
    ],
)
def test_parse_reads_samples_or_seconds(value, budget):
    assert Budget.parse(value) == budget
    assert Budget.parse(budget) is budget


@pytest.mark.parametrize(
    "value, message",
    [
        ("lots", "budget must be a number of samples (2e7) or seconds (60s), got 'lots'"),
        (True, "budget must be a number of samples or 'Ns', got True"),
        (None, "budget must be a number of samples or 'Ns', got None"),
        (1.5, "budget samples must be a whole number, got 1.5"),
        (math.inf, "budget samples must be a whole number, got inf"),
        (0, "budget samples must be an integer >= 1, got 0"),
        ("0s", "budget seconds must be a number > 0, got 0.0"),
    ],
)
def test_parse_refuses_with_the_forms_it_takes(value, message):
    with pytest.raises(ValueError) as caught:
        Budget.parse(value)
    assert str(caught.value) == message


def test_a_budget_is_samples_or_seconds_not_both():
    for given in ({}, {"samples": 1000, "seconds": 1.0}):
        with pytest.raises(ValueError, match="a budget is samples or seconds: give exactly one"):
            Budget(**given)


def test_a_budget_reads_as_it_was_given():
    assert str(Budget(samples=2_000_000)) == "2,000,000 samples"
    assert str(Budget(seconds=90.0)) == "90s"
    assert Budget.parse(str(Budget(seconds=90.0))) == Budget(seconds=90.0)  # round trip


# -- AuditPlan -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given, message",
    [
        ({"samples": 999}, "samples must be an integer >= 1000, got 999"),
        ({"samples": 5000.0}, "samples must be an integer >= 1000, got 5000.0"),
        ({"alpha": 1.0}, "alpha must be in (0, 1), got 1.0"),
        ({"keep": 0}, "keep must be an integer >= 1, got 0"),
        ({"looks": 2.0}, "looks must be an integer >= 1, got 2.0"),
    ],
)
def test_a_bad_plan_names_its_field(given, message):
    with pytest.raises(ValueError) as caught:
        AuditPlan(**({"samples": 10_000, "seed": 0, "alpha": 0.05} | given))
    assert str(caught.value) == message


@pytest.mark.parametrize("samples", [1000, 12_345, 10**7 + 3])
@pytest.mark.parametrize("n_candidates", [1, 3, 4, 600])
@pytest.mark.parametrize("search", [True, False])
def test_the_phase_budgets_spend_exactly_the_samples(samples, n_candidates, search):
    plan = AuditPlan(samples=samples, seed=0, alpha=0.05)
    budget = plan.budgets(n_candidates, search)
    assert sum(budget.values()) == samples
    assert all(v >= 0 for v in budget.values())
    assert (budget["search"] > 0) == search
    assert (budget["screen"] > 0) == (n_candidates > plan.keep)  # nothing to screen for few pairs


@pytest.mark.parametrize("n_pairs", [None, 1, 2, 3, 10])
@pytest.mark.parametrize(
    "search, values, local",
    [(True, False, 0.0), (False, False, 0.0), (True, True, 0.0), (True, False, 0.3)],
)
def test_the_minimum_budget_gives_each_kept_histogram_its_floor(n_pairs, search, values, local):
    plan = AuditPlan(samples=10_000, seed=0, alpha=0.05)
    minimum = plan.minimum_samples(n_pairs, search, values, local)
    kept = plan.keep if n_pairs is None else min(plan.keep, n_pairs)
    histograms = 2 * kept
    at = AuditPlan(samples=max(minimum, 1000), seed=0, alpha=0.05)
    budget = at.budgets(600 if n_pairs is None else n_pairs, search)
    confirm = budget["confirm"] - int(local * at.samples)
    assert budget["select"] / histograms >= MIN_PER_HISTOGRAM * (2 if values else 1)
    assert confirm / histograms >= MIN_PER_HISTOGRAM
    # ... and it is the least such, up to the rounding slack it adds (one per histogram).
    below = minimum - histograms - 1
    if below >= 1000:
        short = AuditPlan(samples=below, seed=0, alpha=0.05).budgets(
            600 if n_pairs is None else n_pairs, search
        )
        short_confirm = short["confirm"] - local * below
        assert (
            short["select"] / histograms < MIN_PER_HISTOGRAM * (2 if values else 1)
            or short_confirm / histograms < MIN_PER_HISTOGRAM
        )


@pytest.mark.parametrize("looks", [1, 2, 3, 6])
@pytest.mark.parametrize("histograms", [2, 6])
def test_the_confirmation_looks_fit_the_budget(looks, histograms):
    plan = AuditPlan(samples=10_000, seed=0, alpha=0.05, looks=looks)
    budget = 600_000
    schedule = plan.confirm_schedule(budget, histograms)
    sizes = schedule.sizes()
    assert len(sizes) == looks and sizes == sorted(sizes)
    focus = plan.focus_look()
    assert focus == min(2, looks - 1)
    # All histograms to the focus look, then one pair alone to the last: within the budget.
    assert histograms * sizes[focus] + 2 * (sizes[-1] - sizes[focus]) <= budget
    if looks == 1:
        assert histograms * sizes[0] <= budget


def test_alpha_is_split_between_the_grey_box_and_the_sampled_bounds():
    plain = AuditPlan(samples=10_000, seed=0, alpha=0.05)
    grey = AuditPlan(samples=10_000, seed=0, alpha=0.05, grey_delta=True)
    assert plain.grey_delta_alpha == 0.0 and plain.blackbox_alpha == 0.05
    assert grey.grey_delta_alpha == pytest.approx(GREY_DELTA_SHARE * 0.05)
    assert grey.blackbox_alpha + grey.grey_delta_alpha == pytest.approx(0.05)


def test_alpha_each_is_bonferroni_over_two_sides_of_every_confirmed_event():
    plan = AuditPlan(samples=10_000, seed=0, alpha=0.06, keep=3, events_per_pair=2)
    assert plan.alpha_each(10) == pytest.approx(0.06 / (2 * 3 * 2))
    assert plan.alpha_each(1) == pytest.approx(0.06 / (2 * 1 * 2))
    assert plan.alpha_each(0) == plan.alpha_each(1)


def test_every_draw_has_its_own_reproducible_stream():
    plan = AuditPlan(samples=10_000, seed=42, alpha=0.05)
    assert len(set(PHASES.values())) == len(PHASES)
    first = [
        plan.seed_for(p, r, i).generate_state(2).tolist()
        for p in PHASES
        for r in range(2)
        for i in range(3)
    ]
    again = [
        plan.seed_for(p, r, i).generate_state(2).tolist()
        for p in PHASES
        for r in range(2)
        for i in range(3)
    ]
    assert first == again
    assert len({tuple(s) for s in first}) == len(first)
    other = AuditPlan(samples=10_000, seed=43, alpha=0.05).seed_for("confirm", 0, 0)
    assert (
        other.generate_state(2).tolist()
        != plan.seed_for("confirm", 0, 0).generate_state(2).tolist()
    )
    assert plan.seed_for("screen", 1, 2).spawn_key == (PHASES["screen"], 1, 2)
