import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import TopCounts, as_top_counts, rank_order, top_counts, validate_counts


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ([], "empty"),
        ([[1, 2], [3, 4]], "1-D"),
        ([1, -1], "non-negative"),
        ([1.5, 2], "integer"),
        ([np.nan, 1], "NaN"),
        ([True, False], "dtype"),
        (["a", "b"], "dtype"),
    ],
)
def test_validate_counts_rejects_bad_input_naming_the_argument(bad, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        validate_counts(bad, "my_hist")
    assert "my_hist" in str(info.value)


def test_validate_counts_accepts_integral_floats():
    out = validate_counts(np.array([3.0, 0.0, 2.0]))
    assert out.dtype == np.int64
    assert out.tolist() == [3, 0, 2]


def test_rank_order_breaks_ties_to_lower_index():
    assert rank_order([1, 5, 5, 0, 5]).tolist() == [1, 2, 4, 0, 3]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=30),
    st.integers(1, 35),
)
def test_top_counts_is_the_prefix_of_the_full_rank_order(values, size):
    counts = np.array(values)
    top = top_counts(counts, size)
    order = rank_order(counts)[: min(size, counts.size)]
    assert top.items.tolist() == order.tolist()
    assert top.counts.tolist() == counts[order].tolist()
    assert top.domain_size == counts.size


def test_as_top_counts_accepts_a_precomputed_prefix_and_rejects_a_short_one():
    counts = np.array([4, 9, 9, 1, 0, 7])
    top = top_counts(counts, 4)
    assert as_top_counts(top, 3).items.tolist() == [1, 2, 5]
    with pytest.raises(ValueError, match="top 4 items but this mechanism needs the top 5"):
        as_top_counts(top, 5)


@pytest.mark.parametrize(
    "items, counts, fragment",
    [
        ([0, 1], [1, 2], "non-increasing"),
        ([1, 0], [2, 2], "lower item id first"),
        ([0, 0], [2, 1], "distinct"),
        ([0, 9], [2, 1], "domain_size"),
    ],
)
def test_top_counts_rejects_prefixes_that_break_the_convention(items, counts, fragment):
    with pytest.raises(ValueError, match=fragment):
        TopCounts(np.array(items), np.array(counts), 5)


def test_count_outcomes_adds_rows_that_name_the_same_outcome():
    from mechanisms import PAD, count_outcomes

    batch = np.array([[3, PAD, 1], [3, 1, PAD], [3, 1, PAD], [2, PAD, PAD]])
    tally = count_outcomes(batch)
    assert tally == {(3, 1): 3, (2,): 1}
