"""What identifies a mechanism's code and setting, for the plugin's cache of verdicts.

The code is the source of the mechanism's class and its bases (or of its function), and the
whole source file of every module they live in; the setting is its parameters (a dataclass's
fields, an object's attributes, a function's defaults and closure). Code that the mechanism
calls in other modules is not read: after changing such a helper, re-audit with
``--dpaudit-no-cache`` or ``pytest --cache-clear``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import re
import sys
from pathlib import Path

import numpy as np

__all__ = ["canonical", "code_digest"]

#: A memory address in a repr changes from run to run and says nothing about the setting.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _parts(mechanism, seen: set[int] | None = None) -> list:
    """The classes and functions whose code makes ``mechanism`` what it is, its own first."""
    seen = set() if seen is None else seen
    if id(mechanism) in seen:
        return []
    seen.add(id(mechanism))
    if isinstance(mechanism, functools.partial):
        keywords = list(mechanism.keywords.values())
        return [*_parts(mechanism.func, seen), *_values_code([*mechanism.args, *keywords], seen)]
    if inspect.ismethod(mechanism):
        return [mechanism.__func__, *_parts(mechanism.__self__, seen)]
    if inspect.isfunction(mechanism):
        cells = [c.cell_contents for c in mechanism.__closure__ or ()]
        defaults = [*(mechanism.__defaults__ or ()), *(mechanism.__kwdefaults__ or {}).values()]
        return [mechanism, *_values_code([*cells, *defaults], seen)]
    classes = [c for c in type(mechanism).__mro__ if _has_source(c)]
    if dataclasses.is_dataclass(mechanism):
        fields = [getattr(mechanism, f.name) for f in dataclasses.fields(mechanism)]
        return [*classes, *_values_code(fields, seen)]
    return classes


def _values_code(values, seen: set[int]) -> list:
    """The code of the mechanisms and functions among ``values`` (a wrapped mechanism, ...)."""
    found = []
    for value in values:
        if isinstance(value, type):
            continue
        if callable(value) or dataclasses.is_dataclass(value):
            found += _parts(value, seen)
    return found


def _has_source(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] not in sys.stdlib_module_names and module != "builtins"


def _source(obj) -> tuple[str, str | None]:
    """The source of a class or function and the file it is in (OSError, TypeError if unknown)."""
    try:
        return inspect.getsource(obj), inspect.getsourcefile(obj)
    except (OSError, TypeError):
        if not isinstance(obj, type):
            raise
    # A class re-exported under another ``__module__`` (the catalog's): its methods know its file.
    methods = []
    for value in vars(obj).values():
        if isinstance(value, property):
            methods += [value.fget, value.fset, value.fdel]
        else:
            methods.append(getattr(value, "__func__", value))  # class and static methods
    sources = []
    for function in filter(inspect.isfunction, methods):
        try:
            sources.append((inspect.getsource(function), function.__code__.co_filename))
        except (OSError, TypeError):
            continue  # a method the dataclass decorator wrote
    if not sources:
        raise OSError(f"no source for {obj!r}")
    return "".join(source for source, _ in sources), sources[0][1]


def code_digest(mechanism) -> str | None:
    """SHA-256 of the source of ``mechanism``'s class (bases included) or function, and of the
    files of the modules they live in; None when the source cannot be read (then nothing is
    cached).

    Parameters
    ----------
    mechanism : anything [`dpaudit.audit`][dpaudit.auditor.audit] accepts.
    """
    digest = hashlib.sha256()
    files: set[str] = set()
    parts = _parts(mechanism)
    if not parts:
        return None
    for obj in parts:
        try:
            source, path = _source(obj)
        except (OSError, TypeError):
            if obj is parts[0]:
                return None  # the mechanism's own code: no digest, no cache
            continue  # a compiled base or helper: its parameters are still in the setting
        digest.update(f"{obj.__module__}:{obj.__qualname__}\n{source}".encode())
        if path is not None and path not in files and Path(path).is_file():
            files.add(path)
            digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def _encode(value):
    """A JSON-able stand-in for ``value`` (json.dumps' ``default``)."""
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(map(repr, value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"class": type(value).__qualname__, "fields": fields}
    if isinstance(value, functools.partial):
        return {"partial": value.func, "args": value.args, "keywords": value.keywords}
    if inspect.ismethod(value):
        return {"method": value.__func__.__qualname__, "of": value.__self__}
    if inspect.ismodule(value):
        return {"module": value.__name__}
    if inspect.isfunction(value):
        cells = [c.cell_contents for c in value.__closure__ or ()]
        return {
            "function": f"{value.__module__}:{value.__qualname__}",
            "defaults": value.__defaults__,
            "kwdefaults": value.__kwdefaults__,
            "closure": cells,
        }
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {"class": type(value).__qualname__, "attributes": vars(value)}
    return _ADDRESS.sub("", repr(value))


def canonical(value) -> str | None:
    """``value`` as canonical JSON (sorted keys, arrays as lists, addresses dropped); None when
    it cannot be written (a reference cycle).

    Parameters
    ----------
    value : a mechanism, or the options of an audit.
    """
    try:
        return json.dumps(value, default=_encode, sort_keys=True, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return None
