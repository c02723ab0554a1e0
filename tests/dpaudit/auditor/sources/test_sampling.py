"""Chunked outcome counting: int64 row keys agree with mechanisms.count_outcomes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpaudit.auditor.sources.sampling import chunk_sizes, count_batch, sample_counts
from mechanisms import PAD, count_outcomes
from mechanisms.exponential import GumbelTopK


def _valid_batch(batch):
    # A valid batch pads only at the end of a row; ⊥ only as the last outcome element.
    batch = batch.copy()
    lengths = (batch[:, 0] % (batch.shape[1] + 1)).clip(0)
    batch[np.arange(batch.shape[1])[None, :] >= lengths[:, None]] = PAD
    return batch


@settings(max_examples=100, deadline=None)
@given(
    arrays(np.int64, st.tuples(st.integers(0, 40), st.integers(1, 5)), elements=st.integers(-1, 30))
)
def test_count_batch_matches_reference(batch):
    batch = _valid_batch(batch)
    expected = {}
    for row in batch:  # reference: one outcome per row, counted one by one
        key = tuple(int(v) for v in row[row != PAD])
        expected[key] = expected.get(key, 0) + 1
    assert dict(count_batch(batch)) == expected
    assert count_batch(batch) == count_outcomes(batch)


def test_count_batch_large_ids_fall_back():
    rng = np.random.default_rng(0)
    batch = rng.integers(-2, 2**40, size=(300, 4))
    assert count_batch(batch) == count_outcomes(batch)


def test_count_batch_rejects_bad_shapes():
    import pytest

    with pytest.raises(ValueError):
        count_batch(np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError):
        count_batch(np.full((2, 2), -3))


@given(st.integers(0, 10_000), st.integers(1, 3_000))
def test_chunk_sizes(total, chunk):
    sizes = chunk_sizes(total, chunk)
    assert sum(sizes) == total and all(0 < s <= chunk for s in sizes)


def test_chunked_and_parallel_sampling_are_reproducible(monkeypatch):
    from dpaudit.auditor.sources import sampling

    monkeypatch.setattr(sampling, "PARALLEL_MIN_CHUNK", 5_000)  # send these chunks to the pool
    mech = GumbelTopK(k=2, epsilon=1.0)
    counts = np.array([3, 2, 2, 0])
    seq = np.random.SeedSequence(5)
    one = sample_counts(mech.sample, counts, 30_000, seq, chunk=7_000)
    again = sample_counts(mech.sample, counts, 30_000, np.random.SeedSequence(5), chunk=7_000)
    parallel = sample_counts(
        mech.sample, counts, 30_000, np.random.SeedSequence(5), chunk=7_000, workers=2
    )
    assert one == again == parallel
    assert sum(one.values()) == 30_000
    assert all(len(o) == 2 and PAD not in o for o in one)
