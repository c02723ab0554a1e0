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
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", default=["dpaudit", "mechanisms"])
    parser.add_argument("--max-function", type=int, default=60)
    parser.add_argument("--max-module", type=int, default=400)
    args = parser.parse_args(argv)
    functions, modules = [], []
    for root in args.roots:
        for path in sorted(pathlib.Path(root).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > args.max_module and path.as_posix() not in EXEMPT:
                modules.append((path.as_posix(), lines))
            functions += [
                (f"{path.as_posix()}:{n}", k) for n, k in long_functions(path, args.max_function)
            ]
    for title, rows in (("functions", functions), ("modules", modules)):
        print(f"{len(rows)} {title} over the limit")
        for name, lines in sorted(rows, key=lambda r: -r[1]):
            print(f"  {lines:5d}  {name}")
    for path, reason in EXEMPT.items():
        print(f"excepted: {path}: {reason}")
    return 1 if functions or modules else 0


if __name__ == "__main__":
    sys.exit(main())
