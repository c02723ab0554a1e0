"""The ``dpaudit`` command line.

Exit status: 0 = the check passed, 1 = a violation was found, 2 = usage error
(bad arguments, unknown mechanism, bad parameter, unwritable output path),
3 = inconclusive (``dpaudit audit``: no violation found but the audit had no power,
or it was interrupted).
Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds its parser and sets ``handler(args) -> int`` as the default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = [
    "SUBCOMMAND_MODULES",
    "UsageError",
    "build_parser",
    "check_output_path",
    "main",
    "write_text",
]

#: Modules of ``dpaudit.cli`` that each add one subcommand.
SUBCOMMAND_MODULES = [
    "audit",
    "plan",
    "recheck",
    "verify",
    "worst_case",
    "select",
    "bounds",
    "mechanisms_list",
]

EXIT_STATUSES = (
    "Exit status: 0 passed, 1 violation found, 2 usage error, "
    "3 inconclusive (audit: no power, or interrupted)."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpaudit",
        description="Verify and audit differentially private top-k selection mechanisms.",
        epilog=EXIT_STATUSES,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpaudit")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def check_output_path(path, option: str) -> None:
    """Fail early (before any sampling) when ``path`` cannot be written; ``-`` is stdout."""
    import os

    if path is None or path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{option}: cannot write {path!r}: no directory {folder!r}")
    if os.path.isdir(path):
        raise UsageError(f"{option}: {path!r} is a directory")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{option}: cannot write {path!r}: permission denied")


def write_text(path, text: str, option: str) -> None:
    """Write ``text`` to ``path`` (``-``: stdout); an OSError is a one-line usage error."""
    if path == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
    except OSError as error:
        raise UsageError(f"{option}: cannot write {path!r}: {error.strerror or error}") from None


def unknown_option_message(token: str, known) -> str:
    """``unknown option --sample (did you mean --samples?)``, via difflib."""
    import difflib

    name = token.split("=", 1)[0]
    if not name.startswith("-"):
        return f"unexpected argument {token!r}"
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown option {name}{hint}"


def options_of(parser) -> list[str]:
    """Every long option string of an argparse parser."""
    return [s for action in parser._actions for s in action.option_strings if s.startswith("--")]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    args.extra = extra
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if extra and not getattr(args, "accepts_mechanism_params", False):
        print(
            f"dpaudit {args.command}: error: {unknown_option_message(extra[0], args.known_options)}",
            file=sys.stderr,
        )
        return 2
    try:
        return int(args.handler(args))
    except UsageError as error:
        print(f"dpaudit {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `dpaudit ... | head` is fine
        return 0
    except KeyboardInterrupt:
        resume = getattr(args, "resume", None)
        hint = f"; rerun the same command to continue from {resume}" if resume else ""
        print(
            f"dpaudit {args.command}: interrupted, no result (inconclusive){hint}", file=sys.stderr
        )
        return 3


class UsageError(Exception):
    """A user error the CLI reports on stderr with exit status 2."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
