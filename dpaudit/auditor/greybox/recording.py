"""A ``numpy.random.Generator`` that records every method call made on it.

DESIGN.md, "Black box and grey box"; issue 43, item 1. The grey box hands a mechanism a
[`RecordingGenerator`][dpaudit.auditor.greybox.recording.RecordingGenerator] in place of its
``rng``: the draws are numpy's own (the same bit generator, the same algorithms, so the same values
and the same law), and each method call leaves one [`Draw`][dpaudit.auditor.greybox.recording.Draw]
in the generator's trace.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .sites import is_internal, short_path

__all__ = ["NOT_RECORDED", "RECORDED_METHODS", "Draw", "RecordingGenerator"]

#: Every drawing method of ``numpy.random.Generator`` (numpy 2.x), each recorded.
#: Mechanisms, the corpus, the catalog and tests/user_mechanisms.py use laplace, random,
#: geometric, gumbel, integers, choice, normal and exponential (measured 2026-12); the
#: rest are recorded too, so that no draw of user code escapes the trace.
RECORDED_METHODS: tuple[str, ...] = (
    "beta",
    "binomial",
    "bytes",
    "chisquare",
    "choice",
    "dirichlet",
    "exponential",
    "f",
    "gamma",
    "geometric",
    "gumbel",
    "hypergeometric",
    "integers",
    "laplace",
    "logistic",
    "lognormal",
    "logseries",
    "multinomial",
    "multivariate_hypergeometric",
    "multivariate_normal",
    "negative_binomial",
    "noncentral_chisquare",
    "noncentral_f",
    "normal",
    "pareto",
    "permutation",
    "permuted",
    "poisson",
    "power",
    "random",
    "rayleigh",
    "shuffle",
    "standard_cauchy",
    "standard_exponential",
    "standard_gamma",
    "standard_normal",
    "standard_t",
    "triangular",
    "uniform",
    "vonmises",
    "wald",
    "weibull",
    "zipf",
)

#: Public members of ``Generator`` that are not draws: the bit generator itself (its raw
#: words are shared state, not method calls) and ``spawn``, recorded as a draw of its own
#: with children that record into the same trace.
NOT_RECORDED: tuple[str, ...] = ("bit_generator", "spawn")

#: Method arguments kept by reference: an output buffer, not a parameter of the law.
_BUFFERS = frozenset({"out"})


@functools.cache
def _signature(method: str) -> inspect.Signature | None:
    """The method's signature without ``self`` (None where numpy does not expose one)."""
    try:
        signature = inspect.signature(getattr(np.random.Generator, method))
    except (TypeError, ValueError):
        return None
    return signature.replace(parameters=list(signature.parameters.values())[1:])


def _snapshot(value: Any) -> Any:
    """A read-only copy of an array argument (the caller may change it later); else ``value``."""
    if isinstance(value, (float, int, str)):
        return value
    if isinstance(value, np.ndarray):
        copy = value.copy()
        copy.flags.writeable = False
        return copy
    if isinstance(value, list):
        return list(value)
    return value


@dataclass(frozen=True, eq=False)
class Draw:
    """One method call on a ``RecordingGenerator``: what was asked, where, what came out.

    Issue 43, item 1. Compared by identity (fields hold arrays); compare traces with
    [`traces.first_difference`][dpaudit.auditor.greybox.traces.first_difference].

    Parameters
    ----------
    index : position in the trace (0 is the first call on the generator or its children).
    method : the ``Generator`` method called ("laplace", "choice", ...).
    args : the positional arguments as given (arrays copied at call time, read-only).
    kwargs : the keyword arguments as given, likewise (an ``out=`` buffer is kept by
        reference: it is where the values go, not a parameter of their law).
    shape : the shape of the output (of the shuffled array for ``shuffle``; ``(n,)`` for
        ``bytes(n)`` and ``spawn(n)``).
    site : ``file:line`` of the first frame outside numpy and this package: the
        mechanism's line that made the call.
    function : the name of the function at ``site``.
    values : a read-only copy of the output, when the generator records values; else None.
    """

    index: int
    method: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    shape: tuple[int, ...]
    site: str
    function: str
    values: Any = None

    def parameters(self) -> dict[str, Any]:
        """Every parameter by name, the defaults filled in (``{"loc": 0.0, "scale": 2.0, ...}``).

        Where numpy exposes no signature for the method, positional arguments are named
        ``arg0``, ``arg1``, ... and keywords keep their names.
        """
        signature = _signature(self.method)
        if signature is None:
            named = {f"arg{i}": value for i, value in enumerate(self.args)}
            named.update(self.kwargs)
            return named
        bound = signature.bind(*self.args, **self.kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def __str__(self) -> str:
        return f"#{self.index} {self.method} {self.shape} at {self.site} ({self.function})"


class RecordingGenerator(np.random.Generator):
    """A ``numpy.random.Generator`` on ``bit_generator`` that records each method call.

    DESIGN.md, "Black box and grey box"; issue 43, item 1. It is a ``Generator`` (``isinstance``
    holds, ``check_rng`` accepts it, ``bit_generator`` is the one given), and every draw is numpy's
    own, so the values, and their law, are exactly those of
    ``numpy.random.Generator(bit_generator)``. Each call of a method in ``RECORDED_METHODS`` appends
    one [`Draw`][dpaudit.auditor.greybox.recording.Draw] to
    [`draws`][dpaudit.auditor.greybox.recording.RecordingGenerator.draws]: one record per call, not
    per value; calls numpy makes internally (``choice`` calling ``integers``) are part of the outer
    call and not recorded again. A call that raises leaves no record.

    Not recorded: raw bit-generator words (``rng.bit_generator.random_raw``, as
    [`mechanisms.discrete_laplace`][mechanisms.discrete_laplace] reads them) are not method calls.
    They still share the bit generator's state, so they shift every later draw, and a replay
    compares ``bit_generator.state`` to see them. Children from
    [`spawn`][dpaudit.auditor.greybox.recording.RecordingGenerator.spawn] record into the same
    trace; a generator built by the mechanism itself, or a copy or unpickled copy of this one (a
    plain ``Generator``), does not.

    Parameters
    ----------
    bit_generator : the ``numpy.random.BitGenerator`` to draw from (``PCG64(seed)``
        gives the stream of ``numpy.random.default_rng(seed)``).
    values : also keep a copy of every output in its
        [`Draw`][dpaudit.auditor.greybox.recording.Draw] (off by default: a trace of shapes and
        parameters costs nothing per value drawn).
    """

    def __init__(self, bit_generator: np.random.BitGenerator, *, values: bool = False) -> None:
        if not isinstance(bit_generator, np.random.BitGenerator):
            raise TypeError(
                "bit_generator must be a numpy.random.BitGenerator such as "
                f"numpy.random.PCG64(seed), got {type(bit_generator).__name__}"
            )
        if not isinstance(values, bool):
            raise TypeError(f"values must be True or False, got {values!r}")
        super().__init__(bit_generator)
        self._keep_values = values
        # (method, args, kwargs, shape, code, line, values); Draws are built on reading.
        self._log: list[tuple] = []
        self._built: list[Draw] = []
        self._depth = 0

    @property
    def records_values(self) -> bool:
        """Whether each ``Draw`` keeps a copy of its output."""
        return self._keep_values

    @property
    def draws(self) -> tuple[Draw, ...]:
        """Every recorded call so far, in order (children of ``spawn`` included)."""
        log, built = self._log, self._built
        for index in range(len(built), len(log)):
            method, args, kwargs, shape, code, line, values = log[index]
            built.append(
                Draw(
                    index,
                    method,
                    args,
                    MappingProxyType(kwargs),
                    shape,
                    f"{short_path(code.co_filename)}:{line}",
                    code.co_name,
                    values,
                )
            )
        return tuple(built)

    @property
    def draw_count(self) -> int:
        """How many calls are recorded (cheaper than ``len(draws)``).

        Not ``__len__``: an empty generator must stay truthy (``rng or default_rng()``).
        """
        return len(self._log)

    def spawn(self, n_children: int) -> list[np.random.Generator]:
        """``n_children`` independent generators (numpy's ``spawn``) recording into this trace."""
        children: list[np.random.Generator] = []
        for bits in self.bit_generator.spawn(n_children):
            child = RecordingGenerator(bits, values=self._keep_values)
            child._log = self._log
            child._built = self._built
            children.append(child)
        frame = sys._getframe(1)
        while frame.f_back is not None and is_internal(frame.f_code.co_filename):
            frame = frame.f_back
        shape = (len(children),)
        self._log.append(("spawn", (n_children,), {}, shape, frame.f_code, frame.f_lineno, None))
        return children


def _recorder(method: str) -> Callable[..., Any]:
    """The recording override of ``Generator.<method>``."""
    draw = getattr(np.random.Generator, method)

    def recorded(self: RecordingGenerator, *args: Any, **kwargs: Any) -> Any:
        if self._depth:  # numpy's own call from inside a recorded one
            return draw(self, *args, **kwargs)
        given = tuple(map(_snapshot, args)) if args else ()
        named = (
            {k: (v if k in _BUFFERS else _snapshot(v)) for k, v in kwargs.items()} if kwargs else {}
        )
        self._depth = 1
        try:
            out = draw(self, *args, **kwargs)
        finally:
            self._depth = 0
        if method == "shuffle":
            result = args[0] if args else kwargs["x"]
            shape: tuple[int, ...] = np.shape(result)
        elif method == "bytes":
            result, shape = out, (len(out),)
        else:
            result = out
            if isinstance(out, (np.ndarray, np.generic)):
                shape = out.shape
            else:
                shape = () if isinstance(out, (float, int)) else np.shape(out)
        kept = None
        if self._keep_values:
            kept = result if method == "bytes" else np.array(result)
            if method != "bytes":
                kept.flags.writeable = False
        # The caller's frame: the first one outside numpy and this package.
        frame = sys._getframe(1)
        while frame.f_back is not None and is_internal(frame.f_code.co_filename):
            frame = frame.f_back
        self._log.append((method, given, named, shape, frame.f_code, frame.f_lineno, kept))
        return out

    recorded.__name__ = method
    recorded.__qualname__ = f"RecordingGenerator.{method}"
    recorded.__doc__ = f"``Generator.{method}``, recorded as one ``Draw``."
    return recorded


for _method in RECORDED_METHODS:
    setattr(RecordingGenerator, _method, _recorder(_method))
del _method
