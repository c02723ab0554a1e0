"""Coverage: confirmation bounds of the new value events contain the exact probabilities.

A correct value release with an exact law (:mod:`dpaudit.exact.value_laws`); its encoder
is learned on learning samples, the candidate events enumerated on selection samples,
and the bounds computed on fresh confirmation samples — the pipeline's split. Every
one-sided Clopper–Pearson bound is taken at ``ALPHA / (2 m)`` for ``m`` events on each
of two histograms, so all of them hold together with probability >= 1 − ALPHA (union
bound): the test's false-failure probability is at most ALPHA = 1e-6.
"""

import mpmath
import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.bounds.statistics import one_sided_lower, one_sided_upper
from dpaudit.auditor.values import (
    VIEW_ITEM_TAILS,
    ItemValueThreshold,
    ValueRegion,
    fit_encoder,
    value_candidate_events,
)
from dpaudit.auditor.values.outcome_events import events_hits
from dpaudit.exact import working_precision
from dpaudit.exact.value_laws import value_law

ALPHA = 1e-6


@pytest.mark.parametrize(
    "mech, width, pair",
    [
        (
            M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=0.5), epsilon_counts=1.0),
            2,
            ((3, 2, 2, 0, 0), (3, 2, 2, 1, 0)),
        ),
        (M.NoisyCount(epsilon=0.5, item=1), 0, ((2, 4), (2, 5))),
    ],
    ids=["noisy-counts-release", "noisy-count"],
)
def test_item_value_event_bounds_cover_the_exact_probabilities(mech, width, pair):
    rng = np.random.default_rng(20)
    learn = [mech.sample(np.array(h), 20_000, rng) for h in pair]
    encoder = fit_encoder(width, mech.value_width, *learn)
    assert encoder.item_edges, "the encoder must have tail edges to test"
    n_select, n_confirm = 40_000, 200_000
    select = [encoder.count(mech.sample(np.array(h), n_select, rng)) for h in pair]
    events, _, _ = value_candidate_events(encoder, select[0], n_select, select[1], n_select)
    new = [
        e
        for e in events
        if isinstance(e, ItemValueThreshold)
        or (isinstance(e, ValueRegion) and e.view == VIEW_ITEM_TAILS)
    ]
    assert len(new) >= 20
    alpha_each = ALPHA / (2 * 2 * len(new))  # two one-sided bounds per event and histogram
    for h in pair:
        confirm = encoder.count(mech.sample(np.array(h), n_confirm, rng))
        hits = events_hits(new, confirm)
        low = one_sided_lower(hits, np.full(len(new), n_confirm), alpha_each)
        high = one_sided_upper(hits, np.full(len(new), n_confirm), alpha_each)
        with working_precision():
            law = value_law(mech, np.array(h))
            exact = np.array([float(mpmath.mpf(e.exact_probability(law))) for e in new])
        missed = [
            (e.describe(), lo, p, hi)
            for e, lo, p, hi in zip(new, low, exact, high)
            if not lo <= p <= hi
        ]
        assert not missed, missed[:3]


@pytest.mark.parametrize(
    "mech, width",
    [
        (M.NoisyCountsRelease(M.GumbelTopK(k=2, epsilon=0.5), epsilon_counts=1.0), 2),
        (M.NoisyCount(epsilon=0.5, item=1), 0),
    ],
    ids=["noisy-counts-release", "noisy-count"],
)
def test_an_item_value_event_counts_what_its_candidate_scored(mech, width):
    """Selection scores a candidate on hits it counts in the key table; confirmation counts the
    event itself (``events_hits``). They must agree, also for a value column past the item
    columns, whose item is PAD (a noisy histogram's counts): there the event counted 0 hits
    where its candidate had scored P ~ 0.5, and a δ = 0 audit then lacked power on it."""
    rng = np.random.default_rng(21)
    pair = ((3, 2, 2, 0, 0), (3, 2, 2, 1, 0)) if width else ((2, 4), (2, 5))
    learn = [mech.sample(np.array(h), 20_000, rng) for h in pair]
    encoder = fit_encoder(width, mech.value_width, *learn)
    tallies = [encoder.count(mech.sample(np.array(h), 40_000, rng)) for h in pair]
    events, hits_p, hits_q = value_candidate_events(encoder, tallies[0], 40_000, tallies[1], 40_000)
    chosen = [i for i, e in enumerate(events) if isinstance(e, ItemValueThreshold)]
    assert len(chosen) >= 4
    assert any(events[i].column >= width for i in chosen) == (width < mech.value_width)
    picked = [events[i] for i in chosen]
    np.testing.assert_array_equal(events_hits(picked, tallies[0]), np.asarray(hits_p)[chosen])
    np.testing.assert_array_equal(events_hits(picked, tallies[1]), np.asarray(hits_q)[chosen])
    assert np.asarray(hits_p)[chosen].max() > 1000  # not a vacuous agreement of zeros
