"""``mechanisms.base``: the contract, ``run`` as the first row of ``sample``, the checks."""

from dataclasses import dataclass

import numpy as np
import pytest

import mechanisms
from mechanisms.base import DeclaresOutputSupport, TopKMechanism, check_rng, check_size
from mechanisms.claims import UNRESTRICTED, PrivacyClaim
from mechanisms.outcomes import PAD, MixedBatch


@dataclass(frozen=True)
class ArgmaxPlusNoise(TopKMechanism):
    """A minimal mechanism: the index of the largest count plus Gumbel noise, then ⊥-padding."""

    epsilon: float = 1.0

    @property
    def width(self) -> int:
        return 2

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, 0.0, UNRESTRICTED)

    def sample(self, counts, size, rng):
        check_rng(rng)
        size = check_size(size)
        counts = np.asarray(counts, dtype=float)
        noisy = counts + rng.gumbel(scale=2 / self.epsilon, size=(size, counts.size))
        batch = np.full((size, 2), PAD, dtype=np.int64)
        batch[:, 0] = noisy.argmax(axis=1)
        return batch


def test_the_contract_is_abstract():
    with pytest.raises(TypeError):
        TopKMechanism()  # type: ignore[abstract]

    @dataclass(frozen=True)
    class NoClaim(TopKMechanism):
        @property
        def width(self):
            return 1

        def sample(self, counts, size, rng):
            return np.zeros((size, 1), dtype=np.int64)

    with pytest.raises(TypeError, match="claim"):
        NoClaim()  # type: ignore[abstract]


def test_outcomes_are_ordered_unless_a_mechanism_says_otherwise():
    assert TopKMechanism.ordered is True
    assert ArgmaxPlusNoise().ordered is True


def test_run_is_the_first_row_of_sample_without_the_padding():
    mech = ArgmaxPlusNoise()
    counts = [5, 9, 1, 3]
    for seed in range(20):
        batch = mech.sample(counts, 1, np.random.default_rng(seed))
        outcome = mech.run(counts, np.random.default_rng(seed))
        assert outcome == (int(batch[0, 0]),)
        assert all(isinstance(i, int) for i in outcome)


def test_run_of_a_value_release_asks_for_an_override():
    @dataclass(frozen=True)
    class ReleasesValues(ArgmaxPlusNoise):
        def sample(self, counts, size, rng):
            items = super().sample(counts, size, rng)
            return MixedBatch(items, np.zeros((size, 1)))

    with pytest.raises(
        NotImplementedError, match=r"ReleasesValues releases values: it overrides run\(\)"
    ):
        ReleasesValues().run([1, 2], np.random.default_rng(0))


@pytest.mark.parametrize("rng", [0, None, np.random.RandomState(0), np.random.SeedSequence(0)])
def test_check_rng_refuses_everything_but_a_generator_and_shows_how(rng):
    with pytest.raises(TypeError) as caught:
        check_rng(rng)
    message = str(caught.value)
    assert message.startswith(
        "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed))"
    )
    assert message.endswith(f"got {type(rng).__name__}")


def test_check_rng_returns_the_generator_itself():
    rng = np.random.default_rng(1)
    assert check_rng(rng) is rng


def test_check_size_takes_zero_and_refuses_negative_and_float():
    assert check_size(0) == 0 and check_size(np.int32(5)) == 5
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match=r"^size must be an integer >= 0, got "):
            check_size(bad)


def test_every_reference_mechanism_keeps_the_run_sample_contract():
    # The same generator state gives the same outcome both ways (run is sample(.., 1, ..));
    # a batch has `width` columns of int64.
    built = [
        mechanisms.GumbelTopK(k=2, epsilon=1.0),
        mechanisms.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6),
        mechanisms.ReportNoisyMax(epsilon=1.0),
        mechanisms.SparseVector(threshold=3.0, epsilon1=1.0, epsilon2=1.0, cutoff=2),
    ]
    counts = [6, 4, 4, 1, 0]
    for mech in built:
        assert mech.sample(counts, 3, np.random.default_rng(11)).shape == (3, mech.width)
        batch = mech.sample(counts, 1, np.random.default_rng(11))
        assert batch.dtype == np.int64 and batch.shape == (1, mech.width)
        first = tuple(int(v) for v in batch[0] if v != PAD)
        assert mech.run(counts, np.random.default_rng(11)) == first, mech


def test_declares_output_support_is_a_runtime_protocol():
    assert not isinstance(ArgmaxPlusNoise(), DeclaresOutputSupport)

    class Declares:
        def output_support(self, counts):
            return frozenset({0})

    assert isinstance(Declares(), DeclaresOutputSupport)
    limit = mechanisms.LimitDomain(k=1, kbar=2, epsilon=1.0, delta=1e-6)
    assert isinstance(limit, DeclaresOutputSupport)
