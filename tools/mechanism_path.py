"""List the files that following ``mechanism`` from ``audit()`` enters more than N times (issue 44).

Runs one audit under ``sys.setprofile`` (and ``threading.setprofile``) and records, for every
file of the repository, the distinct *entry edges* on which the mechanism object is an
argument: ``caller file:function -> callee function``, the callee in that file and the caller
in another. The mechanism counts wherever it is bound, positionally, by keyword, or inside
``*args`` / ``**kwargs``; the caller is the nearest frame of the repository (frames of the
standard library and site packages, such as ``functools``' dispatch wrapper, are stepped
over), so a call between two functions of one file is no entry. Each distinct edge counts
once, however often it runs. Not counted: the file defining the mechanism's own class (the
mechanism being called, not followed), calls of the mechanism's own methods wherever they are
defined (its base classes), and the mechanism held inside another object (only the object
itself is followed). Exit status 1 when any file is entered more than ``--max`` times.

    python tools/mechanism_path.py [--max 2] [--samples 2000000] [--seed 0] [--verbose]
        [--k 3] [--kbar 10] [--epsilon 1] [--delta 1e-6]
"""

from __future__ import annotations

import argparse
import collections
import inspect
import pathlib
import sys
import threading
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _bound_arguments(code, local_vars: dict[str, Any]) -> list[Any]:
    """The values bound to the parameters of ``code``, ``*args`` and ``**kwargs`` unpacked."""
    count = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:count])
    values = [local_vars.get(name) for name in names]
    if code.co_flags & inspect.CO_VARARGS:
        values += list(local_vars.get(code.co_varnames[count], ()))
        count += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        values += list(local_vars.get(code.co_varnames[count], {}).values())
    return values


def _own_code(mechanism) -> set:
    """The code objects of the methods (and properties) of the mechanism's classes."""
    codes = set()
    for cls in type(mechanism).__mro__:
        for member in vars(cls).values():
            for function in (member, getattr(member, "__func__", None)) + tuple(
                getattr(member, part, None) for part in ("fget", "fset", "fdel")
            ):
                code = getattr(function, "__code__", None)
                if code is not None:
                    codes.add(code)
    return codes


def entry_edges(mechanism, run, root: pathlib.Path = ROOT) -> dict[str, set]:
    """Files of ``root`` entered while ``run()`` follows ``mechanism``, each with its edges.

    mechanism: the object followed (compared by identity). run: a callable of no arguments,
    the audit. root: the repository; files outside it, and its ``tests/``, are not counted.
    Returns ``{file: {(caller file, caller function, callee function), ...}}``, the files
    relative to ``root``, the mechanism's own class file left out.
    """
    prefix, tests = f"{root}/", f"{root}/tests/"
    own_file = inspect.getsourcefile(type(mechanism))
    own_code = _own_code(mechanism)
    edges: dict[str, set] = collections.defaultdict(set)

    def in_repo(filename: str) -> bool:
        return filename.startswith(prefix)

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        filename = code.co_filename
        if not in_repo(filename) or filename.startswith(tests) or filename == own_file:
            return
        if code in own_code or not any(
            value is mechanism for value in _bound_arguments(code, frame.f_locals)
        ):
            return
        caller = frame.f_back
        while caller is not None and not in_repo(caller.f_code.co_filename):
            caller = caller.f_back
        if caller is None or caller.f_code.co_filename == filename:
            return
        edge = (
            pathlib.Path(caller.f_code.co_filename).relative_to(root).as_posix(),
            caller.f_code.co_qualname,
            code.co_qualname,
        )
        edges[pathlib.Path(filename).relative_to(root).as_posix()].add(edge)

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return dict(edges)


def audit_edges(k=3, kbar=10, epsilon=1.0, delta=1e-6, samples=2_000_000, seed=0):
    """``entry_edges`` of ``audit(LimitDomain(k, kbar, epsilon, delta), samples, seed)``."""
    import dpaudit  # imported here: the tool runs from a checkout, not an installed package
    import mechanisms

    if not pathlib.Path(dpaudit.__file__).resolve().is_relative_to(ROOT):
        raise SystemExit(
            f"dpaudit is imported from {dpaudit.__file__}, not from {ROOT}: "
            f"run with PYTHONPATH={ROOT}"
        )
    mechanism = mechanisms.LimitDomain(k=k, kbar=kbar, epsilon=epsilon, delta=delta)
    return entry_edges(mechanism, lambda: dpaudit.audit(mechanism, samples=samples, seed=seed))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=2, help="entries allowed per file")
    parser.add_argument("--samples", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--kbar", type=int, default=10)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--verbose", action="store_true", help="list every file and edge")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    edges = audit_edges(args.k, args.kbar, args.epsilon, args.delta, args.samples, args.seed)
    over = {name: found for name, found in edges.items() if len(found) > args.max}
    shown = edges if args.verbose else over
    print(f"{len(over)} files entered more than {args.max} times")
    for name, found in sorted(shown.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {len(found):3d}  {name}")
        for caller_file, caller, callee in sorted(found):
            print(f"         {caller_file}:{caller} -> {callee}")
    print("not counted: the mechanism's own class file and calls of its own methods")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
