"""The live source refuses a mechanism that draws outside its ``rng``, before any verdict."""

import random

import numpy as np
import pytest

import dpaudit
import mechanisms as M
from dpaudit.auditor.greybox.replay import OutsideRandomnessError
from dpaudit.cli import main


def _global_numpy(counts, rng):
    # The bug under test: numpy's global generator instead of rng.
    noise = np.random.laplace(0, 2.0, len(counts))  # noqa: NPY002
    return (int(np.argmax(np.asarray(counts) + noise)),)


def _python_random(counts, rng):
    return (random.randrange(len(counts)),)


def _own_generator(counts, rng):
    own = np.random.default_rng()
    return (int(np.argmax(np.asarray(counts) + own.laplace(0, 2.0, len(counts)))),)


def _honest(counts, rng):
    return (int(np.argmax(np.asarray(counts) + rng.laplace(0, 2.0, len(counts)))),)


@pytest.mark.parametrize("function", [_global_numpy, _python_random, _own_generator])
def test_a_mechanism_drawing_outside_its_rng_is_never_passed(function):
    with pytest.raises(OutsideRandomnessError, match="the mechanism is refused") as refused:
        dpaudit.audit(function, claim=(1.0, 0.0), width=1, samples=60_000, seed=0, domain_size=3)
    assert "Draw every random number from the rng" in str(refused.value)


def test_the_cli_refuses_it_in_one_line_with_exit_status_2(capsys, monkeypatch):
    import sys
    import types

    module = types.ModuleType("outside_rng_mechanism")
    module.noisy_max = _global_numpy
    monkeypatch.setitem(sys.modules, "outside_rng_mechanism", module)
    argv = ["audit", "outside_rng_mechanism:noisy_max", "--claim", "1,0", "--width", "1"]
    status = main([*argv, "--relation", "bounded-change:1", "--samples", "60000"])
    err = capsys.readouterr().err
    assert status == 2
    assert "numpy's global generator" in err and len(err.strip().splitlines()) == 1


def test_an_honest_mechanism_audits_as_before_and_the_check_costs_no_samples():
    result = dpaudit.audit(
        _honest, claim=(1.0, 0.0), width=1, samples=60_000, seed=0, domain_size=3
    )
    assert not result.violation and result.samples <= 60_000
    again = dpaudit.audit(M.GumbelTopK(k=1, epsilon=1.0), samples=60_000, seed=0)
    assert again.samples <= 60_000
