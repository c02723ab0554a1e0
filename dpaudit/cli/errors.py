"""Errors of the command line and the exit status each one maps to (DESIGN.md, "Verdicts").

| exit | means |
| --- | --- |
| 0 | PASSED (or the command did its job) |
| 1 | VIOLATION (a claim found false) |
| 2 | usage error: bad arguments, refused before any work |
| 3 | INCONCLUSIVE, or interrupted (Ctrl-C) |
| 4 | could not run: the mechanism raised, memory ran out, the tool failed |

A gate reads 1 as "privacy bug" and nothing else: every crash is 4, with one line on
stderr naming the cause and, for the mechanism's own exception, where it was raised.
This module imports only the standard library (it runs before anything heavy).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback

__all__ = [
    "EXIT_COULD_NOT_RUN",
    "EXIT_INCONCLUSIVE",
    "EXIT_STATUSES",
    "EXIT_USAGE",
    "CouldNotRun",
    "UsageError",
    "could_not_run",
    "is_interrupt",
    "user_frame",
]

EXIT_USAGE = 2
EXIT_INCONCLUSIVE = 3
EXIT_COULD_NOT_RUN = 4

#: The epilog of every subcommand that audits or verifies.
EXIT_STATUSES = (
    "Exit status: 0 passed, 1 violation found, 2 usage error, "
    "3 inconclusive (no power, or interrupted), 4 could not run (the mechanism "
    "raised, memory ran out, the tool failed)."
)


class UsageError(Exception):
    """A user error the CLI reports on stderr with exit status 2 (refused before any work)."""


class CouldNotRun(Exception):
    """The work started but could not finish (exit status 4); the message is one line."""


#: Where the tool itself and the libraries it uses live: frames there are not "user code".
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def is_interrupt(error: BaseException) -> bool:
    """A Ctrl-C, whether Python or DuckDB (``InterruptException``, mid-query) saw it first."""
    return isinstance(error, KeyboardInterrupt) or type(error).__name__ == "InterruptException"


def could_not_run(error: BaseException, what: str = "the audit") -> CouldNotRun:
    """The one-line :class:`CouldNotRun` for an exception raised while ``what`` ran."""
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


def report(command: str | None, message: str) -> None:
    """The one line ``dpaudit COMMAND: error: MESSAGE`` on stderr."""
    prefix = f"dpaudit {command}" if command else "dpaudit"
    print(f"{prefix}: error: {message}", file=sys.stderr)
