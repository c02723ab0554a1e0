"""dpaudit.auditor.greybox.tilted_runs: weighted runs chunk by chunk, on streams laid out once."""

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.greybox.tilted_runs import (
    chunked_runs,
    chunks,
    event_hits,
    pilot_stream,
    weighted_runs,
)


def _item(j):
    return lambda outcomes: outcomes[:, 0] == j


def test_chunks_cover_the_runs_with_a_shorter_last_one():
    assert chunks(10, 4) == [4, 4, 2]
    assert chunks(8, 4) == [4, 4]
    assert chunks(3, 5) == [3]


def test_chunk_c_runs_on_the_c_th_child_of_the_seed():
    seen = []

    def run_chunk(stream, rows):
        seen.append((tuple(stream.spawn_key), rows))
        return np.full(rows, 0.5), np.ones(rows, dtype=bool)

    runs = chunked_runs(run_chunk, samples=10, chunk=4, seed=np.random.SeedSequence(7))
    assert seen == [((0,), 4), ((1,), 4), ((2,), 2)]
    assert runs.weights.shape == (10,) and np.array_equal(runs.values, np.full(10, 0.5))
    with pytest.raises(ValueError, match="samples must be an integer >= 1"):
        chunked_runs(run_chunk, samples=0, chunk=4, seed=0)


def test_at_mixture_one_the_runs_are_the_mechanism_s_own_on_each_chunk_s_stream():
    mechanism, counts, seed = M.GumbelTopK(k=1, epsilon=1.0), [2, 1, 0], 11
    runs = weighted_runs(
        mechanism.sample, counts, _item(1), tilts={0: [0.0, 3.0, 0.0]}, mixture=1.0, samples=700,
        seed=seed, chunk=300,
    )  # fmt: skip
    plain = [
        _item(1)(mechanism.sample(counts, rows, np.random.Generator(np.random.PCG64(child))))
        for child, rows in zip(
            (s.spawn(2)[0] for s in np.random.SeedSequence(seed).spawn(3)), [300, 300, 100]
        )
    ]
    assert np.array_equal(runs.hits, np.concatenate(plain))
    assert np.array_equal(runs.weights, np.ones(700))


def test_a_pilot_stream_is_no_chunk_s_and_leaves_the_root_alone():
    root = np.random.SeedSequence(5, spawn_key=(1,))
    pilot = pilot_stream(root, 2**32 - 1, 2)
    assert pilot.entropy == 5 and tuple(pilot.spawn_key) == (1, 2**32 - 1, 2)
    assert root.n_children_spawned == 0


def test_an_event_must_give_one_boolean_per_run():
    assert event_hits(lambda o: o > 0, np.array([1, 0, 2]), 3).tolist() == [True, False, True]
    with pytest.raises(ValueError, match=r"shape \(3,\), one entry per run, got dtype int64"):
        event_hits(lambda o: o, np.array([1, 0, 2]), 3)
