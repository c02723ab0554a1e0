"""The ``dpaudit`` command line.

Exit status ([`errors`][dpaudit.cli.errors]): 0 passed, 1 violation found, 2 usage error (refused
before any work), 3 inconclusive (no power) or interrupted, 4 could not run (the mechanism
raised, memory ran out, the tool failed). Every error is one line on stderr; set
``DPAUDIT_TRACEBACK=1`` to see the traceback of a status-4 failure as well.

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds its
parser and sets ``handler(args) -> int`` as the default. Options shared by several
commands are in [`arguments`][dpaudit.cli.arguments], writing results in
[`output`][dpaudit.cli.output]. This package imports only the standard library at start-up, so
``--help``, ``--version`` and usage errors are fast and Ctrl-C at any moment is handled
([`main`][dpaudit.cli.main] is entered before anything heavy).
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from .errors import EXIT_STATUSES, CouldNotRun, UsageError

__all__ = ["SUBCOMMAND_MODULES", "CouldNotRun", "UsageError", "build_parser", "main"]

#: Modules of ``dpaudit.cli`` that each add one subcommand.
SUBCOMMAND_MODULES = [
    "audit",
    "plan",
    "recheck",
    "compare",
    "verify",
    "worst_case",
    "select",
    "bounds",
    "mechanisms_list",
]
_COMMANDS = [
    "audit",
    "plan",
    "recheck",
    "compare",
    "verify",
    "worst-case",
    "select",
    "bounds",
    "mechanisms",
]


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one-line [`UsageError`][dpaudit.cli.UsageError] s (no usage block)."""

    def error(self, message):
        error = UsageError(message)
        error.prog = self.prog
        raise error


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = Parser(
        prog="dpaudit",
        description="Verify and audit differentially private top-k selection mechanisms.",
        epilog=EXIT_STATUSES,
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked (the lookup is slow)."""

    def __init__(self, option_strings, dest, help=None):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpaudit")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


#: A value that starts like a negative number (``-1,0``, ``-.5``, ``-inf``): argparse would
#: read it as an option.
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf\b|nan\b)", re.IGNORECASE)


def _attach_negative_values(argv: list[str]) -> list[str]:
    """``--claim -1,0`` -> ``--claim=-1,0``, so the value is read (and then judged) as a value."""
    out: list[str] = []
    for token in argv:
        if (
            out
            and _NEGATIVE_VALUE.match(token)
            and out[-1].startswith("--")
            and "=" not in out[-1]
            and out[-1] != "--"
        ):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run one ``dpaudit`` command; return its exit status (never raises but SystemExit(0))."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return _interrupted(_ARGS[-1] if _ARGS else None)
    except BrokenPipeError:  # `dpaudit ... | head` is fine
        return 0
    except Exception as error:
        from .errors import EXIT_COULD_NOT_RUN, EXIT_USAGE, could_not_run, is_interrupt, report

        if is_interrupt(error):  # DuckDB saw the Ctrl-C first
            return _interrupted(_ARGS[-1] if _ARGS else None)
        command = getattr(_ARGS[-1], "command", None) if _ARGS else None
        if isinstance(error, UsageError):
            prog = getattr(error, "prog", None)
            if prog is not None:
                print(f"{prog}: error: {error} (see {prog} --help)", file=sys.stderr)
            else:
                report(command, str(error))
            return EXIT_USAGE
        if os.environ.get("DPAUDIT_TRACEBACK"):
            import traceback

            traceback.print_exc()
        report(command, str(could_not_run(error, "the command")))
        return EXIT_COULD_NOT_RUN
    finally:
        _ARGS.clear()


#: The parsed arguments of the running command (for the messages of an interrupt or a crash).
_ARGS: list = []


def _run(argv: list[str]) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(_attach_negative_values(argv))
    if args.command is None:
        if extra:
            from .arguments import unknown_option_message

            raise UsageError(unknown_option_message(extra[0], ["--help", "--version"]))
        raise UsageError(f"give a command ({', '.join(_COMMANDS)}); see dpaudit --help")
    _ARGS.append(args)
    args.extra = extra
    args.argv = argv
    if extra and not getattr(args, "accepts_mechanism_params", False):
        from .arguments import unknown_option_message

        raise UsageError(unknown_option_message(extra[0], args.known_options))
    try:
        return int(args.handler(args))
    except MemoryError as error:
        from .errors import could_not_run

        raise could_not_run(error, f"dpaudit {args.command}") from None


def _interrupted(args) -> int:
    import signal

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C: no traceback
    try:
        command = getattr(args, "command", None)
        resume = getattr(args, "resume", None)
        hint = f"; rerun the same command to continue from {resume}" if resume else ""
        prefix = f"dpaudit {command}" if command else "dpaudit"
        print(f"{prefix}: interrupted, no result (inconclusive){hint}", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, previous)
    from .errors import EXIT_INCONCLUSIVE

    return EXIT_INCONCLUSIVE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
