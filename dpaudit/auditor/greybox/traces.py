"""Compare two traces of draws: the first call at which they differ, and how.

Issue 43, item 2(a): a different sequence of methods, of output shapes, of the parameters that fix a
draw's law, or of call sites (the same draw made from another line is another branch). What fixes
the law is [`law_parameters`][dpaudit.auditor.greybox.traces.law_parameters]: the output shape
stands for ``size`` (and ``out``); ``choice`` draws an index into its population, so ``a`` counts by
its length; ``shuffle``, ``permutation`` and ``permuted`` draw a permutation, so ``x`` counts by its
shape. The contents of ``a`` and ``x`` are post-processing of that draw, not its law.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .recording import Draw

__all__ = ["TraceDifference", "first_difference", "law_parameters", "same_parameter"]

#: Arguments that are not parameters of the law: the output shape stands for them.
_SHAPE_ONLY = frozenset({"size", "out"})
#: Methods that permute ``x``: only its shape matters to the law.
_PERMUTATIONS = frozenset({"shuffle", "permutation", "permuted"})


def law_parameters(draw: Draw) -> dict[str, Any]:
    """The parameters that fix ``draw``'s law besides its shape, by name, defaults filled.

    Issue 43, item 2(a). ``size`` and ``out`` are dropped (``Draw.shape`` stands for
    them), ``dtype`` is a ``numpy.dtype``, ``choice``'s ``a`` is its population size and
    the ``x`` of a permutation is its shape (or the integer given).

    Parameters
    ----------
    draw : one recorded call.
    """
    named = draw.parameters()
    law = {k: v for k, v in named.items() if k not in _SHAPE_ONLY}
    if "dtype" in law:
        law["dtype"] = np.dtype(law["dtype"])
    if draw.method == "choice" and "a" in law:
        law["a"] = _population(law["a"], law.get("axis", 0))
    if draw.method in _PERMUTATIONS and "x" in law:
        x = law["x"]
        law["x"] = int(x) if np.ndim(x) == 0 and _is_integer(x) else np.shape(x)
    return law


def _is_integer(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _population(a: Any, axis: Any) -> int:
    if np.ndim(a) == 0 and _is_integer(a if not isinstance(a, np.ndarray) else a.item()):
        return int(a)
    shape = np.shape(a)
    return int(shape[int(axis)]) if shape else 0


def same_parameter(value: Any, value2: Any) -> bool:
    """Whether two parameter values give the same law (arrays compared after broadcasting).

    NaN equals NaN here: a NaN parameter on both sides is the same (degenerate) law.

    Parameters
    ----------
    value, value2 : one parameter on the two sides.
    """
    if value is value2:
        return True
    if isinstance(value, np.dtype) or isinstance(value2, np.dtype):
        return bool(value == value2)
    try:
        x, y = np.asarray(value), np.asarray(value2)
    except (TypeError, ValueError):
        return bool(value == value2)
    if x.dtype == object or y.dtype == object:
        try:
            return bool(np.all(x == y)) and x.shape == y.shape
        except (TypeError, ValueError):
            return False
    try:
        x, y = np.broadcast_arrays(x, y)
    except ValueError:
        return False
    numeric = x.dtype.kind in "fc" and y.dtype.kind in "fc"
    try:
        return bool(np.array_equal(x, y, equal_nan=numeric))
    except TypeError:  # incomparable kinds (a string against a number)
        return False


@dataclass(frozen=True)
class TraceDifference:
    """Where two traces first differ: the index, the kind of difference and the call site.

    Issue 43, item 2(a).

    Parameters
    ----------
    index : position of the first differing call in both traces.
    kind : "method", "shape", "parameter", "site" (the same draw from another line: a
        branch) or "missing" (one trace ended earlier).
    detail : what differs, in words (names the parameter and both values).
    site : ``file:line`` of the first trace's call there (the second's if the first ended).
    draw : the first trace's call at ``index`` (None if it ended).
    draw2 : the second trace's call at ``index`` (None if it ended).
    """

    index: int
    kind: str
    detail: str
    site: str
    draw: Draw | None
    draw2: Draw | None


def _brief(value: Any) -> str:
    """A short rendering of a parameter: arrays abbreviated, numpy scalars as Python's."""
    if isinstance(value, (np.ndarray, list)):
        return np.array2string(np.asarray(value), threshold=6, edgeitems=2)
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def _missing(
    index: int, trace: Sequence[Draw], trace2: Sequence[Draw], labels: tuple[str, str]
) -> TraceDifference:
    """The difference where one trace has ended at ``index`` and the other goes on."""
    first, second = labels
    short, long_, longer = (
        (first, second, trace2[index]) if index >= len(trace) else (second, first, trace[index])
    )
    return TraceDifference(
        index,
        "missing",
        f"the {short} run made {index} draws; the {long_} run goes on with "
        f"{longer.method} {longer.shape} at {longer.site}",
        longer.site,
        trace[index] if index < len(trace) else None,
        trace2[index] if index < len(trace2) else None,
    )


def _parameter_difference(
    draw: Draw, draw2: Draw, ignored: Collection[str], labels: tuple[str, str]
) -> str | None:
    """The first law parameter (by name) that differs between two calls, in words; None if none."""
    first, second = labels
    law, law2 = law_parameters(draw), law_parameters(draw2)
    for name in sorted(set(law) | set(law2)):
        if name in ignored:
            continue
        if name not in law or name not in law2 or not same_parameter(law[name], law2[name]):
            return (
                f"{draw.method} parameter {name} is {_brief(law.get(name))} on {first}, "
                f"{_brief(law2.get(name))} on {second}"
            )
    return None


def first_difference(
    trace: Sequence[Draw],
    trace2: Sequence[Draw],
    *,
    ignore: Mapping[str, Collection[str]] | None = None,
    labels: tuple[str, str] = ("first", "second"),
) -> TraceDifference | None:
    """The first call where ``trace`` and ``trace2`` differ in method, shape or law; None if none.

    Issue 43, item 2(a).

    Parameters
    ----------
    trace, trace2 : the two sequences of draws, in call order.
    ignore : ``{method: parameter names}`` not compared here (a coupled replay prices
        location shifts instead of calling them divergent).
    labels : how ``detail`` names the two traces ("counts", "counts2").
    """
    skip = ignore or {}
    first, second = labels
    for index in range(max(len(trace), len(trace2))):
        if index >= len(trace) or index >= len(trace2):
            return _missing(index, trace, trace2, labels)
        draw, draw2 = trace[index], trace2[index]
        if draw.method != draw2.method:
            detail = (
                f"{first} calls {draw.method} at {draw.site}, "
                f"{second} calls {draw2.method} at {draw2.site}"
            )
            return TraceDifference(index, "method", detail, draw.site, draw, draw2)
        if tuple(draw.shape) != tuple(draw2.shape):
            detail = f"{draw.method} draws shape {draw.shape} on {first}, {draw2.shape} on {second}"
            return TraceDifference(index, "shape", detail, draw.site, draw, draw2)
        moved = _parameter_difference(draw, draw2, skip.get(draw.method, ()), labels)
        if moved is not None:
            return TraceDifference(index, "parameter", moved, draw.site, draw, draw2)
        if draw.site != draw2.site:
            detail = (
                f"{draw.method} is called at {draw.site} on {first}, at {draw2.site} on {second}"
            )
            return TraceDifference(index, "site", detail, draw.site, draw, draw2)
    return None
