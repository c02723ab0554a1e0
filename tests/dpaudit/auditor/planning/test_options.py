"""The live audit's options (dpaudit.auditor.planning.options): validated once, frozen."""

import dataclasses

import pytest

import mechanisms as M
from dpaudit.auditor.planning.options import AuditOptions
from dpaudit.auditor.sources.sampling import DEFAULT_CHUNK


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"workers": 0}, "workers must be an integer >= 1"),
        ({"seed": -1}, "seed must be an integer >= 0"),
        ({"seed": True}, "seed must be an integer >= 0"),
        ({"power_factor": 0.5}, "power_factor must be a number >= 1"),
        ({"samples": 999}, "samples must be an integer >= 1000"),
        ({"alpha": 1.0}, "alpha must be in"),
        ({"keep": 0}, "keep must be an integer >= 1"),
    ],
)
def test_bad_options_are_refused_naming_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AuditOptions(**kwargs)


def test_options_are_frozen_and_determine_the_plan():
    options = AuditOptions(samples=5_000, seed=7, keep=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 8
    plan = options.plan()
    assert (plan.samples, plan.seed, plan.keep, plan.chunk) == (5_000, 7, 3, DEFAULT_CHUNK)


def test_search_runs_only_when_asked_and_not_restricted():
    assert AuditOptions().searches
    assert not AuditOptions(search=False).searches
    assert not AuditOptions(restrict=True, counts=[1, 0]).searches


def test_plan_fields_record_what_determines_the_samples():
    options = AuditOptions(samples=4_000, counts=[2, 1, 0], pairs=[((1, 0), (0, 0))])
    fields = options.plan_fields()
    assert fields["counts"] == [2, 1, 0]
    assert fields["pairs"] == [[[1, 0], [0, 0]]]
    assert fields["samples"] == 4_000 and fields["search"] is True


def test_a_per_call_function_gets_its_preferred_chunk_unless_one_was_given():
    class Slow(M.GumbelTopK):
        preferred_chunk = 64

    mech = Slow(k=1, epsilon=1.0)
    assert AuditOptions().for_mechanism(mech).chunk == 64
    assert AuditOptions(chunk=1_000).for_mechanism(mech).chunk == 1_000
