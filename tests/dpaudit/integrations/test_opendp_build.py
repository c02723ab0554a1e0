"""dpaudit.integrations.opendp_build: OpenDP measurements built once, and a batch of releases."""

import numpy as np
import pytest

from dpaudit.integrations.opendp_build import (
    NOISY_MAX_CONSTRUCTORS,
    build_measurement,
    relation_of,
    selection_batch,
)
from mechanisms import PAD, AddRemoveUser, BoundedChange


def test_a_distance_of_one_is_add_remove_when_monotonic_else_a_bounded_change():
    assert relation_of(True) == AddRemoveUser()
    assert relation_of(False) == BoundedChange(1)


def test_measurements_are_built_once_per_process():
    assert NOISY_MAX_CONSTRUCTORS[0] == "make_noisy_max"
    once = build_measurement("make_noisy_max", 1, 2.0, True)
    assert build_measurement("make_noisy_max", 1, 2.0, True) is once
    assert float(build_measurement("make_noisy_top_k", 2, 4.0, True).map(1)) == pytest.approx(0.5)


def test_an_unknown_constructor_is_named():
    with pytest.raises(ValueError, match="unknown OpenDP constructor 'make_nothing'"):
        build_measurement("make_nothing", 1, 1.0, True)


def test_a_batch_pads_past_the_released_items_and_calls_once_per_release():
    calls = []

    def measurement(scores):
        calls.append(scores)
        return [1, 0]

    batch = selection_batch(measurement, [5, 7], 3, 4)
    assert batch.tolist() == [[1, 0, PAD, PAD]] * 3
    assert len(calls) == 3
    assert selection_batch(measurement, [5, 7], 0, 4).shape == (0, 4)
    assert len(calls) == 3
    assert np.array_equal(selection_batch(measurement, [], 2, 1), np.full((2, 1), PAD))
