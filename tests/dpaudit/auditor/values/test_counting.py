"""``dpaudit.auditor.values.counting``: packed-key counting agrees with counting rows one by one."""

from collections import Counter

import numpy as np
import pytest

from dpaudit.auditor import count_batch as exported
from dpaudit.auditor.values.counting import count_batch
from mechanisms import BOTTOM, PAD


def _by_rows(batch) -> Counter:
    """The independent route: each row's tuple, PAD cells dropped, counted by Counter."""
    return Counter(tuple(int(v) for v in row if v != PAD) for row in np.asarray(batch))


def _random_batch(rng, size, width, top, pad_share=0.3):
    batch = rng.integers(BOTTOM, top + 1, size=(size, width))
    lengths = rng.integers(0, width + 1, size=size) if pad_share else np.full(size, width)
    for row, n in zip(batch, lengths, strict=True):
        row[n:] = PAD
    return batch


def test_the_auditor_exports_it():
    assert exported is count_batch


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("width, top", [(1, 3), (3, 6), (5, 40)])
def test_counts_agree_with_rows_one_by_one(seed, width, top):
    batch = _random_batch(np.random.default_rng(seed), 400, width, top)
    counted = count_batch(batch)
    assert counted == _by_rows(batch)
    assert sum(counted.values()) == 400


def test_full_rows_without_padding():
    batch = _random_batch(np.random.default_rng(9), 300, 3, 5, pad_share=0)
    assert count_batch(batch) == _by_rows(batch)


def test_keys_too_wide_for_int64_fall_back_to_rows():
    # 8 columns of ids up to 10^9: 8 · log2(10^9) > 62 bits.
    batch = np.array(
        [[10**9, 5, 4, 3, 2, 1, 0, BOTTOM]] * 3 + [[7, PAD, PAD, PAD, PAD, PAD, PAD, PAD]]
    )
    assert count_batch(batch) == Counter({(10**9, 5, 4, 3, 2, 1, 0, BOTTOM): 3, (7,): 1})


def test_empty_and_zero_width_batches():
    assert count_batch(np.zeros((0, 3), dtype=np.int64)) == Counter()
    assert count_batch(np.zeros((5, 0), dtype=np.int64)) == Counter({(): 5})
    assert count_batch(np.full((2, 2), PAD)) == Counter({(): 2})


def test_a_batch_must_be_2d_and_hold_nothing_below_pad():
    with pytest.raises(
        ValueError, match=r"a sample batch must be 2-D \(size, width\), got shape \(3,\)"
    ):
        count_batch(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match=r"sample batch holds -3, below PAD=-2"):
        count_batch(np.array([[1, -3]]))


def test_outcome_keys_are_python_ints():
    counted = count_batch(np.array([[2, 1], [2, 1]], dtype=np.int32))
    ((key, count),) = counted.items()
    assert key == (2, 1) and count == 2
    assert all(type(v) is int for v in key) and type(count) is int
