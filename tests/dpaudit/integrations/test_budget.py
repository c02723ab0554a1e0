"""``dpaudit.integrations.budget``: the checks every partition-selection adapter shares."""

from dataclasses import dataclass

import numpy as np
import pytest

from dpaudit.integrations.budget import (
    empty_releases,
    validate_budget,
    validate_partition_selection,
)
from mechanisms import PAD


@dataclass(frozen=True)
class Adapter:
    """A frozen adapter as the integrations declare them (validated in __post_init__)."""

    epsilon: float = 1
    delta: float = 1e-6
    partitions: int = 4
    max_partitions_contributed: int = 1
    strategy: str = "laplace"
    extra_users: int = 0

    def __post_init__(self):
        validate_partition_selection(self, ("laplace", "truncated_geometric"))


def test_valid_values_are_stored_with_their_types():
    adapter = Adapter(epsilon=2, partitions=np.int64(3), max_partitions_contributed=np.int32(2))
    assert type(adapter.epsilon) is float and adapter.epsilon == 2.0
    assert type(adapter.partitions) is int and adapter.partitions == 3
    assert type(adapter.max_partitions_contributed) is int
    with pytest.raises(AttributeError):
        adapter.epsilon = 3.0  # type: ignore[misc]  # still frozen to everyone else


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("epsilon", 0, "epsilon must be a finite number > 0, got 0"),
        ("delta", 0.0, "delta must be a finite number in (0, 1), got 0.0"),
        ("partitions", 0, "partitions must be an integer >= 1, got 0"),
        (
            "max_partitions_contributed",
            0,
            "max_partitions_contributed must be an integer >= 1, got 0",
        ),
        (
            "strategy",
            "gaussian",
            "strategy must be one of 'laplace', 'truncated_geometric', got 'gaussian'",
        ),
        ("extra_users", -1, "extra_users must be an integer >= 0, got -1"),
    ],
)
def test_each_bad_value_is_named(field, value, message):
    with pytest.raises(ValueError) as caught:
        Adapter(**{field: value})
    assert str(caught.value) == message


def test_validate_budget_checks_only_the_budget_and_width():
    @dataclass(frozen=True)
    class BudgetOnly:
        epsilon: float = 1
        delta: float = 0.5
        partitions: int = 2

        def __post_init__(self):
            validate_budget(self)

    assert BudgetOnly().epsilon == 1.0
    with pytest.raises(ValueError, match=r"^delta must be"):
        BudgetOnly(delta=1)


def test_empty_releases_is_a_pad_batch_of_the_adapters_width():
    adapter = Adapter(partitions=5)
    rng = np.random.default_rng(0)
    counts, size, got_rng, out = empty_releases(adapter, [3, 0, 2], 4, rng)
    assert counts.tolist() == [3, 0, 2] and size == 4 and got_rng is rng
    assert out.dtype == np.int64 and out.shape == (4, 5) and (out == PAD).all()


def test_a_histogram_wider_than_the_adapter_names_the_fix():
    with pytest.raises(ValueError) as caught:
        empty_releases(Adapter(partitions=2), [1, 1, 1], 1, np.random.default_rng(0), noun="keys")
    assert (
        str(caught.value)
        == "a histogram of 3 keys is wider than partitions=2: construct the adapter with partitions=3"
    )


def test_empty_releases_checks_size_and_rng():
    with pytest.raises(ValueError, match=r"^size must be an integer >= 0"):
        empty_releases(Adapter(), [1], -1, np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"^rng must be a numpy.random.Generator"):
        empty_releases(Adapter(), [1], 1, 0)
    with pytest.raises(ValueError):
        empty_releases(Adapter(), [1, -1], 1, np.random.default_rng(0))  # a negative count
