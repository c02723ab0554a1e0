"""Packing outcome tuples into PAD-padded batches (mechanisms.outcomes)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import PAD, batch_from_outcomes, outcomes_from_batch

outcome = st.lists(st.integers(-1, 50), max_size=5).map(tuple)


@settings(max_examples=80)
@given(st.lists(outcome, max_size=40), st.integers(0, 3))
def test_packed_outcomes_hold_each_outcome_in_order_then_pad(outcomes, extra):
    width = max(map(len, outcomes), default=0) + extra
    batch = batch_from_outcomes(outcomes, width)
    assert batch.shape == (len(outcomes), width) and batch.dtype == np.int64
    for row, o in zip(batch.tolist(), outcomes):
        assert row == list(o) + [PAD] * (width - len(o))
    assert outcomes_from_batch(batch) == outcomes


def test_an_outcome_longer_than_the_width_is_refused():
    with pytest.raises(ValueError, match=r"outcome \(1, 2, 3\) is longer than width=2"):
        batch_from_outcomes([(1,), (1, 2, 3), (4, 5, 6, 7)], 2)
