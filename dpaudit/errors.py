"""The two errors of user input and user code, shared by the CLI and the code below it.

[`UsageError`][dpaudit.errors.UsageError] is bad input refused before any work (the CLI's exit
status 2); [`CouldNotRun`][dpaudit.errors.CouldNotRun] is work that started and could not finish,
such as the user's own mechanism raising (exit status 4; [`dpaudit.cli.errors`][dpaudit.cli.errors]
has the table). Only the standard library is imported here (the CLI imports this before anything
heavy).
"""

from __future__ import annotations

import os
import sysconfig
import traceback

__all__ = ["CouldNotRun", "UsageError", "could_not_run", "user_frame"]


class UsageError(Exception):
    """A user error the CLI reports on stderr with exit status 2 (refused before any work)."""

    #: The command whose parser refused the arguments (set by the CLI's parser), if any.
    prog: str | None = None


class CouldNotRun(Exception):
    """The work started but could not finish (exit status 4); the message is one line."""


#: Where the tool itself and the libraries it uses live: frames there are not "user code".
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_LIBRARY_DIRS = tuple(
    os.path.abspath(p)
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    if p
)


def _is_user_file(filename: str) -> bool:
    path = os.path.abspath(filename)
    if filename.startswith("<"):
        return False
    return not path.startswith(_PACKAGE_DIR + os.sep) and not path.startswith(_LIBRARY_DIRS)


def user_frame(error: BaseException) -> str | None:
    """``file:line`` of the innermost traceback frame outside dpaudit, the stdlib and site-packages.

    That is where a mechanism's (or a user function's) own exception came from; an error of
    the tool's own code has no such frame and gives None. An exception re-raised from a worker
    process carries its remote traceback as text in ``__cause__``; it is read the same way.
    """
    found = None
    for frame in traceback.extract_tb(error.__traceback__):
        if _is_user_file(frame.filename):
            found = f"{_short(frame.filename)}:{frame.lineno}"
    if found is None and error.__cause__ is not None:
        remote = str(error.__cause__)
        for line in remote.splitlines():
            line = line.strip()
            if line.startswith('File "') and '", line ' in line:
                filename, _, rest = line[6:].partition('", line ')
                if _is_user_file(filename):
                    found = f"{_short(filename)}:{rest.split(',')[0]}"
    return found


def _short(filename: str) -> str:
    path = os.path.abspath(filename)
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return relative if not relative.startswith("..") else path


def could_not_run(error: BaseException, what: str = "the audit") -> CouldNotRun:
    """The one-line [`CouldNotRun`][dpaudit.errors.CouldNotRun] for an exception raised while ``what`` ran."""
    if isinstance(error, CouldNotRun):
        return error
    if isinstance(error, MemoryError):
        return CouldNotRun(
            f"{what} ran out of memory; lower --samples, --domain-size or the mechanism's size"
        )
    name = type(error).__name__
    text = " ".join(str(error).split()) or "(no message)"
    if len(text) > 300:
        text = text[:297] + "..."
    where = user_frame(error)
    origin = f"the mechanism raised {name} at {where}" if where else f"{name}"
    return CouldNotRun(f"{what} could not run: {origin}: {text}")
