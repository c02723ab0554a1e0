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
The errors themselves are ``dpaudit.errors``; both modules import only the standard library
(they run before anything heavy).
"""

from __future__ import annotations

import sys

from dpaudit.errors import CouldNotRun, UsageError, could_not_run, user_frame

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


def is_interrupt(error: BaseException) -> bool:
    """A Ctrl-C, whether Python or DuckDB (``InterruptException``, mid-query) saw it first."""
    return isinstance(error, KeyboardInterrupt) or type(error).__name__ == "InterruptException"


def report(command: str | None, message: str) -> None:
    """The one line ``dpaudit COMMAND: error: MESSAGE`` on stderr."""
    prefix = f"dpaudit {command}" if command else "dpaudit"
    print(f"{prefix}: error: {message}", file=sys.stderr)
