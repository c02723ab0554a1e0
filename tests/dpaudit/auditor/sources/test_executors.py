"""``dpaudit.auditor.sources.executors``: the local executor's draws, counts and fallbacks."""

from collections import Counter

import numpy as np
import pytest

from dpaudit.auditor.sources.executors import LocalExecutor
from mechanisms import GumbelTopK

MECH = GumbelTopK(k=2, epsilon=1.0)
HISTOGRAMS = [np.array([4, 2, 0]), np.array([3, 3, 1])]


def _seeds(seed):
    return [np.random.SeedSequence(seed, spawn_key=(0, 0, i)) for i in range(len(HISTOGRAMS))]


def test_a_draw_is_one_tally_per_histogram_of_the_asked_size():
    executor = LocalExecutor(MECH, chunk=300)
    drawn = executor.draw(HISTOGRAMS, 1000, _seeds(1))
    assert [n for _, n in drawn] == [1000, 1000]
    assert all(sum(counter.values()) == 1000 for counter, _ in drawn)
    assert executor.used == 2000
    executor.draw(HISTOGRAMS[:1], 10, _seeds(2)[:1])
    assert executor.used == 2010  # cumulative
    executor.close()


def test_the_same_seeds_give_the_same_tallies():
    first = LocalExecutor(MECH, chunk=300).draw(HISTOGRAMS, 700, _seeds(5))
    again = LocalExecutor(MECH, chunk=300).draw(HISTOGRAMS, 700, _seeds(5))
    other = LocalExecutor(MECH, chunk=300).draw(HISTOGRAMS, 700, _seeds(6))
    assert first == again
    assert first != other


def test_the_tallies_are_the_mechanisms_own_outcomes():
    # One chunk: the tally is the mechanism's sample on the chunk's seed, counted by rows.
    executor = LocalExecutor(MECH, chunk=10_000)
    ((counter, n),) = executor.draw(HISTOGRAMS[:1], 500, _seeds(3)[:1])
    assert n == 500
    assert set(counter) <= {(a, b) for a in range(3) for b in range(3) if a != b}
    top = Counter({k: v for k, v in counter.items() if k[0] == 0})
    assert sum(top.values()) > 250  # item 0 has the largest count by 2 (ε = 1): first most often


def test_the_description_names_the_processes():
    assert LocalExecutor(MECH).description == "local (1 process)"


def test_a_mechanism_that_cannot_be_pickled_samples_in_one_process():
    class Unpicklable(GumbelTopK):
        pass

    mech = Unpicklable(k=1, epsilon=1.0)
    object.__setattr__(mech, "hook", lambda: None)  # a lambda: not picklable
    with pytest.warns(UserWarning, match="mechanism cannot be pickled; sampling in one process"):
        executor = LocalExecutor(mech, workers=2)
    assert executor.workers == 1 and executor.pool is None
    ((_, n),) = executor.draw(HISTOGRAMS[:1], 50, _seeds(0)[:1])
    assert n == 50
    executor.close()


def test_last_jobs_are_the_draws_jobs():
    executor = LocalExecutor(MECH, chunk=100)
    executor.draw(HISTOGRAMS, 250, _seeds(1))
    assert len(executor.last_jobs) == 2
    assert all(job.done == 250 for job in executor.last_jobs)


def test_the_tallies_do_not_depend_on_the_number_of_workers():
    one = LocalExecutor(MECH, workers=1, chunk=100).draw(HISTOGRAMS, 450, _seeds(8))
    pool = LocalExecutor(MECH, workers=2, chunk=100)
    try:
        assert pool.workers == 2 and pool.description == "local (2 processes)"
        assert pool.draw(HISTOGRAMS, 450, _seeds(8)) == one
    finally:
        pool.close()
