"""The ``dpaudit`` command line.

Exit status: 0 = the check passed (no violation found), 1 = a violation was
found, 2 = usage error (bad arguments, unknown mechanism, bad parameter).
Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds its parser and sets ``handler(args) -> int`` as the default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["SUBCOMMAND_MODULES", "build_parser", "main"]

#: Modules of ``dpaudit.cli`` that each add one subcommand.
SUBCOMMAND_MODULES = ["audit", "verify", "bounds", "mechanisms_list"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpaudit",
        description="Verify and audit differentially private top-k selection mechanisms.",
        epilog="Exit status: 0 no violation, 1 violation found, 2 usage error.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    args.extra = extra
    if extra and not getattr(args, "accepts_mechanism_params", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.handler(args))
    except UsageError as error:
        print(f"dpaudit {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `dpaudit ... | head` is fine
        return 0


class UsageError(Exception):
    """A user error the CLI reports on stderr with exit status 2."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
