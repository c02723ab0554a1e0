"""``dpaudit mechanisms``: list the mechanisms the CLI can build, with their parameters."""

from __future__ import annotations

import dataclasses

from .arguments import options_of
from .mechanism_args import flag, mechanism_classes


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "mechanisms",
        help="list mechanisms and their parameters",
        description="List every mechanism the other commands accept, with its parameters.",
    )
    parser.set_defaults(handler=handle, known_options=options_of(parser))


def handle(args) -> int:
    for name, cls in sorted(mechanism_classes().items()):
        params = []
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            if field.default is not dataclasses.MISSING:
                params.append(f"{flag(field.name)} {field.default!r}")
            else:
                params.append(f"{flag(field.name)} (required)")
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        print(f"{name}: {summary}")
        print("    " + "  ".join(params))
    return 0
