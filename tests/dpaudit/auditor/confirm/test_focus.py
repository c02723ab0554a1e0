"""Which pairs go on to their next look (dpaudit.auditor.confirm.focus).

The priorities in full are tested in tests/dpaudit/auditor/test_budget_and_power.py.
"""

import math

import pytest

import mechanisms as M
from dpaudit.auditor.confirm.focus import delta_promise, focus_pairs, nearness, release_unjudged
from dpaudit.auditor.results.witness import Witness
from dpaudit.neighbours.pairs import NeighbourPair

CLAIM = M.PrivacyClaim(0.5, 1e-4, M.AddRemoveUser())
ADDED = ((1, 0), (0, 0))  # item 0 enters the support
STAYS = ((2, 0), (1, 0))


def _witness(pair, hits_p, hits_q, n, eps_low=0.0, det_eps=math.inf):
    return Witness(*pair, None, hits_p, n, hits_q, n, 0.0, 1.0, eps_low, 0.0, "", det_eps, 1.0)


def test_nearness_is_the_plug_in_estimate_over_the_claim():
    w = _witness(STAYS, 2_000, 1_000, 10_000)
    assert nearness([w], M.PrivacyClaim(0.5, 0.0, M.AddRemoveUser())) == pytest.approx(
        math.log(2.0) / 0.5
    )
    assert nearness([], CLAIM) == 0.0


def test_delta_promise_counts_only_key_releases_unseen_on_q():
    assert delta_promise([_witness(ADDED, 30, 0, 10_000)], 0.001) == pytest.approx(3.0)
    assert delta_promise([_witness(STAYS, 30, 0, 10_000)], 0.001) == 0.0
    assert delta_promise([_witness(ADDED, 30, 0, 10_000)], math.inf) == 0.0
    assert release_unjudged([_witness(ADDED, 3, 0, 1_000)], 10_000)
    assert not release_unjudged([_witness(ADDED, 3, 0, 10_000)], 10_000)


def test_a_promising_key_release_comes_first_then_the_nearest_then_the_best_powered():
    release, near, powered = (NeighbourPair(*p, "x") for p in (ADDED, STAYS, ((3, 0), (2, 0))))
    latest = {
        powered: [_witness((powered.counts, powered.counts2), 1_000, 1_000, 10_000, det_eps=0.6)],
        near: [_witness((near.counts, near.counts2), 5_000, 1_000, 10_000, det_eps=0.9)],
        release: [_witness((release.counts, release.counts2), 2, 0, 10_000)],
    }
    assert focus_pairs(latest, CLAIM, "epsilon", flagged_at=1e-4) == [release, near, powered]
    assert focus_pairs(latest, CLAIM, "epsilon") == [near, powered]
