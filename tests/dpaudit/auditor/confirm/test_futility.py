"""Futility (dpaudit.auditor.confirm.futility): a confirmation that can neither confirm a violation
nor reach power stops early, says so, and never stops an event that could still be flagged."""

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy.stats import binom

import dpaudit
from dpaudit.auditor.bounds.statistics import (
    detectable_delta,
    detectable_epsilon,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)
from dpaudit.auditor.confirm.futility import (
    FLAG_CHANCE,
    far_from_claim,
    favourable,
    flag_chance,
    futility,
    predicted_witness,
    reaches_claim,
)
from dpaudit.auditor.results.power import event_power
from dpaudit.auditor.results.result import AuditResult
from dpaudit.auditor.results.witness import Witness
from dpaudit.auditor.sources.blackbox import make_claim
from dpaudit.recheck import recheck
from dpaudit.rerun import rerun

CLAIM = make_claim((0.1, 0.0))
SIZES = [1000, 2000, 4000, 8000, 16000, 32000]
LEVEL = 0.05 / 18 / 6


def _witness(hits_p, hits_q, n, claim=CLAIM, level=LEVEL):
    p_low, q_high, eps_b, delta_b = event_bounds(
        hits_p, n, hits_q, n, level, claim.epsilon, claim.delta
    )
    power = detectable_epsilon(hits_q, n, n, level, claim.epsilon, claim.delta)
    power_delta = detectable_delta(hits_q, n, n, level, claim.epsilon, claim.delta)
    return Witness(
        (1, 0), (0, 0), None, hits_p, n, hits_q, n, p_low, q_high, eps_b, delta_b, "x",
        power, power_delta,
    )  # fmt: skip


def _futility(witnesses, look, sizes=SIZES, claim=CLAIM):
    return futility(witnesses, witnesses, claim, look, sizes, LEVEL, 1.25, False)


def test_fires_when_no_event_can_reach_the_claim_and_one_would_be_left_without_power():
    # Claim (3, 1e-6): a rare event with 12 and 0 hits of 8000 cannot be flagged by the looks
    # ahead, and at the last look (32000) it would still have neither ε power nor bounds below
    # 1.25 × 3, even at the truth its tallies allow that favours a pass most (P low, Q high at
    # TRUTH_LEVEL): the pass rule (result.events_shortfall) would find it short, so the looks
    # are futile.
    claim = make_claim((3.0, 1e-6))
    rare = _witness(12, 0, SIZES[3], claim)
    assert far_from_claim(rare, claim, LEVEL, SIZES[4:])
    truth = favourable(rare, power=True)
    assert truth[0] < rare.p_hat and truth[1] > rare.q_hat
    ahead = predicted_witness(rare, SIZES[-1], LEVEL, claim, truth)
    assert event_power([ahead], 3.0, 1e-6, 1.25) == ("none",)
    stopped = futility([rare], [rare], claim, 3, SIZES, LEVEL, 1.25, False)
    assert stopped is not None and stopped.lacking == "epsilon" and stopped.look == 3
    assert stopped.detectable_epsilon <= rare.detectable_epsilon


def test_a_handful_of_hits_is_not_taken_for_the_truth():
    # 30 and 3 hits of 8000 (ln(P̂/Q̂) = 2.3): at P̂ and Q̂ the last look would leave the event
    # without power or bounds below 1.25 × 3, but Q may well be twice Q̂, and there its bounds
    # at the last look exclude a true ε above 3.75 ("below"): a pass is within reach, so the
    # looks go on.
    claim = make_claim((3.0, 1e-6))
    rare = _witness(30, 3, SIZES[3], claim)
    at_hat = predicted_witness(rare, SIZES[-1], LEVEL, claim)
    assert event_power([at_hat], 3.0, 1e-6, 1.25) == ("none",)
    ahead = predicted_witness(rare, SIZES[-1], LEVEL, claim, favourable(rare, power=True))
    assert event_power([ahead], 3.0, 1e-6, 1.25) == ("below",)
    assert futility([rare], [rare], claim, 3, SIZES, LEVEL, 1.25, True) is None


def test_events_whose_own_bounds_will_cover_them_lack_no_power():
    # P̂ = Q̂ = 0.5 at 8000 samples against a claim of 0.1: no look can reach ε power (32000
    # samples detect only ε ≈ 0.16 > 1.25 × 0.1), but at the last look the event's own limits
    # exclude a true ε above 1.25 × 0.1 (label "below"), which the pass rule accepts. The old rule
    # (the smallest detectable ε over the events) said "ε short of power" here.
    even = _witness(4000, 4000, SIZES[3])
    assert not reaches_claim(even, CLAIM, LEVEL)
    ahead = predicted_witness(even, SIZES[-1], LEVEL, CLAIM)
    assert ahead.detectable_epsilon > 0.125
    assert event_power([ahead], 0.1, 0.0, 1.25) == ("below",)
    # Power is not what it lacks: P = Q never tells the histograms apart, and that is said.
    stopped = _futility([even], look=3)
    assert stopped is not None and stopped.lacking == "separation"


def test_does_not_fire_while_an_event_upper_limit_reaches_the_claim():
    # The same power, but the event's estimate is at the claim (ln(P̂/Q̂) = 0.1): its upper
    # limit is above it, and a bug there would be flagged by the looks ahead.
    even = _witness(4000, 4000, SIZES[3])
    near = _witness(4205, 3805, SIZES[3])
    assert reaches_claim(near, CLAIM, LEVEL)
    assert not far_from_claim(near, CLAIM, LEVEL, SIZES[4:])
    assert _futility([even, near], look=3) is None
    # An estimate below the claim by noise (one standard error) goes on too.
    noisy = _witness(4150, 3850, SIZES[3])
    assert math.log(4150 / 3850) < 0.1 and not far_from_claim(noisy, CLAIM, LEVEL, SIZES[4:])


def test_does_not_fire_when_power_is_within_reach():
    # ε = 2 on events of probability 0.1 and 0.05 (ln 2 = 0.69, far below the claim, and the
    # two histograms told apart): the last look detects less than 1.25 × 2.
    claim = make_claim((2.0, 0.0))
    apart = _witness(800, 400, SIZES[3], claim)
    assert apart.separates
    assert futility([apart], [apart], claim, 3, SIZES, LEVEL, 1.25, False) is None


def test_an_unresolvable_delta_counts_as_lacking_unless_epsilon_only():
    # δ = 1e-9 cannot be resolved with 32000 samples; ε can (claim 2).
    claim = make_claim((2.0, 1e-9))
    apart = _witness(800, 400, SIZES[3], claim)
    stopped = futility([apart], [apart], claim, 3, SIZES, LEVEL, 1.25, False)
    assert stopped is not None and stopped.lacking == "delta"
    assert futility([apart], [apart], claim, 3, SIZES, LEVEL, 1.25, True) is None


def test_fires_when_no_event_would_tell_the_histograms_apart():
    # P̂ = Q̂ = 0.05: power is within reach, but a pass needs some event whose intervals do
    # not overlap, and with P = Q none will at any look.
    claim = make_claim((2.0, 0.0))
    even = _witness(400, 400, SIZES[3], claim)
    stopped = futility([even], [even], claim, 3, SIZES, LEVEL, 1.25, False)
    assert stopped is not None and stopped.lacking == "separation"


def _exact_flag_chance(witness, p, q, size, level, claim):
    """P(the look of ``size`` flags the event) by enumerating both binomial increments."""
    more = size - witness.samples_p
    a = np.arange(more + 1)
    p_low = one_sided_lower(witness.hits_p + a, np.full(more + 1, size), level)
    q_high = one_sided_upper(witness.hits_q + a, np.full(more + 1, size), level)
    flagged = p_low[:, None] - math.exp(claim.epsilon) * q_high[None, :] > claim.delta
    law = np.outer(binom.pmf(a, more, p), binom.pmf(a, more, q))
    return float(law[flagged].sum())


@pytest.mark.parametrize("p, q", [(0.5, 0.5), (0.6, 0.4), (0.7, 0.3), (0.8, 0.2), (0.9, 0.1)])
def test_flag_chance_bounds_the_exact_probability(p, q):
    claim, level = make_claim((0.5, 0.0)), 0.01
    witness = _witness(30, 20, 50, claim, level)
    exact = _exact_flag_chance(witness, p, q, 150, level, claim)
    bound = flag_chance(witness, p, q, [150], level, claim)
    assert exact <= bound <= 1.0 + FLAG_CHANCE
    if exact < 1e-6:
        assert bound <= FLAG_CHANCE  # informative where the look cannot flag
    if exact > 0.5:
        assert bound > 0.5


def _coin(counts, size, rng, epsilon=0.0):
    # Randomised response on "count 0 exceeds count 1" at ε = 0 (correct for any claim).
    bit = int(np.asarray(counts)[0] > np.asarray(counts)[1])
    keep = rng.random(size) < math.exp(epsilon) / (1 + math.exp(epsilon))
    return np.where(keep, bit, 1 - bit).reshape(size, 1)


def _audit(**options):
    return dpaudit.audit(
        _coin, claim=(0.1, 0.0), width=1, batched=True, samples=200_000, domain_size=3, **options
    )


@pytest.fixture(scope="module")
def stopped():
    return _audit(seed=0)


def test_an_unreachable_claim_stops_for_futility_and_says_so(stopped):
    looks = stopped.evidence["confirmation_looks"]
    record = stopped.futility
    assert stopped.verdict == "inconclusive" and record is not None
    assert record["look"] < len(looks["sizes"]) - 1
    assert max(looks["last_look_of_pair"].values()) == record["look"]
    assert stopped.samples < stopped.samples_requested
    assert record["detectable_epsilon_at_last_look"] > 1.25 * 0.1
    # At ε = 0 every event's own bounds put its ε below 1.25 × 0.1 (event_power "below" or
    # "bounded"), so power is not what is missing: the coin never tells its histograms apart,
    # and no budget would (samples_for_power is inf).
    assert stopped.power_shortfall is None and not stopped.separated
    assert set(stopped.event_power) <= {"below", "bounded", "left"}
    assert stopped.samples_for_power == math.inf
    text = str(stopped)
    assert "stopped:    for futility" in text
    assert record["lacking"] == "separation" and "no event telling its two histograms apart" in text
    assert "futility" in stopped.explanation and "futility" in stopped._repr_html_()
    data = json.loads(stopped.to_json())
    assert data["evidence"]["confirmation_looks"]["futility"] == record
    assert AuditResult.from_dict(data).futility == record


def test_a_stopped_audit_rechecks_reruns_and_is_the_same_for_one_process_and_a_pool(
    stopped, monkeypatch
):
    from dpaudit.auditor.sources import sampling

    assert recheck(stopped, mechanism=_coin, seed=0).agrees
    assert rerun(stopped, mechanism=_coin).agrees
    monkeypatch.setattr(sampling, "PARALLEL_MIN_CHUNK", 5_000)
    pool = _audit(seed=0, workers=2, chunk=20_000)
    one = _audit(seed=0, chunk=20_000)
    assert one.witnesses == pool.witnesses and one.samples == pool.samples
    assert one.evidence["confirmation_looks"] == pool.evidence["confirmation_looks"]
    assert one.futility is not None


def test_a_curve_claim_is_reached_where_the_curve_is_exceeded_not_only_at_its_head():
    # Randomised response at a = 2 (P = 0.88, Q = 0.12) breaks 0.5-zCDP at small ε, not at
    # the head point (ε ≈ 5.2 at δ = 1e-6): far for the head point alone, never for the curve.
    from mechanisms import AddRemoveUser, PrivacyClaim
    from mechanisms.profiles import ZeroConcentratedDP

    curve = PrivacyClaim.from_profile(ZeroConcentratedDP(0.5), AddRemoveUser(1), delta=1e-6)
    head = PrivacyClaim(curve.epsilon, curve.delta, AddRemoveUser(1))
    n = SIZES[3]
    rr = _witness(int(0.88 * n), int(0.12 * n), n, head)
    assert not reaches_claim(rr, head, LEVEL) and far_from_claim(rr, head, LEVEL, SIZES[4:])
    assert reaches_claim(rr, curve, LEVEL) and not far_from_claim(rr, curve, LEVEL, SIZES[4:])


def test_does_not_fire_while_one_pair_drawn_to_the_end_alone_could_pass():
    # Two pairs go on: one with a rare event that no look can give power (as in the first test),
    # one whose event will be covered by its own bounds at the last look. The focus rule may
    # leave the first pair at a later look (its event is then "left", which a pass does not
    # need), so the looks are not futile; either pair alone, they are decided as before.
    # (GumbelTopK(k=2, ε=1) at counts [2, 1, 1, 0], 100k samples, seed 0 passed only after
    # this: futility had stopped it at look 4 of 6 on an event the focus rule later left.)
    claim = make_claim((3.0, 1e-6))
    rare = _witness(12, 0, SIZES[3], claim)
    even = dataclasses.replace(_witness(4000, 3000, SIZES[3], claim), counts=(2, 0))
    assert event_power([predicted_witness(even, SIZES[-1], LEVEL, claim)], 3.0, 1e-6, 1.25) != (
        "none",
    )
    both = [rare, even]
    assert futility([rare], [rare], claim, 3, SIZES, LEVEL, 1.25, True) is not None
    assert futility(both, both, claim, 3, SIZES, LEVEL, 1.25, True) is None
