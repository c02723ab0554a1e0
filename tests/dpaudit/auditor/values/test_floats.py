"""Float views: reachability of exact doubles, the fitted noise model, and the audit verdicts."""

import numpy as np
import pytest

import dpaudit
import mechanisms as M
from dpaudit.auditor.events import event_from_dict
from dpaudit.auditor.values import VIEW_FLOAT, ValueEncoder, fit_encoder
from dpaudit.auditor.values.floats import (
    FloatModel,
    fit_float_model,
    low_bits_codes,
    reachable,
)
from dpaudit.catalog import FloatLaplaceNoisyCount, catalog_entry


@pytest.mark.parametrize("count", [0, 1, 5])
def test_textbook_laplace_values_are_reachable_from_their_count_and_rarely_the_next(count):
    mech = FloatLaplaceNoisyCount(epsilon=1.0)
    values = mech.sample(np.array([count, 3]), 20_000, np.random.default_rng(count)).values[:, 0]
    own = reachable("inverse-cdf laplace", 1.0, values, np.full(values.size, count))
    assert own.all()  # the model is the sampler: no value is missed
    # Mironov 2012: most doubles from a small count are out of the neighbour's reach.
    other = reachable("inverse-cdf laplace", 1.0, values, np.full(values.size, count + 1))
    assert other.mean() < 0.85


def test_integer_grid_reaches_every_integer_and_no_fraction():
    values = np.array([3.0, -2.0, 0.5, np.nan, 7.0])
    got = reachable("integer", 1.0, values, np.array([1.0, 5.0, 0.0, 0.0, np.nan]))
    assert got.tolist() == [True, True, False, False, False]


def test_fit_finds_the_sampler_scale_and_anchors_and_rejects_non_models():
    rng = np.random.default_rng(4)
    mech = FloatLaplaceNoisyCount(epsilon=1.0)
    model = fit_float_model(
        mech.sample(np.array([1, 2]), 2_000, rng), mech.sample(np.array([0, 2]), 2_000, rng)
    )
    assert model == FloatModel("inverse-cdf laplace", 1.0, (((0, -2, 1),), ((0, -2, 0),)))
    exact = M.NoisyCount(epsilon=1.0)
    model = fit_float_model(
        exact.sample(np.array([1, 2]), 2_000, rng), exact.sample(np.array([0, 2]), 2_000, rng)
    )
    assert model.kind == "integer"
    # Uniform noise: no model reaches 90 % of the values.
    batch = M.MixedBatch(np.zeros((2_000, 0), dtype=np.int64), rng.random((2_000, 1)))
    assert fit_float_model(batch, batch) is None


def test_low_bits_count_trailing_zeros_of_the_fraction():
    codes = low_bits_codes(np.array([np.nan, 1.0 + 2.0**-52, 1.0 + 2.0**-51, 1.5]))
    assert codes.tolist() == [0, 1, 2, 13]  # 1.5: 51 zeros, capped at 12


def test_encoder_with_floats_and_tails_round_trips_and_events_rebuild():
    rng = np.random.default_rng(1)
    mech = FloatLaplaceNoisyCount(epsilon=1.0)
    p = mech.sample(np.array([1, 2]), 3_000, rng)
    q = mech.sample(np.array([0, 2]), 3_000, rng)
    encoder = fit_encoder(0, 1, p, q)
    assert encoder.floats is not None and encoder.item_edges
    assert ValueEncoder.from_dict(encoder.to_dict()) == encoder
    tally = encoder.count(p)
    # P's values are reachable from P's count: codes 2 (first only) or 4 (both), never 1/3.
    float_codes = {k[-1]: n for k, n in tally.items() if k[0] == VIEW_FLOAT}
    assert set(float_codes) <= {2, 4} and float_codes.get(2, 0) > 1_000


def test_float_laplace_count_is_flagged_and_its_integer_twin_passes():
    # One pair, a small budget: the float view alone separates them (P(Q reaches) = 0).
    entry = catalog_entry("float-laplace-noisy-count")
    base = {"samples": 200_000, "seed": 0, "counts": [1, 0, 0], "restrict": True}
    broken = dpaudit.audit(entry.build(), **base)
    assert broken.violation and broken.epsilon_lower > 3, str(broken)
    event = broken.witnesses[0].event
    assert event_from_dict(event.to_dict()) == event
    correct = dpaudit.audit(entry.correct(), **base)
    assert correct.verdict == "passed" and correct.epsilon_lower <= 1.0, str(correct)
