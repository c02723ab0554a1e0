"""The one audit pipeline (dpaudit.auditor.run.pipeline) over any sample source.

A toy source written here (a coin whose bias depends on one count) shows the pipeline
needs nothing but the SampleSource protocol; a recording tester checks that the tester
sees only confirm-phase tallies, drawn on the plan's confirm streams, at the schedule's
Bonferroni level.
"""

from collections import Counter

import numpy as np

import mechanisms as M
from dpaudit.auditor.confirm.confirmation import confirm_events
from dpaudit.auditor.interfaces import SampleSource, Tally
from dpaudit.auditor.offline import FileDraws, fill_outcomes, read_plan, write_plan
from dpaudit.auditor.planning.plan import AuditPlan
from dpaudit.auditor.run.live import LiveSchedule, LiveSource
from dpaudit.auditor.run.pipeline import draw_up_to, run_pipeline, with_samples_left
from dpaudit.auditor.run.schedule import histograms_of
from dpaudit.auditor.run.selecting import screening_encoder
from dpaudit.auditor.sources.executors import LocalExecutor
from dpaudit.neighbours.pairs import NeighbourPair


class BiasedCoin:
    """Outcome (0,) with probability 0.9 when item 0 counts >= 1, else 0.1: ε = ln 81."""

    value_width = 0
    width = 1
    description = "toy coin"

    def __init__(self, plan):
        self.plan = plan
        self.samples = 0
        self.phases = []

    def draw(self, phase, round_, histograms, per_histogram, encoder=None):
        self.phases.append(phase)
        out = {}
        for i, h in enumerate(histograms):
            rng = np.random.default_rng(self.plan.seed_for(phase, round_, i))
            heads = int(rng.binomial(per_histogram, 0.9 if h[0] >= 1 else 0.1))
            out[h] = Tally(Counter({(0,): heads, (1,): per_histogram - heads}), per_histogram)
            self.samples += per_histogram
        return out

    def raw(self, phase, round_, histograms, per_histogram):
        raise AssertionError("no real values: never asked for raw samples")


def _pairs():
    return [
        NeighbourPair((1, 0), (0, 0), "toy"),
        NeighbourPair((2, 0), (2, 1), "toy"),
        NeighbourPair((0, 3), (0, 2), "toy"),
    ]


def test_the_pipeline_runs_over_any_sample_source():
    # ln 81 = 4.39 against a claim of 0.5: the witness pair is the only one that moves.
    plan = AuditPlan(samples=40_000, seed=5, alpha=0.05, keep=2)
    source = BiasedCoin(plan)
    assert isinstance(source, SampleSource)
    candidates = _pairs()
    schedule = LiveSchedule(plan, plan.budgets(len(candidates), False), len(candidates))
    claim = M.PrivacyClaim(0.5, 0.0, M.AddRemoveUser())
    findings = run_pipeline(source, candidates, claim, schedule)
    best = max(findings.witnesses, key=lambda w: w.epsilon_lower)
    assert {best.counts, best.counts2} == {(1, 0), (0, 0)}
    assert 0.5 < best.epsilon_lower < np.log(81)
    assert source.phases[-1] == "confirm" and "confirm" not in source.phases[:-1]


def test_confirmation_gets_what_the_phases_before_left_unspent():
    # Planned: confirmation's share of 40,000. Drawn before it: all but that share and
    # 1,000 more, which the looks may then spend; their sizes and levels stay as planned.
    plan = AuditPlan(samples=40_000, seed=5, alpha=0.05, keep=2)
    candidates = _pairs()
    schedule = LiveSchedule(plan, plan.budgets(len(candidates), False), len(candidates))
    looks = schedule.confirm_looks(4)
    before = plan.samples - looks.budget
    wider = with_samples_left(looks, schedule, before - 1_000)
    assert wider.budget == looks.budget + 1_000 == plan.samples - (before - 1_000)
    assert (wider.schedule, wider.focus_look) == (looks.schedule, looks.focus_look)
    assert with_samples_left(looks, schedule, before) == looks  # nothing left over
    assert with_samples_left(None, schedule, 0) is None  # one fixed confirmation


def _recorded_run(looks):
    mech = M.GumbelTopK(k=1, epsilon=1.0)
    plan = AuditPlan(samples=20_000, seed=2, alpha=0.05, keep=2, looks=looks)
    calls = []

    def recording(chosen, tallies, alpha_each, claim):
        calls.append((dict(tallies), alpha_each))
        return confirm_events(chosen, tallies, alpha_each, claim)

    candidates = _pairs()[:2]
    schedule = LiveSchedule(plan, plan.budgets(len(candidates), False), len(candidates))
    source = LiveSource(plan, LocalExecutor(mech, 1))
    findings = run_pipeline(source, candidates, mech.claim, schedule, recording)
    return mech, plan, schedule, findings, calls


def test_the_tester_sees_the_confirm_streams_at_the_schedule_level():
    # One look: one confirmation draw on round 0 of the confirm streams, at the full level.
    mech, plan, schedule, findings, calls = _recorded_run(looks=1)
    assert calls and all(a == plan.alpha_each(2) == 0.05 / (2 * 2 * 3) for _, a in calls)
    confirmed = list(dict.fromkeys(c[0] for c in findings.chosen))
    histograms = histograms_of(confirmed)
    [size] = schedule.confirm_looks(len(histograms)).schedule.sizes()
    seeds = [plan.seed_for("confirm", 0, i) for i in range(len(histograms))]
    direct = LocalExecutor(mech, 1).draw([np.array(h) for h in histograms], size, seeds)
    tallies = calls[-1][0]
    assert [tallies[h] for h in histograms] == [Tally(*d) for d in direct]
    assert len(findings.witnesses) == len(findings.chosen) > 0
    assert findings.looks["last_look_of_pair"] == {str(i): 0 for i in range(len(confirmed))}


def test_each_look_bounds_at_its_alpha_spending_share():
    # Six looks: every call at alpha_each / 6, on tallies that only grow.
    _, plan, _, findings, calls = _recorded_run(looks=6)
    assert calls and all(a == plan.alpha_each(2) / 6 for _, a in calls)
    assert findings.looks["alpha_each_look"] == plan.alpha_each(2) / 6
    sizes = [max(t.n for t in tallies.values()) for tallies, _ in calls]
    assert sizes == sorted(sizes) and set(sizes) <= set(findings.looks["sizes"])


def test_live_and_file_sources_are_sample_sources(tmp_path):
    mech = M.GumbelTopK(k=1, epsilon=1.0)
    plan = AuditPlan(samples=2_000, seed=0, alpha=0.05)
    assert isinstance(LiveSource(plan, LocalExecutor(mech, 1), mech), SampleSource)
    write_plan(tmp_path, mech, samples=2_000, max_pairs=2)
    fill_outcomes(tmp_path, mech, fmt="jsonl")
    assert isinstance(FileDraws(tmp_path, read_plan(tmp_path)), SampleSource)


class _FixedValues:
    """Raw samples that release the same values (item 0) for every histogram."""

    width, value_width = 1, 1

    def __init__(self, values):
        self.values = np.array(values, dtype=float)[:, None]

    def raw(self, phase, round_, histograms, per_histogram):
        items = np.zeros((self.values.shape[0], 1), dtype=np.int64)
        return [M.MixedBatch(items, self.values) for _ in histograms]


class _WholePilot:
    def pilot(self, histograms):
        return list(histograms), 4


def test_screening_codes_released_doubles_by_their_grid_and_integers_not():
    # The grid of a double is a fixed function of the value: screening can rank pairs by it
    # without learning; integer releases (exact on doubles) have no grid to tell apart.
    doubles = screening_encoder(_FixedValues([0.3, -1.7, np.nan, 2.0]), _pairs(), _WholePilot())
    integers = screening_encoder(_FixedValues([3.0, -1.0, np.nan, 2.0]), _pairs(), _WholePilot())
    assert doubles.grid and not integers.grid
    assert not doubles.items_only and doubles.score is None


def test_a_histogram_that_comes_back_draws_fresh_resume_streams():
    # Sizes 100, 200, 400, 800, step 3. Histogram a, moved from look 2 to look 3, continues
    # on round 3 of the confirm streams; b and c, from look 0 to look 1, draw round
    # (3 · 4 + 0 + 1) · 4 + 1 = 53 of the resume streams; d, new, from none to look 0,
    # round (3 · 4 − 1 + 1) · 4 + 0 = 48.
    calls = []

    class Recording:
        def draw(self, phase, round_, histograms, per_histogram, encoder=None):
            calls.append((phase, round_, tuple(histograms), per_histogram))
            return {h: Tally(Counter(), per_histogram) for h in histograms}

    a, b, c, d = (1, 0), (0, 0), (2, 0), (3, 0)
    moves = {a: (2, 3), b: (0, 1), c: (0, 1), d: (-1, 0)}
    drawn = draw_up_to(Recording(), [100, 200, 400, 800], 3, moves)
    assert calls == [
        ("confirm", 3, (a,), 400),
        ("resume", 53, (b, c), 100),
        ("resume", 48, (d,), 100),
    ]
    assert {h: t.n for h, t in drawn.items()} == {a: 400, b: 100, c: 100, d: 100}
    # Every move of every step has its own round: no stream is drawn twice.
    looks = 4
    rounds = {
        ((step * looks) + start + 1) * looks + end
        for step in range(12)
        for start in range(-1, looks - 1)
        for end in range(start + 1, looks)
    }
    assert len(rounds) == 12 * sum(looks - 1 - start for start in range(-1, looks - 1))
