"""Selection (dpaudit.auditor.search.selection): the events to confirm on each kept pair."""

from collections import Counter

import mechanisms as M
from dpaudit.auditor.search.screening import score_pairs
from dpaudit.auditor.search.selection import SELECT_CAUTION, _by_power, choose_events
from dpaudit.neighbours.pairs import NeighbourPair


def test_under_a_claim_without_delta_the_last_pick_is_the_best_powered_event():
    # A correct mechanism's events nearest the claim are rare: a true ε of 1.25 claims on
    # them is beyond reach of a million samples, a likely event resolves it.
    from dpaudit.auditor.bounds.statistics import detectable_epsilon
    from dpaudit.auditor.values.outcome_events import ItemOutput

    claim = M.PrivacyClaim(0.1, 0.0, M.BoundedChange(1))
    rare = (0.0, 0.0, 0, ItemOutput(9), 0.010, 0.009)
    likely = (0.0, 0.0, 0, ItemOutput(0), 0.40, 0.39)
    n, alpha = 1_000_000, 0.05 / 18
    ranked = _by_power([rare, likely], n, alpha, claim)
    assert ranked[0] is likely
    powers = [detectable_epsilon(round(c[5] * n), n, n, alpha, 0.1, 0.0) for c in ranked]
    assert powers[0] < 1.25 * 0.1 < powers[1]


def test_cautious_selection_ranks_a_likely_leak_above_a_rare_fluke():
    # Two outcomes on 250k samples a side: one seen 12 vs 4 times (plug-in ratio 3, a
    # fluke at these counts: the ratio's 80 % interval holds 1), one 30000 vs 27000 (ratio
    # 1.11, well resolved). By plug-in frequencies the fluke predicts the larger ε bound on
    # a million fresh samples; by cautious ones (one-sided 10 %) the likely leak does.
    n = 250_000
    pair = NeighbourPair((1,) * 10, (0,) * 10, "x")
    pooled = {
        pair.counts: (Counter({(0,): 30_000, (9,): 12, (): n - 30_012}), n),
        pair.counts2: (Counter({(0,): 27_000, (9,): 4, (): n - 27_004}), n),
    }
    claim = M.PrivacyClaim(0.05, 0.0, M.BoundedChange(1))

    def best(caution, inside, outside):
        [cands] = score_pairs([pair], pooled, 1_000_000, 0.05 / 18, claim, caution=caution)
        return max(
            c[0]
            for c in cands
            if c[2] == 0 and c[3].contains(inside) and not c[3].contains(outside)
        )

    assert best(None, (9,), (0,)) > best(None, (0,), (9,)) > claim.epsilon
    assert best(SELECT_CAUTION, (0,), (9,)) > claim.epsilon > best(SELECT_CAUTION, (9,), (0,))


def test_choose_events_takes_distinct_events_of_the_pair_read_both_ways():
    # Q leaks on item 0 (P sees it less often): the best ε event reads the pair Q -> P.
    n = 100_000
    pair = NeighbourPair((1,) * 3, (0,) * 3, "x")
    pooled = {
        pair.counts: (Counter({(0,): 20_000, (1,): 30_000, (): n - 50_000}), n),
        pair.counts2: (Counter({(0,): 40_000, (1,): 30_000, (): n - 70_000}), n),
    }
    claim = M.PrivacyClaim(0.1, 1e-6, M.BoundedChange(1))
    chosen = choose_events([pair], pooled, 1_000_000, 0.05 / 18, claim, 3)
    assert len(chosen) == 3
    assert all(c.pair == pair for c in chosen)
    assert len({(c.oriented, c.event) for c in chosen}) == 3
    assert chosen[0].oriented == pair.swapped()
    assert chosen[0].event.contains((0,))


def _rare_and_likely(extra_on_p=None):
    """A pair where item 0 is likely on both sides and item 2 rare, at a ratio below e^0.5;
    ``extra_on_p``: outcomes seen on P only (a δ violation in view)."""
    n = 200_000
    pair = NeighbourPair((2, 1, 1), (1, 1, 1), "x")
    on_p = Counter({(0,): 60_000, (1,): 50_000, (2,): 40, **(extra_on_p or {})})
    on_q = Counter({(0,): 50_000, (1,): 52_000, (2,): 30})
    on_p[()] = n - sum(on_p.values())
    on_q[()] = n - sum(on_q.values())
    return pair, {pair.counts: (on_p, n), pair.counts2: (on_q, n)}


def test_a_delta_left_unchased_gives_the_rarest_events_slot_to_power():
    # Under (0.5, 1e-6) the δ pick is the rarest event (item 2: Q-hat 1.5e-4, which a million
    # samples cannot give ε power); when δ needs no resolving by sampling (the grey box resolved
    # it, or --epsilon-only), that slot goes to the event of most power, a likely one.
    from dpaudit.auditor.bounds.statistics import detectable_epsilon

    pair, pooled = _rare_and_likely()
    claim = M.PrivacyClaim(0.5, 1e-6, M.AddRemoveUser())
    n, alpha = 1_000_000, 0.05 / 18
    chased = choose_events([pair], pooled, n, alpha, claim, 2)
    unchased = choose_events([pair], pooled, n, alpha, claim, 2, chase_delta=False)
    assert chased[0] == unchased[0]  # the ε pick does not move

    def q_hits(chosen):
        counter, size = pooled[chosen.oriented.counts2]
        share = sum(c for o, c in counter.items() if chosen.event.contains(o)) / size
        return round(share * n)

    rare, powered = q_hits(chased[1]), q_hits(unchased[1])
    assert chased[1].event.contains((2,)) and rare == 150
    assert detectable_epsilon(powered, n, n, alpha, 0.5, 1e-6) <= 1.25 * 0.5
    assert detectable_epsilon(rare, n, n, alpha, 0.5, 1e-6) > 1.25 * 0.5


def test_an_unchased_delta_still_picks_an_event_with_a_delta_violation_in_view():
    # Item 3 is seen 30 times on P and never on Q: its predicted δ bound passes the claimed δ,
    # and it keeps its slots whether or not δ is chased.
    pair, pooled = _rare_and_likely({(3,): 30})
    claim = M.PrivacyClaim(0.5, 1e-6, M.AddRemoveUser())
    for chase in (True, False):
        chosen = choose_events([pair], pooled, 1_000_000, 0.05 / 18, claim, 2, chase_delta=chase)
        assert all(c.oriented == pair and c.event.contains((3,)) for c in chosen)
        assert not any(c.event.contains((0,)) for c in chosen)
