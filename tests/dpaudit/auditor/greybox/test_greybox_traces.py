"""dpaudit.auditor.greybox.traces: what fixes a draw's law, and where two traces part."""

import numpy as np
import pytest

from dpaudit.auditor.greybox.recording import RecordingGenerator
from dpaudit.auditor.greybox.traces import first_difference, law_parameters, same_parameter


def _trace(calls):
    rng = RecordingGenerator(np.random.PCG64(0))
    calls(rng)
    return rng.draws


def test_law_parameters_drop_the_size_and_keep_what_fixes_the_law():
    (laplace, choice, shuffle, permutation, random) = _trace(
        lambda g: (
            g.laplace(scale=2.0, size=4),
            g.choice(np.array([7, 8, 9]), size=2, replace=False),
            g.shuffle(np.zeros((3, 2))),
            g.permutation(5),
            g.random(2, dtype="float32"),
        )
    )
    assert law_parameters(laplace) == {"loc": 0.0, "scale": 2.0}
    law = law_parameters(choice)
    assert law["a"] == 3 and law["replace"] is False and law["p"] is None
    assert law_parameters(shuffle) == {"x": (3, 2), "axis": 0}
    assert law_parameters(permutation) == {"x": 5, "axis": 0}
    assert law_parameters(random) == {"dtype": np.dtype(np.float32)}


def _choose_and_shuffle(rng, items):
    rng.choice(items)
    rng.shuffle(np.asarray(items))


def test_the_contents_of_what_is_chosen_or_shuffled_are_not_the_law():
    trace = _trace(lambda g: _choose_and_shuffle(g, [1, 2, 3]))
    trace2 = _trace(lambda g: _choose_and_shuffle(g, [9, 9, 9]))
    assert first_difference(trace, trace2) is None
    longer = _trace(lambda g: _choose_and_shuffle(g, [1, 2, 3, 4]))
    assert first_difference(trace, longer).kind == "parameter"  # the population grew


@pytest.mark.parametrize(
    ("value", "value2", "same"),
    [
        (0.0, np.zeros(3), True),  # a scalar and the array it broadcasts to
        (np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), True),
        (np.array([1.0, 2.0]), np.array([1.0, 2.5]), False),
        (np.zeros(2), np.zeros(3), False),  # shapes that do not broadcast
        (np.dtype("float64"), np.dtype("float32"), False),
        ("zig", "zig", True),
        ("zig", 1.0, False),
        (None, None, True),
        (None, np.ones(2), False),
    ],
)
def test_same_parameter(value, value2, same):
    assert same_parameter(value, value2) is same


def _difference(calls, calls2, **options):
    return first_difference(_trace(calls), _trace(calls2), labels=("counts", "counts2"), **options)


def test_identical_traces_have_no_difference():
    assert _difference(lambda g: g.laplace(0.0, 1.0, 3), lambda g: g.laplace(0.0, 1.0, 3)) is None


def test_another_method_is_a_difference_at_its_index():
    found = _difference(lambda g: (g.random(), g.laplace()), lambda g: (g.random(), g.gumbel()))
    assert (found.index, found.kind) == (1, "method")
    assert "counts calls laplace" in found.detail and "counts2 calls gumbel" in found.detail
    assert found.draw.method == "laplace" and found.draw2.method == "gumbel"


def test_another_shape_is_a_difference():
    found = _difference(lambda g: g.laplace(size=3), lambda g: g.laplace(size=2))
    assert found.kind == "shape" and "(3,)" in found.detail and "(2,)" in found.detail


def test_another_scale_is_a_difference_that_names_the_parameter():
    found = _difference(lambda g: g.laplace(0.0, 1.0), lambda g: g.laplace(0.0, 2.0))
    assert (
        found.kind == "parameter"
        and "parameter scale is 1.0 on counts, 2.0 on counts2" in found.detail
    )


def test_ignored_parameters_are_not_compared():
    calls, calls2 = (lambda g: g.laplace(1.0, 1.0)), (lambda g: g.laplace(2.0, 1.0))
    assert _difference(calls, calls2).kind == "parameter"
    assert _difference(calls, calls2, ignore={"laplace": ("loc",)}) is None


def test_a_trace_that_ends_early_names_the_draw_the_other_goes_on_with():
    found = _difference(lambda g: g.random(), lambda g: (g.random(), g.normal(size=2)))
    assert (found.index, found.kind) == (1, "missing")
    assert found.draw is None and found.draw2.method == "normal"
    assert found.site == found.draw2.site
    assert "the counts run made 1 draws; the counts2 run goes on with normal (2,)" in found.detail


def _draw_here(rng, branch):
    if branch:
        return rng.random()
    return rng.random()


def test_the_same_draw_from_another_line_is_a_difference():
    found = _difference(lambda g: _draw_here(g, True), lambda g: _draw_here(g, False))
    assert found.kind == "site" and found.draw.site != found.draw2.site
