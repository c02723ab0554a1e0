"""Where a draw or an exception came from: the first frame outside numpy and this package.

DESIGN.md, "Black box and grey box": the draw where a divergence happens is the stage to
blame, named by ``file:line`` (relative to the working directory when below it).
"""

from __future__ import annotations

import functools
import os
import traceback

import numpy as np

__all__ = ["is_internal", "raise_site", "short_path"]

#: Frames in these directories are not a call site: numpy's own and this package's.
_INTERNAL_DIRS = (
    os.path.dirname(os.path.abspath(np.__file__)) + os.sep,
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
)
_internal_files: dict[str, bool] = {}


def is_internal(filename: str) -> bool:
    """Whether ``filename`` is numpy's or this package's (cached: called once per draw).

    Parameters
    ----------
    filename : a code object's ``co_filename``.
    """
    internal = _internal_files.get(filename)
    if internal is None:
        internal = os.path.abspath(filename).startswith(_INTERNAL_DIRS)
        _internal_files[filename] = internal
    return internal


@functools.lru_cache(maxsize=1024)
def short_path(filename: str) -> str:
    """``filename`` relative to the working directory when it lies below it, else absolute.

    Parameters
    ----------
    filename : a source file's path.
    """
    path = os.path.abspath(filename)
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def raise_site(error: BaseException) -> str:
    """``file:line`` of the innermost traceback frame of ``error`` outside numpy and this package.

    Parameters
    ----------
    error : an exception caught with its traceback.
    """
    found = ""
    for frame in traceback.extract_tb(error.__traceback__):
        if not is_internal(frame.filename):
            found = f"{short_path(frame.filename)}:{frame.lineno}"
    return found
