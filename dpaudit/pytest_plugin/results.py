"""Where and how the plugin writes JSON: each audit's result file, and the cache's entries."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

__all__ = ["result_path", "write_json"]

#: Characters a test id may hold that a file name should not.
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]]+")


def result_path(directory: Path, nodeid: str, index: int) -> Path:
    """The result file of a test's ``index``-th audit (from 0): its id made a file name.

    Parameters
    ----------
    directory : ``--dpaudit-results``.
    nodeid : the test's id, ``tests/test_m.py::test_f[case]``.
    index : which of the test's audits (the second and later get ``-2``, ``-3`` ...).
    """
    stem = _UNSAFE.sub("_", nodeid.replace("::", "__")).strip("_") or "audit"
    return directory / f"{stem}{'' if index == 0 else f'-{index + 1}'}.json"


def write_json(path: Path, data: dict) -> None:
    """``data`` as indented JSON at ``path``, as ``dpaudit audit --json`` writes it, replaced in one
    step (parallel workers never read half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
