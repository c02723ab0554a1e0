"""A budget is a budget; δ is a first-class target; power on ε and δ; adaptive confirmation."""

from collections import Counter

import numpy as np
import pytest
from scipy.stats import binom

import dpaudit
import dpaudit.testing
import mechanisms as M
from dpaudit.auditor.bounds.sequential import LookSchedule
from dpaudit.auditor.bounds.statistics import p_needed
from dpaudit.auditor.confirm.confirmation import confirm_sequentially, next_looks
from dpaudit.auditor.confirm.focus import (
    delta_promise,
    focus_pairs,
    nearness,
    release_unjudged,
)
from dpaudit.auditor.planning.plan import AuditPlan, Budget
from dpaudit.auditor.results.power import power_shortfall
from dpaudit.auditor.results.result import AuditResult
from dpaudit.auditor.results.witness import Witness
from dpaudit.auditor.search.screening import screen_scores, survivors
from dpaudit.auditor.search.slots import (
    support_changes,
    with_delta_slot,
    with_epsilon_slot,
    with_named_pairs,
)
from dpaudit.auditor.values.outcome_events import events_hits
from dpaudit.exact import output_law, working_precision
from dpaudit.exact.value_laws import value_event_probability
from dpaudit.neighbours.pairs import NAMED, NeighbourPair
from dpaudit.testing import assert_private


def _coin(counts, rng):
    return (int(np.argmax(counts)),) if rng.random() < 0.7 else (0,)


@pytest.mark.parametrize(
    ("mechanism", "options"),
    [
        (M.GumbelTopK(k=2, epsilon=1.0), {"samples": 20_000}),
        (M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3), {"samples": 12_000}),
        (_coin, {"samples": 9_000, "claim": (1.0, 0.0), "width": 1}),
        (
            M.NoisyCountsRelease(M.ReportNoisyMax(epsilon=1.0), epsilon_counts=0.5),
            {"samples": 30_000, "domain_size": 3},
        ),
    ],
)
def test_samples_drawn_never_exceed_the_budget(mechanism, options):
    # Issue 24: --samples 20000 used to draw 134,000 (per-histogram floors); now screening
    # is thinned to fit and the result records what was asked and what was drawn.
    result = dpaudit.audit(mechanism, seed=1, **options)
    assert 0 < result.samples <= options["samples"] == result.samples_requested


def test_a_budget_too_small_for_a_valid_audit_is_refused_with_the_minimum():
    with pytest.raises(ValueError, match=r"samples=1,000 is below the [\d,]+ a valid audit"):
        dpaudit.audit(M.GumbelTopK(k=2, epsilon=1.0), samples=1_000)
    with pytest.raises(ValueError, match="below the"):
        assert_private(M.GumbelTopK(k=2, epsilon=1.0), samples=1_000)
    with pytest.raises(ValueError, match="not both"):
        dpaudit.audit(M.GumbelTopK(k=2, epsilon=1.0), samples=20_000, budget=20_000)


@pytest.mark.parametrize(
    ("text", "samples", "seconds"),
    [
        ("2e7", 20_000_000, None),
        (2e7, 20_000_000, None),
        (5000, 5000, None),
        ("60s", None, 60.0),
        ("1.5m", None, 90.0),
    ],
)
def test_budget_reads_samples_or_seconds(text, samples, seconds):
    budget = Budget.parse(text)
    assert (budget.samples, budget.seconds) == (samples, seconds)


@pytest.mark.parametrize("text", ["lots", "-5s", 2.5, True, "0s", 0])
def test_budget_rejects_what_it_cannot_read(text):
    with pytest.raises(ValueError, match="budget"):
        Budget.parse(text)


class _PilotClock:
    """A clock on which every reading is 1/32 s after the one before: the pilot's rate is then
    fixed (no test may hang on the machine's speed or load)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        self.now += 1 / 32
        return self.now


def test_a_seconds_budget_becomes_samples_recorded_in_the_result(monkeypatch):
    from dpaudit.auditor.run import budgeting

    monkeypatch.setattr(budgeting, "time", _PilotClock())
    result = dpaudit.audit(M.GumbelTopK(k=1, epsilon=1.0), budget="1s", seed=0)
    chosen = result.evidence["budget"]
    # 8 pilot draws of 1000, 2000, ..., 128000 samples, each timed at 1/32 s, fill the pilot's
    # quarter second: 255,000 samples at 1.02M/s, of which the audit's 1 s affords 0.6 s.
    assert chosen == {"seconds": 1.0, "samples": 612_000, "pilot_samples": 255_000}
    assert result.samples_requested == chosen["samples"] and result.samples <= chosen["samples"]


def test_minimum_is_the_smallest_budget_whose_phases_fit():
    plan = AuditPlan(samples=10**6, seed=0, alpha=0.05)
    for n_pairs, search in [(None, True), (1, False), (2, True), (5, False)]:
        minimum = plan.minimum_samples(n_pairs, search)
        kept = plan.keep if n_pairs is None else min(plan.keep, n_pairs)
        shares = AuditPlan(samples=minimum, seed=0, alpha=0.05).budgets(
            plan.keep + 1 if n_pairs is None else n_pairs, search
        )
        assert shares["select"] >= 200 * 2 * kept and shares["confirm"] >= 200 * 2 * kept


def test_delta_witness_with_q_zero_ranks_high_in_screening():
    # Issue 20: an event with P ≈ 1.3 %, Q = 0 (a key released only when present) against
    # a claimed δ of 0.0049 is what violates the claim; the ε-type pair beside it has a
    # real but in-claim ratio. The beyond-the-claim ranking puts the δ pair first.
    key = NeighbourPair((1, 0), (0, 0), "x")
    ratio = NeighbourPair((3, 0), (2, 0), "x")
    n = 4_000
    pooled = {
        key.counts: (Counter({(0,): 52, (): n - 52}), n),
        key.counts2: (Counter({(): n}), n),
        ratio.counts: (Counter({(0,): 1_000, (1,): n - 1_000}), n),
        ratio.counts2: (Counter({(0,): 500, (1,): n - 500}), n),
    }
    claim = M.PrivacyClaim(1.0, 0.0049, M.AddRemoveUser())
    scores = screen_scores([ratio, key], pooled, 1_000_000, 0.05 / 18, claim)
    assert scores[1][0] > 1.5 > scores[0][0]  # δ bound over 1.5 claims of δ
    assert survivors([ratio, key], scores, 1) == [key]


def test_delta_slot_keeps_a_pair_whose_support_changes():
    present = NeighbourPair((1, 3, 3), (0, 3, 3), "x")
    ratio_a = NeighbourPair((3, 3, 3), (4, 3, 3), "x")
    ratio_b = NeighbourPair((3, 2, 3), (4, 2, 3), "x")
    assert support_changes(present) and not support_changes(ratio_a)
    scored = {ratio_a: (0.5, 0.5, 0.5, 0.0), ratio_b: (0.4, 0, 0, 0), present: (0, 0, 0, 0)}
    with_delta = M.PrivacyClaim(1.0, 1e-5, M.AddRemoveUser())
    pure = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())
    assert with_delta_slot([ratio_a, ratio_b], scored, with_delta) == [ratio_a, present]
    assert with_delta_slot([ratio_a, ratio_b], scored, pure) == [ratio_a, ratio_b]
    assert with_delta_slot([present, ratio_a], scored, with_delta) == [present, ratio_a]


def test_epsilon_slot_keeps_a_pair_whose_support_stays():
    # A correct Gaussian threshold (opendp-gaussian-threshold-delta-fixed, seed 2) kept three
    # pairs that each add a key: δ had power, ε none (Q = 0 events), so INCONCLUSIVE.
    added_a = NeighbourPair((14, 1, 0), (14, 0, 0), "x")
    added_b = NeighbourPair((3, 3, 1), (3, 3, 0), "x")
    stays_a = NeighbourPair((14, 2, 0), (14, 1, 0), "x")
    stays_b = NeighbourPair((3, 3, 2), (3, 3, 1), "x")
    assert support_changes(added_a) and not support_changes(stays_a)
    scored = {
        added_a: (3.0, 0.0, 0.0, 0.01),
        stays_a: (0.1, 0.2, 0.3, 0.0),
        added_b: (2.0, 0.0, 0.0, 0.01),
        stays_b: (0.1, 0.5, 0.1, 0.0),
    }
    with_delta = M.PrivacyClaim(1.0, 1e-3, M.AddRemoveUser())
    pure = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())
    assert with_epsilon_slot([added_a, added_b], scored, with_delta) == [added_a, stays_b]
    assert with_epsilon_slot([added_a, added_b], scored, pure) == [added_a, added_b]
    assert with_epsilon_slot([added_a], scored, with_delta) == [added_a]  # δ keeps its pair
    assert with_epsilon_slot([added_a, stays_a], scored, with_delta) == [added_a, stays_a]


def test_named_pairs_take_the_slots_of_screened_pairs():
    screened_a = NeighbourPair((3, 3, 3), (4, 3, 3), "add/remove")
    screened_b = NeighbourPair((3, 2, 3), (4, 2, 3), "add/remove")
    screened_c = NeighbourPair((5, 2, 3), (4, 2, 3), "add/remove")
    named_a = NeighbourPair((0, 0, 1), (0, 0, 0))  # the family of a pairs= pair
    named_b = NeighbourPair((1, 0, 0), (0, 0, 0), NAMED)
    scored = {
        named_a: (0.1, 0.1, 0.1, 0.0),
        named_b: (0.3, 0.3, 0.3, 0.0),
        screened_a: (2.0, 2.0, 2.0, 0.0),
        screened_b: (1.0, 1.0, 1.0, 0.0),
        screened_c: (0.5, 0.5, 0.5, 0.0),
    }
    kept = [screened_a, screened_b, screened_c]
    # Both named pairs come first, the better screened one first; the best screened pair stays.
    assert with_named_pairs(kept, scored, 3) == [named_b, named_a, screened_a]
    # A named pair screening kept stays; the other named pair takes the worst screened slot.
    assert with_named_pairs([screened_a, named_a, screened_b], scored, 3) == [
        named_a,
        named_b,
        screened_a,
    ]
    # More named pairs than slots: screening's choice among them stands.
    assert with_named_pairs([named_b], {named_a: scored[named_a], named_b: (1, 1, 1, 0)}, 1) == [
        named_b
    ]
    # Nothing named: unchanged.
    unnamed = {p: s for p, s in scored.items() if p.family != NAMED}
    assert with_named_pairs(kept, unnamed, 3) == kept
    # The δ slot does not take a named pair's place.
    with_delta = M.PrivacyClaim(1.0, 1e-5, M.AddRemoveUser())
    present = NeighbourPair((1, 3, 3), (0, 3, 3), "add/remove")
    both_named = [NeighbourPair((3, 3, 3), (4, 3, 3)), NeighbourPair((3, 2, 3), (4, 2, 3))]
    scored_delta = {**dict.fromkeys(both_named, (0.5, 0.5, 0.5, 0.0)), present: (0, 0, 0, 0.1)}
    assert with_delta_slot(both_named, scored_delta, with_delta) == both_named


def test_an_audit_confirms_the_pair_it_is_given():
    # A pair with no leak to speak of: screening ranks it low and drops it unless it is named.
    mech = M.GumbelTopK(k=2, epsilon=0.5)
    weak = ((0, 0, 0, 0, 1), (0, 0, 0, 0, 0))
    options = {"samples": 300_000, "seed": 0}

    def confirmed(result):
        return {frozenset((w.counts, w.counts2)) for w in result.witnesses}

    assert frozenset(weak) not in confirmed(dpaudit.audit(mech, **options))
    named = dpaudit.audit(mech, pairs=[weak], **options)
    assert frozenset(weak) in confirmed(named)
    assert named.verdict == "passed", str(named)


def test_power_shortfall_names_what_lacks_power():
    assert power_shortfall(1.3, 1e-6, 1.0, 1e-6, 1.25, False) == "epsilon"
    assert power_shortfall(1.2, 1e-5, 1.0, 1e-6, 1.25, False) == "delta"
    assert power_shortfall(1.2, 1e-5, 1.0, 1e-6, 1.25, True) is None
    assert power_shortfall(1.2, float("inf"), 1.0, 0.0, 1.25, False) is None  # δ = 0


def test_an_unresolvable_delta_is_inconclusive_and_says_what_it_could_resolve():
    # GumbelTopK(k=2, ε=0.5) audited against (1, 1e-9): 300k samples give ε its power, but a
    # δ of 1e-9 is beyond them: INCONCLUSIVE for δ, with the δ it could resolve and a rough
    # budget; an ε-only pass accepted explicitly is a PASS that says so, in text and JSON.
    mech = M.GumbelTopK(k=2, epsilon=0.5)
    options = {"samples": 300_000, "seed": 0, "claim": (1.0, 1e-9)}
    result = dpaudit.audit(mech, **options)
    assert result.verdict == "inconclusive" and result.power_shortfall == "delta"
    text = str(result)
    assert "Inconclusive for δ" in text and f"{result.detectable_delta:.3g}" in text
    assert result.samples_for_power > 1e9  # a claim of 1e-9 needs far more than 300k
    accepted = dpaudit.audit(mech, epsilon_only=True, **options)
    assert accepted.verdict == "passed" and accepted.epsilon_only and "ε only" in str(accepted)
    again = AuditResult.from_dict(accepted.to_dict())
    assert again.epsilon_only and again.verdict == "passed"
    assert again.detectable_delta == accepted.detectable_delta
    assert again.samples_requested == 300_000
    with pytest.raises(dpaudit.testing.AuditInconclusive, match="Inconclusive for δ"):
        assert_private(mech, **options)
    assert assert_private(mech, epsilon_only=True, **options).verdict == "passed"


def test_focus_keeps_the_nearest_and_the_best_powered_pair():
    from dpaudit.auditor.results.result import Witness

    def witness(eps_low, det_eps, det_delta):
        return Witness((1,), (0,), None, 0, 1, 0, 1, 0.0, 1.0, eps_low, 0.0, "", det_eps, det_delta)

    a, b, c = (NeighbourPair((i,), (i + 1,), "x") for i in range(3))
    latest = {a: [witness(0.1, 3.0, 1.0)], b: [witness(0.5, 2.0, 1.0)], c: [witness(0.0, 1.1, 0.1)]}
    claim = M.PrivacyClaim(1.0, 1e-3, M.AddRemoveUser())
    assert focus_pairs(latest, claim, "epsilon") == [b, c]
    assert focus_pairs(latest, claim, "delta") == [b, c]
    assert focus_pairs({a: latest[a], b: latest[b]}, claim, "delta") == [b, a]
    nothing = {p: [witness(0.0, float("inf"), float("inf"))] for p in (a, b)}
    assert focus_pairs(nothing, claim, "epsilon") == [a, b]  # nothing known: all go on
    # a pair whose events reach `alone_at` times the claim goes on alone (b: 0.5, c: 1.3 claims)
    assert focus_pairs(latest, claim, "epsilon", alone_at=1.25) == [b, c]
    beyond = {**latest, c: [witness(1.3, 5.0, 1.0)]}
    assert focus_pairs(beyond, claim, "epsilon", alone_at=1.25) == [c]
    assert focus_pairs(beyond, claim, "epsilon", alone_at=1.5) == [c, b]
    assert focus_pairs(beyond, claim, "epsilon") == [c, b]


def test_assured_nearness_takes_one_standard_error_off_the_estimate():
    from dpaudit.auditor.confirm.focus import nearness
    from dpaudit.auditor.results.result import Witness

    rare = Witness((1,), (0,), None, 12, 1000, 8, 1000, 0.0, 1.0, 0.0, 0.0, "", 1.0, 1.0)
    claim = M.PrivacyClaim(0.1, 0.0, M.BoundedChange(1))
    estimate = np.log(12 / 8)
    assert nearness([rare], claim) == pytest.approx(estimate / 0.1)
    assured = max(estimate - np.sqrt(1 / 12 + 1 / 8), 0.0) / 0.1
    assert nearness([rare], claim, assured=True) == pytest.approx(assured)
    # a lucky rare event does not outrank a steady likely one when one pair goes on alone
    steady = Witness((2,), (1,), None, 3000, 10000, 2600, 10000, 0.0, 1.0, 0.0, 0.0, "", 1.0, 1.0)
    a, b = NeighbourPair((1,), (0,), "x"), NeighbourPair((2,), (1,), "x")
    assert focus_pairs({a: [rare], b: [steady]}, claim, "epsilon", alone_at=1.0) == [b]
    assert focus_pairs({a: [rare], b: [steady]}, claim, "epsilon")[0] == a


def test_a_pair_left_behind_competes_again_once_those_going_on_collapse():
    from dpaudit.auditor.results.result import Witness

    claim = M.PrivacyClaim(0.1, 0.0, M.BoundedChange(1))

    def seen(hits_p, hits_q, n=100_000):
        return [Witness((1,), (0,), None, hits_p, n, hits_q, n, 0.0, 1.0, 0.0, 0.0, "", 1.0, 1.0)]

    a, b = NeighbourPair((1,), (0,), "x"), NeighbourPair((2,), (1,), "x")
    # b, left behind, looks 2.7 claims (ln 1.3 less a standard error); a, going on, 1.4:
    # a still looks beyond the claim, so it goes on and b waits.
    going, left = seen(11_500, 10_000), seen(13_000, 10_000)
    assert focus_pairs({a: going, b: left}, claim, "epsilon", alone_at=1.0, going_on=[a]) == [a]
    # a collapsed (P̂ = Q̂): every pair competes, and b comes back alone.
    collapsed = seen(10_000, 10_000)
    assert focus_pairs({a: collapsed, b: left}, claim, "epsilon", alone_at=1.0, going_on=[a]) == [b]
    # Without going_on (or with every pair going on) all compete: b, the surest.
    assert focus_pairs({a: going, b: left}, claim, "epsilon", alone_at=1.0) == [b]


def _tallied(hits_p, hits_q, pair=((1, 0), (0, 0)), n=657_892):
    return Witness(*pair, None, hits_p, n, hits_q, n, 0.0, 1.0, 0.0, 0.0)


#: A claim of issue 20's threshold bugs: ε = ln 3 (e^ε = 3), a small δ.
THRESHOLD_CLAIM = M.PrivacyClaim(float(np.log(3.0)), 1.5e-5, M.AddRemoveUser())
#: The P a Q = 0 event needs to be flagged, more likely than not, at a last look of 5.26M.
FLAGGED_AT = p_needed(0, 5_263_136, 5_263_136, 0.05 / 108, np.log(3.0), 1.5e-5, probability=0.5)


def test_delta_promise_is_p_hat_of_a_key_release_over_the_p_flagged():
    released = _tallied(30, 0)  # a key released 30 times when present, never when absent
    assert delta_promise([released], FLAGGED_AT) == pytest.approx(30 / 657_892 / FLAGGED_AT)
    assert delta_promise([released], FLAGGED_AT) > 1 > delta_promise([_tallied(15, 0)], FLAGGED_AT)
    assert delta_promise([_tallied(30, 1)], FLAGGED_AT) == 0.0  # seen on Q: not Q = 0
    # A rare outcome unseen on Q where the support does not change is no key release.
    assert delta_promise([_tallied(30, 0, ((2, 1), (2, 2)))], FLAGGED_AT) == 0.0
    assert delta_promise([released], float("inf")) == 0.0  # a claim of δ = 0


def test_focus_puts_the_pair_whose_key_release_would_be_flagged_first():
    # The likely event's P̂ − 3 Q̂ is one standard error of noise (1.3e-3) above 0, which is
    # about 7 claimed δs of 1.5e-5: nearness ranks that pair above the key released 30 times
    # in 657,892 and never without it (4.6e-5, 3× the claim). The key's pair goes first.
    likely = NeighbourPair((10, 9), (10, 8), "x")
    key = NeighbourPair((1, 0), (0, 0), "x")
    latest = {
        likely: [_tallied(174_000, 57_700, (likely.counts, likely.counts2))],
        key: [_tallied(30, 0)],
    }
    assert nearness(latest[likely], THRESHOLD_CLAIM) > nearness(latest[key], THRESHOLD_CLAIM)
    assert focus_pairs(latest, THRESHOLD_CLAIM, None, FLAGGED_AT) == [key, likely]
    assert focus_pairs(latest, THRESHOLD_CLAIM, None) == [likely]  # no flagged_at: no δ pick
    # A key released 15 times (below the 18.2 hits of FLAGGED_AT) is no priority.
    latest[key] = [_tallied(15, 0)]
    assert focus_pairs(latest, THRESHOLD_CLAIM, None, FLAGGED_AT)[0] == likely


def test_a_key_release_is_judged_at_the_focus_look():
    # Before the focus look (here 125,000 samples) a release never seen on Q holds power's
    # stop back; from it on, or where the support does not change, or once seen on Q, not.
    focus_size = 125_000
    assert release_unjudged([_tallied(0, 0, n=31_250)], focus_size)
    assert not release_unjudged([_tallied(3, 0, n=125_000)], focus_size)
    assert not release_unjudged([_tallied(0, 0, ((2, 1), (2, 2)), n=31_250)], focus_size)
    assert not release_unjudged([_tallied(3, 1, n=31_250)], focus_size)


@pytest.mark.parametrize("reserve", [True, False])
def test_confirmation_reserves_the_last_look_for_a_first_pair_that_needs_it(reserve):
    # Sizes 100, 200, 400, 800 per histogram; two pairs of two histograms each. The budget
    # is both pairs up to the focus look (4 × 200) and one pair from there to the last look
    # (2 × 600). Reserved, the first pair reaches the last look and the second stops at the
    # focus look; unreserved, both stop at look 2 with the budget shared equally.
    first, second = NeighbourPair((1, 0), (0, 0), "x"), NeighbourPair((3, 3), (4, 3), "x")
    chosen = [(first, first, None), (second, second, None)]
    drawn = []

    def draw(step, moves, active):
        (move,) = set(moves.values())  # every histogram makes the same move
        drawn.append((step, 100 * 2 ** move[1], tuple(active)))
        return {}

    witnesses, last_look, stopped = confirm_sequentially(
        chosen,
        draw,
        LookSchedule(100, 2.0, 4),
        0.01,
        THRESHOLD_CLAIM,
        enough=lambda found: False,
        budget=4 * 200 + 2 * 600,
        focus=lambda latest, going_on: list(latest if going_on is None else going_on),
        focus_look=1,
        tester=lambda mine, samples, level, claim: [_tallied(1, 0)],
        reserve=lambda found: reserve,
    )
    widths = [(look, size, len(active)) for look, size, active in drawn]
    assert widths[:2] == [(0, 100, 2), (1, 200, 2)]  # draw brings each histogram to size
    if reserve:
        assert last_look == {0: 3, 1: 1}
        assert widths[2:] == [(2, 400, 1), (3, 800, 1)]
    else:
        assert last_look == {0: 2, 1: 2}
        assert widths[2:] == [(2, 400, 2)]
    assert len(witnesses) == 2 and stopped is None


def _looks_of_collapsing_pairs(hits, budget):
    # Pairs a and b; looks of 100, 200, 400, 800 samples. focus: the pair whose latest
    # witness has most hits on P (``hits[pair][look]``). Records (step, pairs, the moves).
    a, b = NeighbourPair((1, 0), (0, 0), "x"), NeighbourPair((3, 3), (4, 3), "x")
    hits = {a: hits[0], b: hits[1]}
    drawn, levels = [], []

    def draw(step, moves, active):
        drawn.append((step, tuple(active), sorted(set(moves.values()))))
        return {}

    def tester(mine, samples, level, claim):
        pair = mine[0][0]
        levels.append((pair, level))
        return [_tallied(hits[pair][len([p for p, _ in levels if p == pair]) - 1], 0)]

    def most_hits(latest, going_on):
        return [max(latest, key=lambda p: latest[p][0].hits_p)]

    _, last_look, _ = confirm_sequentially(
        [(a, a, None), (b, b, None)],
        draw,
        LookSchedule(100, 2.0, 4),
        0.01,
        THRESHOLD_CLAIM,
        enough=lambda found: False,
        budget=budget,
        focus=most_hits,
        tester=tester,
    )
    return a, b, drawn, levels, last_look


def test_a_pair_left_behind_comes_back_when_the_one_that_went_on_collapses():
    # a goes on alone after look 0 and collapses at look 1: b, left at look 0, comes back
    # at its own next look, 1 (a move from look 0 to look 1), then 2 and 3. Once b is at
    # the last look, the budget left (10,000 less 2,000 drawn) goes to a, the only pair
    # that can still move: looks 2 and 3 (3,200 in all). Every pair's bounds at look j are
    # at look j's α-spending level, each look once.
    a, b, drawn, levels, last_look = _looks_of_collapsing_pairs(
        ([30, 1, 1, 1], [20, 20, 20, 20]), budget=10_000
    )
    assert drawn == [
        (0, (a, b), [(-1, 0)]),
        (1, (a,), [(0, 1)]),
        (2, (b,), [(0, 1)]),
        (3, (b,), [(1, 2)]),
        (4, (b,), [(2, 3)]),
        (5, (a,), [(1, 2)]),
        (6, (a,), [(2, 3)]),
    ]
    schedule = LookSchedule(100, 2.0, 4)
    for pair in (a, b):
        assert [level for p, level in levels if p == pair] == [
            schedule.alpha_at(0.01, j) for j in range(4)
        ]
    assert last_look == {0: 3, 1: 3}


def test_the_budget_left_when_the_pairs_going_on_end_goes_to_the_others():
    # The same looks with a budget that ends at b's last look (2,000): nothing is left for
    # a, which stays at look 1, as before the budget left was handed on.
    a, b, drawn, _, last_look = _looks_of_collapsing_pairs(
        ([30, 1, 1, 1], [20, 20, 20, 20]), budget=2_000
    )
    assert drawn[-1] == (4, (b,), [(2, 3)]) and last_look == {0: 1, 1: 3}
    # With 400 more, a gets its look 2 (2 × 200 more per histogram), not look 3.
    a, b, drawn, _, last_look = _looks_of_collapsing_pairs(
        ([30, 1, 1, 1], [20, 20, 20, 20]), budget=2_400
    )
    assert drawn[-1] == (5, (a,), [(1, 2)]) and last_look == {0: 2, 1: 3}


def test_a_pair_too_costly_for_the_budget_is_passed_over():
    # a reaches look 2 and collapses to 5 hits; b comes back at look 1 and falls to 1, so
    # focus picks a again. a's look 3 (2 × 400 more) does not fit in a budget of 1,700
    # with 1,200 spent; b, drawn the step before, goes on to look 2 (2 × 200 more).
    a, b, drawn, _, last_look = _looks_of_collapsing_pairs(
        ([30, 30, 5, 5], [20, 1, 1, 1]), budget=1_700
    )
    assert drawn == [
        (0, (a, b), [(-1, 0)]),
        (1, (a,), [(0, 1)]),
        (2, (a,), [(1, 2)]),
        (3, (b,), [(0, 1)]),
        (4, (b,), [(1, 2)]),
    ]
    assert last_look == {0: 2, 1: 2}


def test_pairs_that_share_a_histogram_move_to_the_same_look():
    # b left behind at look 0, a at look 2: a pair over a's and b's second histograms goes
    # to look 3, and so does every histogram of its pairs.
    a, b = NeighbourPair((1, 0), (0, 0), "x"), NeighbourPair((3, 3), (4, 3), "x")
    look_of = {(1, 0): 2, (0, 0): 2, (3, 3): 0, (4, 3): 0}
    shared = NeighbourPair((0, 0), (4, 3), "x")
    assert next_looks([b], look_of, 3) == {(3, 3): 1, (4, 3): 1}
    assert next_looks([b, shared], look_of, 3) == dict.fromkeys([(3, 3), (4, 3), (0, 0)], 3)
    assert next_looks([a], {**look_of, (1, 0): 3}, 3) == {}  # past the last look


def test_adaptive_audit_is_the_same_for_one_process_and_a_pool(monkeypatch):
    from dpaudit.auditor.sources import sampling

    monkeypatch.setattr(sampling, "PARALLEL_MIN_CHUNK", 5_000)
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    one = dpaudit.audit(mech, samples=200_000, seed=5, chunk=20_000)
    pool = dpaudit.audit(mech, samples=200_000, seed=5, workers=2, chunk=20_000)
    assert one.witnesses == pool.witnesses and one.samples == pool.samples
    assert one.evidence["confirmation_looks"] == pool.evidence["confirmation_looks"]


def _exact_pq(mech, w):
    """The exact ``(P, Q)`` of a witness's event, None for an event over a learned score
    (not a union of boxes: :mod:`dpaudit.exact.value_laws`)."""
    if hasattr(w.event, "encoder"):
        with working_precision():
            p = value_event_probability(mech, w.counts, w.event)
            q = value_event_probability(mech, w.counts2, w.event)
        return None if p is None or q is None else (float(p), float(q))
    law_p = output_law(mech, np.array(w.counts))
    law_q = output_law(mech, np.array(w.counts2))
    p = sum(float(v) for o, v in law_p.items() if events_hits([w.event], {o: 1})[0])
    q = sum(float(v) for o, v in law_q.items() if events_hits([w.event], {o: 1})[0])
    return p, q


def _wrong_side(result, mech):
    """Some witness's p_low above its exact P or q_high below its exact Q."""
    for w in result.witnesses:
        exact = _exact_pq(mech, w)
        if exact is not None and (w.p_low > exact[0] + 1e-12 or w.q_high < exact[1] - 1e-12):
            return True
    return False


@pytest.mark.slow
def test_adaptive_bounds_are_valid_against_exact_laws():
    # Issue 20 validity: 150 adaptive audits (sequential confirmation on, data-dependent
    # stopping and focus) of correct mechanisms with exact laws — a selection mechanism, a
    # threshold mechanism and a value release (noisy counts of the selected item, confirmed
    # per kept pair in looks), tiny domains — at alpha = 0.2 so that wrong sides would show.
    # The number of audits with any bound on the wrong side of its exact probability is at
    # most the binomial 99.9 % quantile of Bin(150, alpha) (46): a valid auditor fails this
    # with probability <= 0.001, and a wrong-side rate of 0.361 fails it with probability
    # >= 0.9. (A value event over a learned score has no closed-form probability and is not
    # checked; its bounds come from the same looks.) The slow step runs the first 150 of the
    # 500 audits of the full sweep (250 took 728 s of the slow step once every audit of a
    # declaring mechanism ran the grey-box δ stage):
    # `python benchmarks/bench_validity.py` runs all 500 (quantile 128, which a wrong-side rate
    # of 0.283 fails with probability >= 0.9) and prints the count per mechanism.
    # The audits are black-box: what is checked is the sampled bounds of the looks, and the
    # grey-box stages only take a share of alpha from them (their own bounds are checked against
    # exact laws in tests/dpaudit/auditor/greybox), so at the full alpha the check is the
    # stricter one; the δ stage's fixed runs were four fifths of a 12,000-sample LimitDomain audit.
    alpha, audits = 0.2, 150
    mechs = [
        (M.GumbelTopK(k=1, epsilon=1.0), 3, 12_000),
        (M.LimitDomain(k=1, kbar=2, epsilon=1.0, delta=1e-2), 4, 12_000),
        (M.NoisyCountsRelease(M.GumbelTopK(k=1, epsilon=1.0), epsilon_counts=1.0), 3, 20_000),
    ]
    wrong = 0
    for i in range(audits):
        mech, d, samples = mechs[i % 3]
        result = dpaudit.audit(
            mech, samples=samples, seed=i, alpha=alpha, domain_size=d, black_box=True
        )
        wrong += _wrong_side(result, mech)
    print(f"adaptive audits: {wrong}/{audits} with a bound on the wrong side (alpha {alpha})")
    assert wrong <= binom.ppf(0.999, audits, alpha)
