"""List private names imported across packages, and benchmarks' imports of non-public names.

A private name starts with one underscore. "Across packages": the importing module's package
(``dpaudit.auditor.run`` for ``dpaudit/auditor/run/runner.py``) is not the package the name is
imported from. A benchmark imports no private name and no module inside the auditor's folders
(``dpaudit.auditor`` and its folders' ``__init__`` are the faces). Exit status 1 when any is found.

    python tools/private_imports.py
"""

from __future__ import annotations

import ast
import pathlib
import sys

ROOTS = ("dpaudit", "mechanisms")


def _module_of(path: pathlib.Path) -> tuple[str, bool]:
    parts = list(path.with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _imports(path: pathlib.Path):
    """``(line, imported module, name)`` of every ``from ... import`` of ``path``, resolved."""
    module, is_package = _module_of(path)
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = package
        for _ in range(max(node.level - 1, 0)):
            base = base.rpartition(".")[0]
        source = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
        for alias in node.names:
            yield node.lineno, source or "", alias.name


def _is_private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def _is_package(dotted: str) -> bool:
    return pathlib.Path(*dotted.split("."), "__init__.py").exists()


def _exported(package: str) -> set[str]:
    """The names a package's ``__init__`` lists in ``__all__`` (empty for a module)."""
    path = pathlib.Path(*package.split("."), "__init__.py")
    if not path.exists():
        return set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
    return set()


def _is_module(dotted: str) -> bool:
    return pathlib.Path(*dotted.split(".")).with_suffix(".py").exists()


def _is_internal(dotted: str) -> bool:
    """A module inside the auditor's folders (its faces are ``dpaudit.auditor`` and the folders'
    ``__init__``s that export names: ``greybox``, ``offline``, ``values``)."""
    return dotted.startswith("dpaudit.auditor.") and not _is_package(dotted)


def main() -> int:
    found = []
    for root in ROOTS:
        for path in sorted(pathlib.Path(root).rglob("*.py")):
            module, is_package = _module_of(path)
            package = module if is_package else module.rpartition(".")[0]
            for line, source, name in _imports(path):
                if not source.startswith(ROOTS):
                    continue
                owner = source if _is_package(source) else source.rpartition(".")[0]
                if owner != package and _is_private(f"{source}.{name}"):
                    found.append(f"{path}:{line}: {name} from {source}")
    for path in sorted(pathlib.Path("benchmarks").glob("*.py")):
        for line, source, name in _imports(path):
            if not source.startswith(ROOTS):
                continue
            if _is_private(f"{source}.{name}"):
                found.append(f"{path}:{line}: private {name} from {source}")
            elif (
                _is_internal(f"{source}.{name}")
                and _is_module(f"{source}.{name}")
                and name not in _exported(source)
            ):
                found.append(f"{path}:{line}: the internal module {source}.{name}")
            elif _is_internal(source) and not _is_package(f"{source}.{name}"):
                found.append(f"{path}:{line}: {name} from the internal module {source}")
    print(f"{len(found)} imports past the public line")
    for entry in found:
        print(f"  {entry}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
