"""What a second reviewer needs to re-check an audit: mechanism spec, relation, versions.

A built-in mechanism (any frozen dataclass of :mod:`mechanisms` or :mod:`dpaudit`, nested
ones included: RestrictedDomain's inner mechanism, a session's config and policy) is
written as ``{"class": "module:QualName", "params": {...}}`` and rebuilt from that by
:func:`rebuild_mechanism`. Only classes of those two packages are rebuilt, so reading an
audit's JSON never imports or runs anything else.
"""

from __future__ import annotations

import dataclasses
import importlib
import platform
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from mechanisms import AddRemoveUser, BoundedChange, Substitute

__all__ = [
    "audit_evidence",
    "evidence_record",
    "mechanism_spec",
    "rebuild_mechanism",
    "relation_from_dict",
    "relation_to_dict",
    "rerun_options",
    "versions",
]

_REBUILDABLE = ("mechanisms", "dpaudit")


def versions() -> dict:
    """Versions of dpaudit, numpy, scipy, statsmodels, mpmath and Python."""
    found = {"python": platform.python_version()}
    for name in ("dpaudit", "numpy", "scipy", "statsmodels", "mpmath"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "unknown"
    return found


def relation_to_dict(relation) -> dict:
    if isinstance(relation, BoundedChange):
        return {"kind": "bounded-change", "max_change": relation.max_change}
    if isinstance(relation, Substitute):
        return {"kind": "substitute", "max_items": relation.max_items}
    return {"kind": "add-remove", "max_items": relation.max_items}


def relation_from_dict(data: dict):
    if data.get("kind") == "bounded-change":
        return BoundedChange(int(data["max_change"]))
    if data.get("kind") == "substitute":
        return Substitute(None if data.get("max_items") is None else int(data["max_items"]))
    if data.get("kind") == "add-remove":
        return AddRemoveUser(None if data.get("max_items") is None else int(data["max_items"]))
    raise ValueError(f"not a neighbour relation: {data!r}")


def _encode(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return mechanism_spec(value)
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, (tuple, list)):
        return {"tuple": [_encode(v) for v in value]}
    raise TypeError(f"cannot record {value!r}")


def mechanism_spec(mechanism) -> dict | None:
    """``{"class": ..., "params": ...}`` of a built-in frozen-dataclass mechanism, else None."""
    cls = type(mechanism)
    if not dataclasses.is_dataclass(mechanism) or not cls.__module__.startswith(_REBUILDABLE):
        return None
    try:
        params = {
            f.name: _encode(getattr(mechanism, f.name))
            for f in dataclasses.fields(mechanism)
            if f.init
        }
    except TypeError:
        return None
    if any(
        isinstance(v, dict) and v.get("class") is None and "tuple" not in v for v in params.values()
    ):
        return None
    return {"class": f"{cls.__module__}:{cls.__qualname__}", "params": params}


def _decode(value):
    if isinstance(value, dict) and "class" in value:
        return rebuild_mechanism(value)
    if isinstance(value, dict) and "tuple" in value:
        return tuple(_decode(v) for v in value["tuple"])
    return value


def rebuild_mechanism(spec: dict):
    """The mechanism :func:`mechanism_spec` recorded (built-in classes only)."""
    if not isinstance(spec, dict) or ":" not in str(spec.get("class", "")):
        raise ValueError(f"not a mechanism spec: {spec!r}")
    module_name, qualname = spec["class"].split(":", 1)
    if not module_name.startswith(_REBUILDABLE):
        raise ValueError(
            f"only classes of {', '.join(_REBUILDABLE)} are rebuilt, not {module_name}"
        )
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj(**{name: _decode(v) for name, v in spec.get("params", {}).items()})


def rerun_options(
    plan_options, power_factor, claim, declared, neighbours, width, values, batched, name
) -> dict:
    """The options of :func:`dpaudit.audit` that fix its result, as JSON (``evidence.options``).

    ``plan_options`` are the sampling options (:meth:`.options.AuditOptions.plan_fields`); the rest
    are what the runner takes besides them: the claim audited when it is not the
    mechanism's own (``claim``, with its relation), the relation given by ``neighbours=``,
    and how a plain callable was wrapped (``width``, ``values``, ``batched``, ``name``).
    """
    return dict(
        plan_options,
        power_factor=float(power_factor),
        claim=None if claim is None else [float(declared.epsilon), float(declared.delta)],
        claim_relation=None if claim is None else relation_to_dict(declared.neighbours),
        neighbours=None if neighbours is None else relation_to_dict(neighbours),
        width=None if width is None else int(width),
        values=int(values or 0),
        batched=bool(batched),
        name=name,
    )


def evidence_record(relation, seed, spec, engine: str, extra=None) -> dict:
    """The evidence block of an :class:`AuditResult`: relation, seed, spec, versions, date."""
    evidence = {
        "relation": relation_to_dict(relation),
        "seed": seed,
        "mechanism_spec": spec,
        "versions": versions(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "engine": engine,
    }
    evidence.update(extra or {})
    return evidence


def audit_evidence(mechanism, relation, seed, executor, extra=None) -> dict:
    """The evidence block of a live audit of ``mechanism`` drawn by ``executor``."""
    engine = getattr(executor, "description", type(executor).__name__)
    return evidence_record(relation, seed, mechanism_spec(mechanism), engine, extra)
