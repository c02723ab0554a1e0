"""``confirm.confirmation`` (with ``curves`` and ``focus``): witnesses bounded on fresh tallies, and the audit's headline numbers.

Through the functions other modules call (``confirm_events``, ``summarise``, ``curve_*``,
``nearness``); the Clopper–Pearson bounds are recomputed here from scipy's beta quantiles.
"""

import math
from collections import Counter

import pytest
from scipy import stats

from dpaudit.auditor.confirm.confirmation import confirm_events, summarise
from dpaudit.auditor.confirm.curves import curve_evidence, curve_exceeded
from dpaudit.auditor.confirm.focus import nearness
from dpaudit.auditor.interfaces import ChosenEvent
from dpaudit.auditor.values.outcome_events import ItemAt
from dpaudit.neighbours.pairs import NeighbourPair
from mechanisms import AddRemoveUser, PrivacyClaim
from mechanisms.profiles import GaussianDP

CLAIM = PrivacyClaim(1.0, 1e-6, AddRemoveUser())
D, D2 = (3, 1, 0), (2, 1, 0)
EVENT = ItemAt(0, 0)  # item 0 released first


def _get(summary, key):
    """A summary's field, whether it is a dict or a named value."""
    return summary[key] if isinstance(summary, dict) else getattr(summary, key)


def _tallies(hits_p, n_p, hits_q, n_q):
    """Tallies where ``hits`` outcomes release item 0 first and the rest item 1."""
    return {
        D: Counter({(0,): hits_p, (1,): n_p - hits_p}),
        D2: Counter({(0,): hits_q, (1,): n_q - hits_q}),
    }


def _witnesses(hits_p, n_p, hits_q, n_q, alpha_each=1e-3, claim=CLAIM):
    pair = NeighbourPair(D, D2, "named")
    chosen = [ChosenEvent(pair, pair, EVENT)]
    counters = _tallies(hits_p, n_p, hits_q, n_q)
    samples = {h: (counters[h], sum(counters[h].values())) for h in counters}
    return confirm_events(chosen, samples, alpha_each, claim)


def _cp_lower(x, n, alpha):
    return 0.0 if x == 0 else stats.beta.ppf(alpha, x, n - x + 1)


def _cp_upper(x, n, alpha):
    return 1.0 if x == n else stats.beta.ppf(1 - alpha, x + 1, n - x)


def test_a_witness_holds_the_events_counts_and_clopper_pearson_bounds():
    alpha = 1e-3
    (w,) = _witnesses(900, 1000, 100, 1000, alpha)
    assert (w.counts, w.counts2, w.event, w.family) == (D, D2, EVENT, "named")
    assert (w.hits_p, w.samples_p, w.hits_q, w.samples_q) == (900, 1000, 100, 1000)
    assert w.p_low == pytest.approx(_cp_lower(900, 1000, alpha), rel=1e-9)
    assert w.q_high == pytest.approx(_cp_upper(100, 1000, alpha), rel=1e-9)
    # ε at the claimed δ and δ at the claimed ε, from those bounds.
    assert w.epsilon_lower == pytest.approx(math.log((w.p_low - CLAIM.delta) / w.q_high), rel=1e-9)
    assert w.delta_lower == pytest.approx(w.p_low - math.e * w.q_high, rel=1e-9)
    assert w.separates


def test_bounds_widen_as_alpha_shrinks():
    (loose,) = _witnesses(600, 1000, 400, 1000, 1e-2)
    (tight,) = _witnesses(600, 1000, 400, 1000, 1e-6)
    assert tight.p_low < loose.p_low and tight.q_high > loose.q_high
    assert tight.epsilon_lower <= loose.epsilon_lower


def test_an_event_no_more_likely_on_p_gives_no_evidence():
    (w,) = _witnesses(500, 1000, 500, 1000)
    assert w.epsilon_lower == 0.0 and w.delta_lower == 0.0 and not w.separates


def test_summarise_flags_a_violation_only_past_both_claimed_bounds():
    # P ≈ 0.9 against Q ≈ 0.1 (ε ≈ 2.2 > 1): a violation of the (1, 1e-6) claim.
    flagged = summarise(_witnesses(9000, 10_000, 1000, 10_000), CLAIM)
    assert _get(flagged, "violation") and _get(flagged, "separated")
    assert _get(flagged, "epsilon_lower") > CLAIM.epsilon
    # The same counts against a claim of ε = 3 pass.
    generous = PrivacyClaim(3.0, 1e-6, AddRemoveUser())
    held = summarise(_witnesses(9000, 10_000, 1000, 10_000, claim=generous), generous)
    assert not _get(held, "violation")


def test_summarise_picks_the_best_epsilon_and_delta_witnesses():
    weak = _witnesses(600, 1000, 400, 1000)[0]
    strong = _witnesses(950, 1000, 50, 1000)[0]
    summary = summarise([weak, strong], CLAIM)
    assert _get(summary, "epsilon_witness") is strong and _get(summary, "delta_witness") is strong
    assert _get(summary, "epsilon_lower") == strong.epsilon_lower


def test_summarise_of_no_witness_is_empty_and_powerless():
    summary = summarise([], CLAIM)
    assert _get(summary, "epsilon_witness") is None and not _get(summary, "violation")
    assert _get(summary, "epsilon_lower") == 0.0 and _get(summary, "delta_lower") == 0.0
    assert _get(summary, "detectable_epsilon") == math.inf
    assert _get(summary, "detectable_delta") == math.inf


def test_a_curve_is_exceeded_where_some_epsilon_breaks_it():
    curve = PrivacyClaim.from_profile(GaussianDP(1.0), AddRemoveUser(), epsilon=1.0)
    assert not curve_exceeded(CLAIM, 1.0, 0.0)  # a point claim is tested by summarise
    assert curve_exceeded(curve, 0.99, 0.001)  # almost certain on D, almost never on D'
    assert not curve_exceeded(curve, 0.3, 0.25)
    # Bounds are clipped to [0, 1] first.
    assert curve_exceeded(curve, 1.5, -0.2) == curve_exceeded(curve, 1.0, 0.0)


def test_curve_evidence_names_where_the_best_witness_breaks_the_curve():
    curve = PrivacyClaim.from_profile(GaussianDP(1.0), AddRemoveUser(), epsilon=1.0)
    witnesses = _witnesses(600, 1000, 400, 1000, claim=curve) + _witnesses(
        9990, 10_000, 5, 10_000, claim=curve
    )
    record = curve_evidence(witnesses, curve)
    assert record["profile"] == {"kind": "gdp", "mu": 1.0} and record["witness"] == 1
    w = witnesses[1]
    eps = record["epsilon"]
    assert record["delta_allowed"] == pytest.approx(curve.profile.delta_at(eps))
    assert record["excess"] == pytest.approx(
        w.p_low - math.exp(eps) * w.q_high - record["delta_allowed"], rel=1e-6
    )
    assert record["excess"] > 0
    assert curve_evidence(witnesses, CLAIM) is None
    assert _get(summarise(witnesses, curve), "violation")


def test_nearness_is_zero_without_evidence_and_past_one_beyond_the_claim():
    at_claim = _witnesses(5000, 10_000, 5000, 10_000)
    assert nearness(at_claim, CLAIM) == pytest.approx(0.0, abs=0.05)
    past = _witnesses(9000, 10_000, 1000, 10_000)
    w = past[0]
    expected_eps = max(w.epsilon_lower, math.log(w.p_hat / w.q_hat)) / CLAIM.epsilon
    assert nearness(past, CLAIM) >= expected_eps > 1
    assert nearness(past, CLAIM, assured=True) <= nearness(past, CLAIM)
