"""dpaudit.auditor.greybox.replay: refusing outside randomness, from one stream run twice."""

import random

import numpy as np
import pytest
import user_mechanisms
from helpers import Batched

import mechanisms as M
from dpaudit.auditor import as_auditable
from dpaudit.auditor.greybox.replay import OutsideRandomnessError, check_draws_only_from_rng
from dpaudit.errors import UsageError

COUNTS = [4, 3, 3, 1, 0]


@pytest.fixture(autouse=True)
def _restore_global_generators():
    """Mechanisms here draw from numpy's global generator and random: put them back."""
    numpy_state, python_state = np.random.get_state(), random.getstate()  # noqa: NPY002
    yield
    np.random.set_state(numpy_state)  # noqa: NPY002
    random.setstate(python_state)


# -- mechanisms that draw outside their rng --


def rnm_global_numpy(counts, size, rng):
    noise = np.random.laplace(0.0, 2.0, (size, len(counts)))  # noqa: NPY002 (the bug under test)
    return np.argmax(counts + noise, axis=1)[:, None]


def rnm_python_random(counts, size, rng):
    noise = np.array([[random.gauss(0.0, 2.0) for _ in counts] for _ in range(size)])
    return np.argmax(counts + noise, axis=1)[:, None]


_KEPT = np.random.default_rng(7)  # a generator of its own, kept between calls


def rnm_own_generator(counts, size, rng):
    return np.argmax(counts + _KEPT.laplace(0.0, 2.0, (size, len(counts))), axis=1)[:, None]


def rnm_fresh_entropy(counts, size, rng):
    own = np.random.default_rng()  # OS entropy on every call
    return np.argmax(counts + own.laplace(0.0, 2.0, (size, len(counts))), axis=1)[:, None]


def test_a_mechanism_drawing_from_numpy_s_global_generator_is_refused():
    check = check_draws_only_from_rng(Batched(rnm_global_numpy), COUNTS, seed=1, size=50)
    assert check.refused
    assert "numpy's global generator" in check.reasons[0]
    with pytest.raises(OutsideRandomnessError, match="the mechanism is refused") as raised:
        check.require()
    assert isinstance(raised.value, UsageError)
    assert "draw every random number from the rng" in str(raised.value).lower()


def test_a_mechanism_drawing_from_python_s_random_module_is_refused():
    check = check_draws_only_from_rng(Batched(rnm_python_random), COUNTS, seed=1, size=50)
    assert check.refused and "Python's random module" in check.reasons[0]


def test_a_mechanism_keeping_its_own_generator_is_refused_with_the_first_differing_row():
    check = check_draws_only_from_rng(Batched(rnm_own_generator), [5, 5, 5, 5], seed=1, size=50)
    assert check.refused and check.row is not None
    assert check.outcome != check.outcome2
    assert f"first at row {check.row}: {check.outcome} then {check.outcome2}" in check.message
    assert "its own default_rng()" in check.message


def test_a_mechanism_drawing_os_entropy_is_refused():
    # Four items tied: the chance that two independent runs of 50 agree is 4^-50.
    check = check_draws_only_from_rng(Batched(rnm_fresh_entropy), [5, 5, 5, 5], seed=1, size=50)
    assert check.refused and check.row is not None


def test_draws_that_differ_without_changing_outcomes_are_refused():
    def sometimes_draws_twice(counts, size, rng):
        rng.random(1 + int(_KEPT.integers(2)))  # how much it draws is decided elsewhere
        return np.zeros((size, 1), dtype=np.int64)

    checks = [
        check_draws_only_from_rng(Batched(sometimes_draws_twice), COUNTS, seed=s, size=1)
        for s in range(8)
    ]
    refused = [c for c in checks if c.refused]
    assert refused and all(c.row is None for c in refused)
    assert "drew differently at call #0" in refused[0].message


@pytest.mark.parametrize(
    ("sampler", "counts"),
    [
        (M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3), COUNTS),
        (M.GumbelTopK(k=2, epsilon=0.5), COUNTS),
        (M.ReportNoisyMax(epsilon=1.0), COUNTS),
        (as_auditable(user_mechanisms.rnm_per_call, claim=(1.0, 0.0), width=1).mechanism, COUNTS),
        (
            as_auditable(
                user_mechanisms.rnm_noisy_max_value,
                claim=(2.5, 0.0),
                width=0,
                batched=True,
                values=1,
            ).mechanism,
            COUNTS,
        ),
    ],
    ids=["LimitDomain", "GumbelTopK", "ReportNoisyMax", "per-call callable", "discrete Laplace"],
)
def test_mechanisms_drawing_only_from_rng_pass(sampler, counts):
    check = check_draws_only_from_rng(sampler, counts, seed=3, size=40)
    assert not check.refused and check.message == "" and check.require() is check
    assert check.consumed


def test_raw_words_and_no_draws_are_noted_not_refused():
    discrete = as_auditable(
        user_mechanisms.rnm_noisy_max_value, claim=(2.5, 0.0), width=0, batched=True, values=1
    ).mechanism
    check = check_draws_only_from_rng(discrete, COUNTS, seed=3, size=10)
    assert check.draws == 0 and "raw bit-generator words" in check.note
    deterministic = check_draws_only_from_rng(
        Batched(user_mechanisms.argmax_batched), COUNTS, seed=3
    )
    assert not deterministic.refused and not deterministic.consumed
    assert "drew nothing from rng" in deterministic.note


def test_bad_arguments_name_themselves_and_the_fix():
    with pytest.raises(ValueError, match=r"mechanism must have sample.*as_auditable"):
        check_draws_only_from_rng(rnm_global_numpy, [1], seed=0)
    with pytest.raises(ValueError, match="seed must be an integer"):
        check_draws_only_from_rng(M.ReportNoisyMax(epsilon=1.0), [1], seed=1.5)
    with pytest.raises(ValueError, match="size"):
        check_draws_only_from_rng(M.ReportNoisyMax(epsilon=1.0), [1], seed=0, size=0)
