"""List functions over 60 lines and modules over 400 lines (issue 44's size limits).

A function's lines run from its ``def`` (decorators excluded) to its last line, docstring
included; a module's are its physical lines. Generated tables and data are excepted by
``EXEMPT`` below, each with its reason. Exit status 1 when anything else is over.

    python tools/sizes.py [--max-function 60] [--max-module 400] [dpaudit mechanisms]
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys

#: Modules excepted from the module limit, each a generated table or data, with the reason.
EXEMPT: dict[str, str] = {}


def long_functions(path: pathlib.Path, limit: int):
    """``(qualified name, lines)`` of the functions of ``path`` over ``limit`` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1
                    if lines > limit:
                        yield name, lines
                yield from walk(child, name + ".")
            elif isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                yield from walk(child, prefix)  # a def sits in a statement, never an expression

    yield from walk(tree, "")


def over_limits(roots, max_function=60, max_module=400, base=pathlib.Path()):
    """``(functions, modules)`` over the limits under ``roots`` (paths relative to ``base``).

    ``functions``: ``("path:qualified.name", lines)``; ``modules``: ``("path", lines)``, the
    ``EXEMPT`` modules left out.
    """
    functions, modules = [], []
    for root in roots:
        for path in sorted((base / root).rglob("*.py")):
            name = path.relative_to(base).as_posix()
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > max_module and name not in EXEMPT:
                modules.append((name, lines))
            functions += [(f"{name}:{n}", k) for n, k in long_functions(path, max_function)]
    return functions, modules


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", default=["dpaudit", "mechanisms"])
    parser.add_argument("--max-function", type=int, default=60)
    parser.add_argument("--max-module", type=int, default=400)
    args = parser.parse_args(argv)
    functions, modules = over_limits(args.roots, args.max_function, args.max_module)
    for title, rows in (("functions", functions), ("modules", modules)):
        print(f"{len(rows)} {title} over the limit")
        for name, lines in sorted(rows, key=lambda r: -r[1]):
            print(f"  {lines:5d}  {name}")
    for path, reason in EXEMPT.items():
        print(f"excepted: {path}: {reason}")
    return 1 if functions or modules else 0


if __name__ == "__main__":
    sys.exit(main())
