"""``dpaudit.provenance``: mechanism specs and relations on record, and back."""

import json
import platform
from dataclasses import dataclass

import pytest

import mechanisms
from dpaudit.provenance import (
    MOVED_MODULES,
    at_present_paths,
    mechanism_spec,
    rebuild_mechanism,
    relation_from_dict,
    relation_to_dict,
    versions,
)
from mechanisms import AddRemoveUser, BoundedChange, Substitute

BUILT_IN = [
    mechanisms.GumbelTopK(k=2, epsilon=0.5, monotonic=True),
    mechanisms.LimitDomain(k=2, kbar=4, epsilon=1.0, delta=1e-6, max_items=3),
    mechanisms.ReportNoisyMax(epsilon=1.0),
    mechanisms.SparseVector(threshold=2.0, epsilon1=1.0, epsilon2=0.5, cutoff=3),
    # A nested mechanism: RestrictedDomain's inner one is a spec of its own.
    mechanisms.RestrictedDomain(
        mechanisms.GumbelTopK(k=2, epsilon=1.0), kbar=4, epsilon=1.0, delta=1e-6
    ),
]


@pytest.mark.parametrize("mech", BUILT_IN, ids=lambda m: type(m).__name__)
def test_a_spec_survives_json_and_rebuilds_an_equal_mechanism(mech):
    spec = mechanism_spec(mech)
    assert spec is not None
    assert spec["class"] == f"{type(mech).__module__}:{type(mech).__qualname__}"
    back = rebuild_mechanism(json.loads(json.dumps(spec)))
    assert back == mech and type(back) is type(mech)


def test_a_nested_mechanism_is_recorded_as_a_spec():
    spec = mechanism_spec(BUILT_IN[-1])
    assert spec is not None
    inner = spec["params"]["mechanism"]
    assert inner["class"].endswith(":GumbelTopK") and inner["params"]["k"] == 2


def test_a_tuple_parameter_round_trips_as_a_tuple():
    from mechanisms.profiles import ProfilePoints  # a frozen dataclass with nested tuples

    profile = ProfilePoints(((1.0, 1e-3), (2.0, 1e-4)))
    spec = mechanism_spec(profile)
    assert spec is not None
    assert spec["params"]["points"] == {"tuple": [{"tuple": [1.0, 1e-3]}, {"tuple": [2.0, 1e-4]}]}
    assert rebuild_mechanism(json.loads(json.dumps(spec))) == profile


def test_classes_outside_the_two_packages_have_no_spec():
    @dataclass(frozen=True)
    class Local:
        epsilon: float = 1.0

    assert mechanism_spec(Local()) is None


def test_a_parameter_that_cannot_be_recorded_gives_no_spec():
    from dpaudit.auditor.values.outcome_events import OutcomeSet  # holds a frozenset

    assert mechanism_spec(OutcomeSet(frozenset({(0,), (1, 2)}))) is None


def test_objects_not_recordable_have_no_spec():
    assert mechanism_spec(lambda counts: counts) is None
    assert mechanism_spec(object()) is None


def test_numpy_scalars_are_recorded_as_python_numbers():
    import numpy as np

    spec = mechanism_spec(mechanisms.GumbelTopK(k=np.int64(2), epsilon=np.float64(0.5)))
    assert spec is not None
    assert type(spec["params"]["k"]) is int and type(spec["params"]["epsilon"]) is float


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"params": {}}, "not a mechanism spec"),
        ({"class": "GumbelTopK"}, "not a mechanism spec"),
        ("mechanisms:GumbelTopK", "not a mechanism spec"),
        (
            {"class": "os:system", "params": {"command": "true"}},
            "only classes of mechanisms, dpaudit are rebuilt, not os",
        ),
        (
            {"class": "dpaudit_extra.module:Thing", "params": {}},
            "only classes of mechanisms, dpaudit are rebuilt, not dpaudit_extra.module",
        ),
        # Functions and non-dataclasses of the two packages are never called from a file.
        ({"class": "dpaudit.cli.output:write_text", "params": {}}, "is not a dataclass"),
        ({"class": "dpaudit.provenance:np", "params": {}}, "is not a dataclass"),
        ({"class": "mechanisms:GumbelTopK.no_such_attribute", "params": {}}, "is not a dataclass"),
    ],
)
def test_rebuild_refuses_anything_but_a_built_in_spec(spec, message):
    with pytest.raises(ValueError, match=message):
        rebuild_mechanism(spec)


def test_a_spec_under_a_moved_module_rebuilds_at_its_present_path():
    old, new = next(iter(MOVED_MODULES.items()))
    spec = {"class": f"{old}:Something", "nested": [{"class": f"{old}:Other"}, 3], "label": old}
    present = at_present_paths(spec)
    assert present == {
        "class": f"{new}:Something",
        "nested": [{"class": f"{new}:Other"}, 3],
        "label": old,
    }
    assert at_present_paths(spec) is not spec and spec["class"].startswith(
        old
    )  # not changed in place


def test_every_moved_module_exists_at_its_present_path():
    import importlib

    for present in MOVED_MODULES.values():
        importlib.import_module(present)


@pytest.mark.parametrize(
    "relation",
    [
        AddRemoveUser(),
        AddRemoveUser(3),
        BoundedChange(2),
        Substitute(),
        Substitute(None),
        Substitute(4),
    ],
)
def test_relations_round_trip_through_json(relation):
    data = relation_to_dict(relation)
    assert relation_from_dict(json.loads(json.dumps(data))) == relation


def test_relation_dicts_are_spelled_as_the_cli_spells_them():
    assert relation_to_dict(BoundedChange(2)) == {"kind": "bounded-change", "max_change": 2}
    assert relation_to_dict(AddRemoveUser(3)) == {"kind": "add-remove", "max_items": 3}
    assert relation_to_dict(Substitute()) == {"kind": "substitute", "max_items": 1}


def test_an_unknown_relation_is_refused():
    with pytest.raises(ValueError, match="not a neighbour relation"):
        relation_from_dict({"kind": "swap"})


def test_versions_name_python_and_the_libraries():
    found = versions()
    assert found["python"] == platform.python_version()
    assert set(found) == {"python", "dpaudit", "numpy", "scipy", "statsmodels", "mpmath"}
    import numpy

    assert found["numpy"] == numpy.__version__


def test_a_crafted_spec_naming_a_writer_writes_nothing(tmp_path):
    # recheck rebuilds the mechanism of a file anyone may hand it: a spec naming a function of
    # dpaudit (here one that writes a file) must be refused before it is called.
    target = tmp_path / "written.txt"
    spec = {
        "class": "dpaudit.cli.output:write_text",
        "params": {"path": str(target), "text": "pwned", "option": "--json"},
    }
    with pytest.raises(ValueError, match="not a dataclass"):
        rebuild_mechanism(spec)
    assert not target.exists()
