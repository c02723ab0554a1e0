"""``dpaudit.auditor.values.batches``: a value sampler's return as a MixedBatch of its shape."""

from types import SimpleNamespace

import numpy as np
import pytest

from dpaudit.auditor.values.batches import as_mixed_batch, column_items, value_width_of
from mechanisms import PAD, MixedBatch


def test_value_width_of_reads_the_declaration_or_zero():
    assert value_width_of(SimpleNamespace(value_width=2)) == 2
    assert value_width_of(SimpleNamespace(value_width=None)) == 0
    assert value_width_of(object()) == 0


def test_a_mixed_batch_of_the_right_shape_passes_unchanged():
    batch = MixedBatch(np.array([[1, 2], [0, PAD]]), np.array([[0.5], [1.5]]))
    got = as_mixed_batch(batch, 2, 2, 1, "m")
    assert got is batch


def test_an_items_values_pair_is_packed_and_padded_to_the_width():
    items, values = np.array([3, 1, 4]), np.array([[0.1], [0.2], [0.3]])
    got = as_mixed_batch((items, values), 3, 2, 1, "m")
    assert got.items.tolist() == [[3, PAD], [1, PAD], [4, PAD]]
    assert got.values.tolist() == values.tolist()


def test_bare_values_of_a_values_only_release():
    got = as_mixed_batch(np.array([1.0, 2.0, np.nan]), 3, 0, 1, "m")
    assert got.items.shape == (3, 0)
    assert np.array_equal(got.values, [[1.0], [2.0], [np.nan]], equal_nan=True)


def test_an_empty_items_part_means_no_items():
    got = as_mixed_batch(([], np.ones((2, 2))), 2, 0, 2, "m")
    assert got.items.shape == (2, 0) and got.values.shape == (2, 2)


def test_bare_values_where_items_are_declared_are_refused_naming_the_mechanism():
    with pytest.raises(ValueError) as caught:
        as_mixed_batch(np.ones(3), 3, 1, 1, "mymod:f")
    assert (
        str(caught.value)
        == "mymod:f declares 1 value(s) per outcome and must return a MixedBatch or (items, values), got ndarray"
    )


@pytest.mark.parametrize(
    "batch, size, width, value_width",
    [
        (MixedBatch(np.zeros((2, 1), dtype=np.int64), np.ones((2, 1))), 3, 1, 1),  # too few rows
        ((np.zeros((2, 1), dtype=np.int64), np.ones((2, 2))), 2, 1, 1),  # values too wide
        ((np.zeros((2, 3), dtype=np.int64), np.ones((2, 1))), 2, 2, 1),  # items too wide
    ],
)
def test_a_wrong_shape_names_both_shapes(batch, size, width, value_width):
    with pytest.raises(ValueError) as caught:
        as_mixed_batch(batch, size, width, value_width, "m")
    message = str(caught.value)
    assert message.startswith("m returned items of shape ")
    assert message.endswith(f"expected ({size}, <= {width}) and ({size}, {value_width})")


def test_column_items_is_the_column_or_pad_beyond_it():
    items = np.array([[1, 2], [3, PAD]])
    assert column_items(items, 0).tolist() == [1, 3]
    assert column_items(items, 1).tolist() == [2, PAD]
    assert column_items(items, 5).tolist() == [PAD, PAD]
    assert column_items(np.zeros((2, 0), dtype=np.int64), 0).tolist() == [PAD, PAD]
