"""The golden audit results (``tests/golden/``) are reproduced.

Audits are deterministic per seed, so a difference is a change of behaviour: either a bug of a
refactor, or an intended change that rewrites the files in a commit of its own
(``python tests/golden/cases.py --write``), whose message says why.

What must not change is compared exactly: the structure (keys, list lengths), and every
string, integer, boolean and null (verdicts, hit counts, sample counts, pairs, events,
seeds). Floats are compared at a relative tolerance of ``FLOAT_RTOL``: the value encoder's
logistic weights, its score edges and every bound computed from them pass through numerical
fits and special functions whose last digits move with the numpy, scipy and BLAS build
(``-0.10153136238654353`` became ``...356`` on one fresh install); a real change of result
moves them far more than 1e-9, and moves a count or a verdict with them. A source line number
in a string (a grey-box finding's call site, ``mechanisms/stability.py:276``) is compared without
its number: a docstring added above the call moves it, and the file and the call are what the
finding says.
"""

import json
import math
import re

import pytest
from golden.cases import CASES, path, stable_result

#: Relative tolerance for floats: last-digit noise of a library upgrade is about 1e-15.
FLOAT_RTOL = 1e-9
#: Absolute tolerance, for floats that are zero in one build and 1e-17 in another.
FLOAT_ATOL = 1e-12
#: A source location in a string: compared as ``file.py:<line>``.
SOURCE_LINE = re.compile(r"(\.py):\d+")


def _without_lines(text):
    return SOURCE_LINE.sub(r"\1:<line>", text)


def differences(expected, actual, where="$"):
    """Every place where ``actual`` differs from ``expected``: exactly, floats at FLOAT_RTOL."""
    if type(expected) is not type(actual):
        return [f"{where}: {expected!r} -> {actual!r} (type changed)"]
    if isinstance(expected, float):
        close = math.isclose(expected, actual, rel_tol=FLOAT_RTOL, abs_tol=FLOAT_ATOL)
        return (
            []
            if close or (math.isnan(expected) and math.isnan(actual))
            else [f"{where}: {expected!r} -> {actual!r}"]
        )
    if isinstance(expected, dict):
        found = [f"{where}.{key}: removed" for key in sorted(expected.keys() - actual.keys())]
        found += [f"{where}.{key}: added" for key in sorted(actual.keys() - expected.keys())]
        for key in sorted(expected.keys() & actual.keys()):
            found += differences(expected[key], actual[key], f"{where}.{key}")
        return found
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return [f"{where}: length {len(expected)} -> {len(actual)}"]
        return [
            line
            for i, (old, new) in enumerate(zip(expected, actual))
            for line in differences(old, new, f"{where}[{i}]")
        ]
    if isinstance(expected, str) and _without_lines(expected) == _without_lines(actual):
        return []
    return [] if expected == actual else [f"{where}: {expected!r} -> {actual!r}"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_result_is_unchanged(name):
    expected = json.loads(path(name).read_text(encoding="utf-8"))
    changed = differences(expected, stable_result(name))
    if changed:
        shown = "\n".join(changed[:40])
        pytest.fail(f"golden result {name} changed in {len(changed)} places:\n{shown}")


def test_comparison_tolerates_last_digits_and_nothing_more():
    golden = {"verdict": "passed", "hits_p": 887, "weights": [-0.10153136238654353, 0.0]}
    last_digits = {"verdict": "passed", "hits_p": 887, "weights": [-0.10153136238654356, 1e-17]}
    assert differences(golden, last_digits) == []
    assert differences(golden, {**golden, "hits_p": 888}) == ["$.hits_p: 887 -> 888"]
    assert differences(golden, {**golden, "verdict": "violation"}) != []
    moved = {**golden, "weights": [-0.1015314, 0.0]}
    assert differences(golden, moved) == ["$.weights[0]: -0.10153136238654353 -> -0.1015314"]
    assert differences(golden, {**golden, "weights": [-0.10153136238654353]}) == [
        "$.weights: length 2 -> 1"
    ]
    assert differences({"a": 1}, {"a": 1.0}) == ["$.a: 1 -> 1.0 (type changed)"]
    site = {"site": "mechanisms/stability.py:257"}
    assert differences(site, {"site": "mechanisms/stability.py:276"}) == []
    assert differences(site, {"site": "mechanisms/limit_domain.py:257"}) != []
