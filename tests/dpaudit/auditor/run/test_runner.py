"""The runner end to end: correct mechanisms pass, broken ones are flagged, black boxes work."""

import json
import math
from typing import ClassVar

import numpy as np
import pytest

import dpaudit
from dpaudit.auditor import AuditResult, audit
from dpaudit.catalog import EMNonMonotoneClaimsEpsilon
from mechanisms import BOTTOM, BoundedChange
from mechanisms.exponential import ExponentialMechanism, GumbelTopK


def test_top_level_audit_is_the_runner_function():
    result = dpaudit.audit(ExponentialMechanism(epsilon=1.0), samples=20_000, seed=1)
    assert isinstance(result, AuditResult)
    assert dpaudit.auditor.run.runner.audit is audit


def test_correct_mechanism_not_flagged_and_bound_below_exact():
    # False failure <= alpha = 1e-6 (the auditor's own guarantee).
    mech = ExponentialMechanism(epsilon=1.0)
    result = audit(mech, samples=200_000, alpha=1e-6, seed=3, pairs=[((0, 3, 3), (1, 4, 4))])
    assert not result.violation
    # Exact ε of this pair under add/remove is at most the claim ε = 1.
    assert 0.0 <= result.epsilon_lower <= mech.claim.epsilon
    # A budget is a budget: never more drawn than asked (less when confirmation stops early).
    assert result.samples <= 200_000 == result.samples_requested and result.seconds > 0


def test_broken_mechanism_flagged_with_witness():
    # EM with independently moving counts claiming ε: exact ε on this pair is 1.92.
    result = audit(
        EMNonMonotoneClaimsEpsilon(epsilon=1.0),
        samples=200_000,
        seed=2,
        pairs=[((0, 3, 3, 3, 3), (1, 2, 2, 2, 2))],
    )
    assert result.violation and result.epsilon_lower > 1.0 and result.delta_lower > 0.0
    w = result.epsilon_witness
    assert w.hits_p / w.samples_p >= w.p_low and w.hits_q / w.samples_q <= w.q_high
    assert "VIOLATION" in str(result)
    data = json.loads(result.to_json())
    assert data["violation"] is True and data["epsilon_witness"]["counts"]


@pytest.mark.slow  # a whole default audit (a budget of 5e7 samples)
def test_default_audit_finds_the_fixed_threshold_witness():
    # Deterministic check of one seeded run: the candidate pairs, every phase's samples
    # (SeedSequence spawn keys per phase and histogram) and so the bounds are functions of
    # seed=0 alone, so this reproduces exactly. FixedThreshold(3, 1, 1e-3) is correct: its
    # exact worst ε at δ = 1e-3 is 2.979 (exhaustive verification; on (8,8,8) vs (7,7,7),
    # "all three reported"), below the claim 3, and this run reaches 2.84. The 2.5 asked for
    # sits below 2.979 by the confirmation interval's width; the auditor only found 0.97
    # before the threshold ladder (no default pair put the top k̄ about τ above the rest)
    # and the cautious screening ranking (Clopper-Pearson flukes with Q unseen crowded it out).
    from dpaudit.exact import output_law
    from dpaudit.exact.profile import epsilon_from_laws
    from mechanisms import FixedThreshold

    mech = FixedThreshold(kbar=3, epsilon=1.0, delta=1e-3)
    result = audit(mech, seed=0)
    assert not result.violation, str(result)
    assert result.epsilon_lower >= 2.5, str(result)
    w = result.epsilon_witness
    exact = float(
        epsilon_from_laws(
            output_law(mech, np.array(w.counts)),
            output_law(mech, np.array(w.counts2)),
            mech.claim.delta,
        )
    )
    assert result.epsilon_lower <= exact <= 2.98


def test_screening_ranks_real_ratios_above_unseen_flukes():
    # Pair "fluke": an outcome seen 4 times in 200 under P, never under Q (plug-in Q = 0,
    # so a plug-in predicted ε is huge). Pair "real": 60 vs 6 in 200. The cautious ranking
    # prefers the real ratio, the plug-in ranking the fluke; two survivors take one of each.
    from collections import Counter

    from dpaudit.auditor.search.screening import screen_scores as _screen_scores
    from dpaudit.auditor.search.screening import survivors as _survivors
    from dpaudit.neighbours.pairs import NeighbourPair

    fluke = NeighbourPair((1, 0), (0, 0), "x")
    real = NeighbourPair((3, 0), (2, 0), "x")
    pooled = {
        fluke.counts: (Counter({(0,): 4, (1,): 196}), 200),
        fluke.counts2: (Counter({(1,): 200}), 200),
        real.counts: (Counter({(0,): 60, (1,): 140}), 200),
        real.counts2: (Counter({(0,): 6, (1,): 194}), 200),
    }
    claim = EMNonMonotoneClaimsEpsilon(epsilon=1.0).claim
    scores = _screen_scores([fluke, real], pooled, 300_000, 0.05 / 12, claim)
    (_, c_fluke, p_fluke, _), (_, c_real, p_real, _) = scores
    assert c_real > c_fluke and p_fluke > p_real
    assert _survivors([fluke, real], scores, 1) == [real]
    assert set(_survivors([fluke, real], scores, 2)) == {fluke, real}


def test_same_seed_same_result_regardless_of_workers(monkeypatch):
    from dpaudit.auditor.sources import sampling

    monkeypatch.setattr(sampling, "PARALLEL_MIN_CHUNK", 5_000)  # use the process pool
    mech = GumbelTopK(k=2, epsilon=1.0)
    a = audit(mech, samples=60_000, seed=9, counts=[3, 2, 2, 0])
    b = audit(mech, samples=60_000, seed=9, counts=[3, 2, 2, 0], workers=2, chunk=10_000)
    c = audit(mech, samples=60_000, seed=9, counts=[3, 2, 2, 0], chunk=10_000)
    assert a.epsilon_lower == b.epsilon_lower == c.epsilon_lower
    assert a.epsilon_witness == b.epsilon_witness


def test_black_box_callable():
    # A plain per-call function: LimitDomain without ⊥ on k=1, kbar=1 -> argmax over the top item only.
    def leaky(counts, rng):
        counts = np.asarray(counts)
        return (int(np.argmax(counts)),)  # deterministic argmax: not private at all

    result = audit(
        leaky,
        claim=(1.0, 1e-6, BoundedChange(1)),
        width=1,
        samples=20_000,
        seed=0,
        pairs=[((2, 1), (1, 2))],
    )
    # P = 1 and Q = 0 on the event: the bound is limited only by the claimed δ, the sample
    # size at the look where confirmation stopped and that look's level (α-spending):
    # ln((a^(1/n) − δ) / (1 − a^(1/n))) for one-sided Clopper–Pearson bounds at level a.
    assert result.violation and result.epsilon_lower > 2.0
    w, level = result.epsilon_witness, result.evidence["confirmation_looks"]["alpha_each_look"]
    assert w.hits_p == w.samples_p and w.hits_q == 0
    edge = level ** (1 / w.samples_p)
    assert result.epsilon_lower == pytest.approx(math.log((edge - 1e-6) / (1 - edge)), rel=1e-9)

    def fair_coin(counts, rng):
        return (int(rng.integers(2)),) if rng.random() < 0.5 else (0, BOTTOM)

    result = audit(fair_coin, claim=(0.1, 0.0), width=2, samples=20_000, seed=0, domain_size=3)
    assert not result.violation


def test_explicit_pairs_checked_against_relation():
    with pytest.raises(ValueError, match="not a pair of neighbours"):
        audit(GumbelTopK(k=1, epsilon=1.0), pairs=[((0, 0), (2, 0))], samples=10_000)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"samples": 10}, "samples"),
        ({"alpha": 1.5}, "alpha"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit(GumbelTopK(k=1, epsilon=1.0), **kwargs)


def test_callable_needs_claim_and_width():
    with pytest.raises(ValueError, match="claim"):
        audit(lambda c, r: (0,), width=1)
    with pytest.raises(ValueError, match="width"):
        audit(lambda c, r: (0,), claim=(1.0, 0.0))


class _InterruptAfter(GumbelTopK):
    """Raises KeyboardInterrupt on the n-th sampling call (simulated Ctrl-C)."""

    calls: ClassVar[list] = [0]  # shared across the frozen instance copies

    def sample(self, counts, size, rng):
        self.calls[0] += 1
        if self.calls[0] == 12:
            raise KeyboardInterrupt
        return super().sample(counts, size, rng)


def test_keyboard_interrupt_reports_partial_result():
    _InterruptAfter.calls[0] = 0
    mech = _InterruptAfter(k=1, epsilon=1.0)
    # One explicit pair: select (2 histograms x 1 chunk) then confirm in chunks of 1000.
    result = audit(mech, pairs=[((1, 0), (0, 0))], samples=40_000, chunk=1_000, seed=0)
    assert result.interrupted
    assert result.samples < 40_000
    assert "INTERRUPTED" in str(result)


def test_local_search_draws_its_share_on_its_own_streams():
    # The local search over histograms is a phase: its draws go through the executor on
    # SeedSequence(seed, spawn_key=(local, round, index)), within its share of the budget,
    # its pairs are candidates, and the whole audit stays within `samples`.
    from dpaudit.auditor.planning.options import AuditOptions
    from dpaudit.auditor.planning.plan import PHASES
    from dpaudit.auditor.run.execution import audit_candidates
    from dpaudit.auditor.run.live import LOCAL_SHARE, LiveSource
    from dpaudit.auditor.sources.executors import LocalExecutor
    from mechanisms import LimitDomain

    mech = LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    options = AuditOptions(samples=200_000, seed=4).for_mechanism(mech)
    plan = options.plan()
    executor = LocalExecutor(mech, 1, 250_000)
    keys = []
    original = executor.draw

    def recording(histograms, per_histogram, seeds, encoder=None):
        keys.extend((s.spawn_key, per_histogram) for s in seeds)
        return original(histograms, per_histogram, seeds)

    executor.draw = recording
    source = LiveSource(plan, executor, mech)
    rng = np.random.default_rng(0)
    candidates = audit_candidates(mech, mech.claim.neighbours, mech.claim, options, source, rng)
    local = [(key, n) for key, n in keys if key[0] == PHASES["local"]]
    assert local and all(len(key) == 3 for key, _ in local)
    assert len({key for key, _ in local}) == len(local)  # every histogram its own stream
    assert sum(n for _, n in local) <= LOCAL_SHARE * 200_000
    assert any(pair.family == "local search" for pair in candidates)
    assert audit(mech, seed=4, samples=200_000).samples <= 200_000


def test_local_search_share_only_where_it_runs():
    # Substitute pairs are not walked by the local search: confirmation keeps its share.
    from dpaudit.auditor.planning.options import AuditOptions
    from dpaudit.auditor.run.budgeting import stage_budgets
    from dpaudit.auditor.run.live import LOCAL_SHARE
    from mechanisms import AddRemoveUser, Substitute

    options = AuditOptions(samples=1_000_000)
    plan = options.plan()
    walked = stage_budgets(plan, 600, options, AddRemoveUser())
    substitute = stage_budgets(plan, 600, options, Substitute())
    assert walked["local"] == int(LOCAL_SHARE * 1_000_000) and substitute["local"] == 0
    assert walked["confirm"] + walked["local"] == substitute["confirm"]
    assert sum(walked.values()) == sum(substitute.values()) == 1_000_000
    # It scores released items only: a release with real values keeps the share too.
    valued = stage_budgets(plan, 600, options, AddRemoveUser(), values=True)
    assert valued == substitute


def test_local_search_share_within_a_block_only():
    # The public knob of the benchmarks: inside the block the local search takes the given
    # share of the budget (0: none, as where it does not run); after it, the default again.
    from dpaudit.auditor.planning.options import AuditOptions
    from dpaudit.auditor.run import local_search_share
    from dpaudit.auditor.run.budgeting import stage_budgets
    from mechanisms import AddRemoveUser, Substitute

    options = AuditOptions(samples=1_000_000)
    plan = options.plan()
    before = stage_budgets(plan, 600, options, AddRemoveUser())
    assert before["local"] > 0
    with local_search_share(0.0):
        assert stage_budgets(plan, 600, options, AddRemoveUser()) == stage_budgets(
            plan, 600, options, Substitute()
        )
    with local_search_share(0.5):
        assert stage_budgets(plan, 600, options, AddRemoveUser())["local"] == 500_000
    assert stage_budgets(plan, 600, options, AddRemoveUser()) == before
    with (
        pytest.raises(ValueError, match=r"share must be a number in \[0, 1\), got 1"),
        local_search_share(1),
    ):
        pass  # pragma: no cover - refused on entering


def test_value_release_draws_nothing_on_the_local_stream():
    import mechanisms as M
    from dpaudit.auditor.planning.options import AuditOptions
    from dpaudit.auditor.planning.plan import PHASES
    from dpaudit.auditor.run.execution import audit_candidates
    from dpaudit.auditor.run.live import LiveSource
    from dpaudit.auditor.sources.executors import LocalExecutor

    mech = M.NoisyCountsRelease(M.ReportNoisyMax(epsilon=1.0), epsilon_counts=0.5)
    options = AuditOptions(samples=200_000, seed=4).for_mechanism(mech)
    executor = LocalExecutor(mech, 1, 250_000)
    phases = []
    original = executor.draw

    def recording(histograms, per_histogram, seeds, encoder=None):
        phases.extend(s.spawn_key[0] for s in seeds)
        return original(histograms, per_histogram, seeds, encoder=encoder)

    executor.draw = recording
    source = LiveSource(options.plan(), executor, mech)
    candidates = audit_candidates(
        mech, mech.claim.neighbours, mech.claim, options, source, np.random.default_rng(0)
    )
    assert PHASES["local"] not in phases
    assert candidates and not any(pair.family == "local search" for pair in candidates)
