"""``greybox.inputs``: the seed and the sampler every grey-box run takes, checked alike.

Through the public grey-box functions (the replay check, coupled runs), which all read their
``seed`` and ``sampler`` through this module.
"""

import numpy as np
import pytest

from dpaudit.auditor.greybox import check_draws_only_from_rng, coupled_runs
from mechanisms import GumbelTopK

MECH = GumbelTopK(k=2, epsilon=1.0)
COUNTS = [3, 2, 2, 0]


class FirstDraw:
    """A sampler that keeps the first uniform of each run's generator."""

    def __init__(self):
        self.seen = []

    def sample(self, counts, size, rng):
        self.seen.append(rng.random())
        return np.zeros((size, 1), dtype=np.int64)


def test_an_integer_seed_is_the_stream_of_default_rng():
    sampler = FirstDraw()
    assert not check_draws_only_from_rng(sampler, COUNTS, seed=7, size=2).reasons
    assert sampler.seen == [np.random.default_rng(7).random()] * 2  # both runs, one stream


def test_a_given_seed_sequence_is_copied_never_advanced():
    seed = np.random.SeedSequence(11, spawn_key=(3,))
    first = coupled_runs(MECH, COUNTS, [3, 2, 1, 0], seed=seed, size=5)
    assert seed.n_children_spawned == 0
    again = coupled_runs(MECH, COUNTS, [3, 2, 1, 0], seed=seed, size=5)
    assert first.costs == again.costs and first.divergences == again.divergences
    assert seed.n_children_spawned == 0


def test_an_integer_and_its_seed_sequence_are_the_same_seed():
    by_int = coupled_runs(MECH, COUNTS, [3, 2, 1, 0], seed=5, size=3)
    by_sequence = coupled_runs(MECH, COUNTS, [3, 2, 1, 0], seed=np.random.SeedSequence(5), size=3)
    assert by_int.costs == by_sequence.costs


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3", None])
def test_a_bad_seed_is_refused_with_both_forms(seed):
    with pytest.raises(ValueError, match=r"seed must be an integer >= 0"):
        check_draws_only_from_rng(MECH, COUNTS, seed=seed)


def test_a_numpy_integer_seed_is_taken():
    assert not check_draws_only_from_rng(MECH, COUNTS, seed=np.int64(3), size=5).reasons


@pytest.mark.parametrize(
    "run", [check_draws_only_from_rng, lambda s, c, seed: coupled_runs(s, c, c, seed=seed)]
)
def test_something_without_sample_is_refused_with_how_to_wrap_it(run):
    with pytest.raises(ValueError) as caught:
        run(lambda counts, size, rng: None, COUNTS, seed=0)
    message = str(caught.value)
    assert message.startswith("mechanism must have sample(counts, size, rng), got <function")
    assert message.endswith(
        "or wrap a function with dpaudit.auditor.as_auditable(f, claim=..., width=...)"
    )
