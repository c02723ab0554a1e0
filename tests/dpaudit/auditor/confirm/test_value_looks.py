"""A value release confirmed in looks (dpaudit.auditor.confirm.value_looks): its streams, its
budget, and a correct release stopping early, the same on one process and a pool."""

import pytest

import dpaudit
import mechanisms as M
from dpaudit.auditor.bounds.statistics import detectable_epsilon, event_bounds
from dpaudit.auditor.confirm.value_looks import confirm_selections_in_looks, value_stream_round
from dpaudit.auditor.planning.plan import AuditPlan
from dpaudit.auditor.results.witness import Witness
from dpaudit.auditor.run.live import LiveSchedule
from dpaudit.auditor.run.selecting import Selection
from dpaudit.catalog import catalog_entry
from dpaudit.neighbours.pairs import NeighbourPair


@pytest.mark.parametrize("n_selections", [1, 2, 3, 5])
def test_each_selection_and_look_has_its_own_confirm_stream(n_selections):
    rounds = [value_stream_round(i, j, n_selections) for i in range(n_selections) for j in range(6)]
    assert len(set(rounds)) == len(rounds) and min(rounds) >= 1
    # Look 0 is the stream of a one-look confirmation of the selection.
    assert [value_stream_round(i, 0, n_selections) for i in range(n_selections)] == [
        1 + i for i in range(n_selections)
    ]
    with pytest.raises(ValueError, match="position must be in"):
        value_stream_round(n_selections, 0, n_selections)


def _unpowered(pair, n):
    # Hits on neither side: no estimate near the claim, no power (never enough to stop).
    return Witness(pair.counts, pair.counts2, None, 0, n, 0, n, 0.0, 1.0, 0.0, 0.0)


def _even(n, level, claim):
    # Half the samples on each side: the event's ε estimate is 0.
    half = n // 2
    p_low, q_high, eps_b, delta_b = event_bounds(half, n, half, n, level, claim.epsilon, 0.0)
    power = detectable_epsilon(half, n, n, level, claim.epsilon, 0.0)
    return Witness(
        (1, 0), (0, 0), None, half, n, half, n, p_low, q_high, eps_b, delta_b, "x", power
    )


def test_value_looks_spend_no_more_than_one_fixed_look_per_selection():
    # Three kept pairs that never reach power or near the claim: looks of f·2^j samples per
    # histogram, a budget of 80 f (the last look, 32 f, for one pair and 4 f for the others).
    # All three draw up to look 3 (48 f), the first two look 4 (80 f); look 5 does not fit.
    # Never more than three fixed confirmations would draw, and the first pairs go further.
    plan = AuditPlan(samples=1_000_000, seed=0, alpha=0.05)
    schedule = LiveSchedule(plan, plan.budgets(10, False), 10, values=True)
    looks = schedule.value_looks(3)
    fixed = 2 * 3 * schedule.pair_confirm_size(3)
    assert looks.budget == fixed
    pairs = [NeighbourPair((i + 1, 0), (i, 0), "x") for i in range(3)]
    selections = [Selection((p,), ("an event",)) for p in pairs]
    drawn, totals = [], {}

    def draw(position, look, size):
        drawn.append((position, look, size))
        totals[position] = totals.get(position, 0) + size
        return totals[position]

    def tester(chosen, n, level, claim):
        assert level == looks.schedule.alpha_at(0.01, 0)
        return [_unpowered(pairs[0], n)]

    claim = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())
    _, record = confirm_selections_in_looks(selections, draw, looks, 0.01, claim, tester)
    sizes = looks.schedule.sizes()
    assert record["sizes"] == sizes
    assert record["last_look_of_pair"] == {"0": 4, "1": 4, "2": 3}
    assert totals == {0: sizes[4], 1: sizes[4], 2: sizes[3]}
    assert 2 * sum(totals.values()) <= fixed
    assert sizes[4] > schedule.pair_confirm_size(3)


def test_a_correct_value_release_stops_early_the_same_on_a_pool(monkeypatch):
    # A correct noisy-count release (Laplace(1/ε) on every count, real values): power is
    # reached and no estimate nears the claim before the last look, so confirmation stops
    # and the audit draws less than its budget; a pool of two draws the same samples.
    from dpaudit.auditor.sources import sampling

    monkeypatch.setattr(sampling, "PARALLEL_MIN_CHUNK", 5_000)
    entry = catalog_entry("noisy-counts-half-noise")
    base = {"samples": 600_000, "seed": 0, "counts": [3, 2, 2, 0, 0], "restrict": True}
    one = dpaudit.audit(entry.correct(), chunk=20_000, **base)
    pool = dpaudit.audit(entry.correct(), chunk=20_000, workers=2, **base)
    # A pass needs power on every confirmed event (AuditResult.event_power); at this budget
    # some event lacks it, so an INCONCLUSIVE naming it is the honest verdict (the former
    # PASS sentence was untrue of that event).
    assert one.verdict == "passed" or one.events_without_power, str(one)
    assert one.verdict == pool.verdict
    looks = one.evidence["confirmation_looks"]
    assert max(looks["last_look_of_pair"].values()) < len(looks["sizes"]) - 1
    assert one.samples < one.samples_requested
    assert one.witnesses == pool.witnesses and one.samples == pool.samples
    assert looks == pool.evidence["confirmation_looks"]


def test_value_looks_stop_for_futility_when_no_selection_can_reach_the_claim():
    # Every event at P̂ = Q̂ = 1/2 under a claim of ε = 0.05: by look 2 no event's limits leave
    # room for a violation the looks ahead could flag, and even the last look would detect
    # only ε > 1.25 × 0.05 and tell no pair's histograms apart (a pass needs one). All
    # selections stop after that look, and the record says why.
    plan = AuditPlan(samples=1_000_000, seed=0, alpha=0.05)
    schedule = LiveSchedule(plan, plan.budgets(10, False), 10, values=True)
    looks = schedule.value_looks(3)
    pairs = [NeighbourPair((i + 1, 0), (i, 0), "x") for i in range(3)]
    selections = [Selection((p,), ("an event",)) for p in pairs]
    totals: dict = {}

    def draw(position, look, size):
        totals[position] = totals.get(position, 0) + size
        return totals[position]

    def tester(chosen, n, level, claim):
        return [_even(n, level, claim)]

    claim = M.PrivacyClaim(0.05, 0.0, M.AddRemoveUser())
    _, record = confirm_selections_in_looks(selections, draw, looks, 0.01, claim, tester)
    stopped = record["futility"]
    assert stopped["lacking"] == "separation"
    assert stopped["detectable_epsilon_at_last_look"] > 0.0625
    assert 0 < stopped["look"] < len(record["sizes"]) - 1
    assert set(record["last_look_of_pair"].values()) == {stopped["look"]}


def test_a_selection_left_behind_comes_back_from_where_it_stopped():
    # Two selections under a claim of ε = 0.1, drawn together up to the focus look (2).
    # There selection 0's estimate, less one standard error, is 3.8 claims (ln 1.5) and
    # selection 1's 2.5 (ln 4/3): 0 goes on alone. At look 3 selection 0 collapses
    # (P̂ = Q̂), and 1, left at look 2, comes back at its own next look, 3, then 4, each on
    # its own stream. Its look 5 (266,656 more per histogram) is beyond the budget of 600k.
    plan = AuditPlan(samples=1_000_000, seed=0, alpha=0.05)
    schedule = LiveSchedule(plan, plan.budgets(10, False), 10, values=True)
    looks = schedule.value_looks(2)
    sizes = looks.schedule.sizes()
    assert looks.focus_look == 2 and looks.budget == 600_000
    pairs = [NeighbourPair((i + 1, 0), (i, 0), "x") for i in range(2)]
    selections = [Selection((p,), ("an event",)) for p in pairs]
    drawn, totals = [], {}
    shares = {0: [(0.3, 0.2)] * 3 + [(0.2, 0.2)], 1: [(0.2, 0.15)]}

    def draw(position, look, size):
        drawn.append((position, look, size))
        totals[position] = totals.get(position, 0) + size
        return position, totals[position], len([d for d in drawn if d[0] == position]) - 1

    def tester(chosen, tallied, level, claim):
        position, n, turn = tallied
        p, q = shares[position][min(turn, len(shares[position]) - 1)]
        return [Witness((1, 0), (0, 0), None, int(p * n), n, int(q * n), n, 0.0, 1.0, 0.0, 0.0)]

    claim = M.PrivacyClaim(0.1, 0.0, M.AddRemoveUser())
    _, record = confirm_selections_in_looks(selections, draw, looks, 0.01, claim, tester)
    together = [(i, j, sizes[j] - (sizes[j - 1] if j else 0)) for j in range(3) for i in (0, 1)]
    back = [(1, 3, sizes[3] - sizes[2]), (1, 4, sizes[4] - sizes[3])]
    assert drawn == [*together, (0, 3, sizes[3] - sizes[2]), *back]
    assert record["last_look_of_pair"] == {"0": 3, "1": 4}


def test_the_budget_left_goes_to_a_selection_behind_once_the_one_going_on_ends():
    # Selection 0 looks 3.8 claims beyond ε = 0.1 at every look and goes on alone to the last
    # look (5); selection 1 stays at the focus look (2). With the planned budget that is all;
    # with its next look's cost more (what the phases before left unspent), 1 gets look 3.
    from dataclasses import replace

    plan = AuditPlan(samples=1_000_000, seed=0, alpha=0.05)
    schedule = LiveSchedule(plan, plan.budgets(10, False), 10, values=True)
    planned = schedule.value_looks(2)
    sizes = planned.schedule.sizes()
    pairs = [NeighbourPair((i + 1, 0), (i, 0), "x") for i in range(2)]
    selections = [Selection((p,), ("an event",)) for p in pairs]
    shares = {0: (0.3, 0.2), 1: (0.2, 0.15)}
    claim = M.PrivacyClaim(0.1, 0.0, M.AddRemoveUser())

    def run(looks):
        drawn, totals = [], {}

        def draw(position, look, size):
            drawn.append((position, look))
            totals[position] = totals.get(position, 0) + size
            return position, totals[position]

        def tester(chosen, tallied, level, claim):
            position, n = tallied
            p, q = shares[position]
            return [Witness((1, 0), (0, 0), None, int(p * n), n, int(q * n), n, 0.0, 1.0, 0.0, 0.0)]

        _, record = confirm_selections_in_looks(selections, draw, looks, 0.01, claim, tester)
        return drawn, record["last_look_of_pair"]

    drawn, last = run(planned)
    assert last == {"0": 5, "1": 2} and drawn[-1] == (0, 5)
    more = replace(planned, budget=planned.budget + 2 * (sizes[3] - sizes[2]))
    drawn, last = run(more)
    assert last == {"0": 5, "1": 3} and drawn[-2:] == [(0, 5), (1, 3)]
