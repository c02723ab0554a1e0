"""What identifies a mechanism and its setting on record: spec, neighbour relation, versions.

A built-in mechanism (any frozen dataclass of [`mechanisms`][mechanisms] or [`dpaudit`][dpaudit],
nested ones included: RestrictedDomain's inner mechanism, a session's config and policy) is
written as ``{"class": "module:QualName", "params": {...}}`` and rebuilt from that by
[`rebuild_mechanism`][dpaudit.provenance.rebuild_mechanism]. Only classes of those two packages are
rebuilt, so reading an audit's JSON never imports or runs anything else. Audits
([`dpaudit.auditor.results.evidence`][dpaudit.auditor.results.evidence]) and exhaustive verification
([`dpaudit.exact.verify`][dpaudit.exact.verify]) both record these.
"""

from __future__ import annotations

import dataclasses
import importlib
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from mechanisms import AddRemoveUser, BoundedChange, Substitute

__all__ = [
    "MOVED_MODULES",
    "at_present_paths",
    "mechanism_spec",
    "rebuild_mechanism",
    "relation_from_dict",
    "relation_to_dict",
    "versions",
]

_REBUILDABLE = ("mechanisms", "dpaudit")

#: Modules a spec may name that now live elsewhere: ``{recorded module: present module}``. A spec
#: names its class's module, and result files are read for years (``result_format``'s rule), so a
#: module holding a recordable mechanism keeps its old name here when it moves.
MOVED_MODULES = {
    "dpaudit.auditor.blackbox": "dpaudit.auditor.sources.blackbox",
    "dpaudit.auditor.sessions": "dpaudit.auditor.run.sessions",
    "dpaudit.auditor.subprocess_mechanism": "dpaudit.auditor.sources.subprocess_mechanism",
}


def _present_class(name: str) -> str:
    module, colon, qualname = name.partition(":")
    return f"{MOVED_MODULES.get(module, module)}{colon}{qualname}"


def at_present_paths(value):
    """``value`` (a spec, or any JSON holding specs) with each ``"class"`` at its present module
    ([`MOVED_MODULES`][dpaudit.provenance.MOVED_MODULES])."""
    if isinstance(value, dict):
        return {
            k: _present_class(v) if k == "class" and isinstance(v, str) else at_present_paths(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [at_present_paths(v) for v in value]
    return value


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
    if not dataclasses.is_dataclass(mechanism) or not _rebuildable_module(cls.__module__):
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
    """The mechanism [`mechanism_spec`][dpaudit.provenance.mechanism_spec] recorded (built-in classes only)."""
    if not isinstance(spec, dict) or ":" not in str(spec.get("class", "")):
        raise ValueError(f"not a mechanism spec: {spec!r}")
    module_name, qualname = _present_class(spec["class"]).split(":", 1)
    if not _rebuildable_module(module_name):
        raise ValueError(
            f"only classes of {', '.join(_REBUILDABLE)} are rebuilt, not {module_name}"
        )
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    # A result file may come from anyone and recheck rebuilds from it: only what
    # ``mechanism_spec`` records (a frozen dataclass defined in these packages) is called, never
    # a function a crafted spec names (``dpaudit.cli.output:write_text`` would write a file).
    if not (
        isinstance(obj, type)
        and dataclasses.is_dataclass(obj)
        and _rebuildable_module(obj.__module__)
    ):
        raise ValueError(
            f"not a mechanism spec: {spec['class']!r} is not a dataclass of "
            f"{' or '.join(_REBUILDABLE)} (only recorded mechanisms and their parameters are rebuilt)"
        )
    return obj(**{name: _decode(v) for name, v in spec.get("params", {}).items()})


def _rebuildable_module(name: str) -> bool:
    """``name`` is one of the packages whose classes are rebuilt, or a module inside one."""
    return any(name == package or name.startswith(package + ".") for package in _REBUILDABLE)
