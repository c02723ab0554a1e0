"""The user's own mechanism from command-line options: ``package.module:attr`` or ``--command``.

The CLI builds it ([`dpaudit.cli.arguments`][dpaudit.cli.arguments]) and a recheck builds it again
from what the audit recorded (``dpaudit.user_source``). ``args`` is the CLI's namespace
(``mechanism``, ``child_command``, ``claim``, ``width``, ``values``, ``relation``, ``timeout``); a
bad option is a [`UsageError`][dpaudit.errors.UsageError] that names it, a failing factory a
[`CouldNotRun`][dpaudit.errors.CouldNotRun] that says where it raised.
"""

from __future__ import annotations

import math
import os
import sys

from dpaudit.errors import UsageError, could_not_run

__all__ = ["command_mechanism", "module_mechanism", "parse_claim", "parse_relation"]


def parse_claim(text: str | None) -> tuple[float, float] | None:
    """``EPS,DELTA`` -> ``(ε, δ)`` with ε >= 0 finite and 0 <= δ < 1 (None when not given)."""
    if text is None:
        return None
    try:
        parts = [float(v) for v in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) != 2:
        raise UsageError(f"--claim wants EPS,DELTA (two numbers), got {text!r}")
    epsilon, delta = parts
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise UsageError(f"--claim: epsilon must be finite and >= 0, got {text!r}")
    if not 0 <= delta < 1:
        raise UsageError(f"--claim: delta must lie in [0, 1), got {text!r}")
    return epsilon, delta


def parse_relation(text: str | None):
    """``add-remove[:Δ]``, ``bounded-change[:M]``, ``substitute[:Δ]`` -> a relation (None: the claim's)."""
    if text is None:
        return None
    from mechanisms import AddRemoveUser, BoundedChange, Substitute

    name, _, value = text.partition(":")
    try:
        if name == "add-remove":
            return AddRemoveUser(int(value) if value else None)
        if name == "bounded-change":
            return BoundedChange(int(value) if value else 1)
        if name == "substitute":
            return Substitute(int(value) if value else 1)
    except ValueError:
        pass
    raise UsageError(
        f"--relation: cannot read {text!r}; use add-remove, add-remove:DELTA, "
        "bounded-change:M or substitute:DELTA with positive integers"
    )


def command_mechanism(args):
    """``--command CMD``: a child process speaking JSON lines."""
    if args.mechanism is not None:
        raise UsageError("give a mechanism name or --command, not both")
    claim = parse_claim(args.claim)
    if claim is None or args.width is None:
        raise UsageError("--command needs --claim EPS,DELTA and --width N")
    if not args.child_command.strip():
        raise UsageError("--command: empty command")
    from dpaudit.auditor.sources.blackbox import make_claim
    from dpaudit.auditor.sources.subprocess_mechanism import SubprocessMechanism
    from mechanisms import AddRemoveUser

    relation = parse_relation(args.relation) or AddRemoveUser()
    try:
        return SubprocessMechanism(
            args.child_command,
            make_claim((*claim, relation)),
            args.width,
            args.timeout,
            args.values or 0,
        )
    except ValueError as error:
        raise UsageError(str(error)) from None


def _is_opendp_measurement(obj) -> bool:
    """An OpenDP ``Measurement``, told by its type's name (OpenDP is imported only if it is one)."""
    kind = type(obj)
    return kind.__name__ == "Measurement" and kind.__module__ == "opendp.mod"


def _measurement_mechanism(measurement, args):
    """An OpenDP measurement read as a mechanism, its claim read under ``--relation``."""
    # OpenDP is an optional dependency: imported only once the user names a measurement.
    from dpaudit.integrations.opendp import measurement_mechanism

    try:
        return measurement_mechanism(measurement, neighbours=parse_relation(args.relation))
    except ValueError as error:
        raise UsageError(f"{args.mechanism}: {error}") from None


def module_mechanism(args):
    """``package.module:attr``: a mechanism, an OpenDP measurement, a factory of either, or a
    per-call/batched function."""
    obj = _attribute(args.mechanism)
    claim = parse_claim(args.claim)
    if hasattr(obj, "sample") and hasattr(obj, "claim"):
        return obj
    if _is_opendp_measurement(obj):
        return _measurement_mechanism(obj, args)
    if not callable(obj):
        raise UsageError(f"{args.mechanism} is neither a mechanism nor a function")
    parameters = _required_parameters(obj)
    if not parameters:  # a factory (or a class with defaults): build the mechanism
        try:
            built = obj()
        except Exception as error:  # the user's factory failed: exit 4, with where
            raise could_not_run(error, f"{args.mechanism}()") from None
        if hasattr(built, "sample") and hasattr(built, "claim"):
            return built
        if _is_opendp_measurement(built):
            return _measurement_mechanism(built, args)
        raise UsageError(f"{args.mechanism}() returned {type(built).__name__}, not a mechanism")
    if len(parameters) not in (2, 3):
        raise UsageError(
            f"{args.mechanism} takes {len(parameters)} arguments: a per-call function "
            "takes (counts, rng), a batched one (counts, size, rng)"
        )
    if claim is None or args.width is None:
        raise UsageError(f"{args.mechanism} is a function: give --claim EPS,DELTA and --width N")
    from dpaudit.auditor.sources.blackbox import as_auditable
    from mechanisms import AddRemoveUser

    relation = parse_relation(args.relation) or AddRemoveUser()
    try:
        mech = as_auditable(
            obj,
            (*claim, relation),
            args.width,
            args.mechanism,
            batched=len(parameters) == 3,
            values=args.values or 0,
        ).mechanism
    except ValueError as error:
        raise UsageError(str(error)) from None
    return mech


def _attribute(spec: str):
    """The object ``package.module:attr`` names, imported as ``python -m`` would."""
    import importlib

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UsageError(f"expected package.module:attr, got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the user's own modules import
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"cannot import {module_name!r}: {error}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _required_parameters(obj) -> list:
    """The positional parameters of ``obj`` without a default (none when it has no signature)."""
    import inspect

    try:
        parameters = [
            p
            for p in inspect.signature(obj).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        parameters = []
    return parameters
