"""The options of the exact commands (``verify``, ``worst-case``): a mechanism and a family of pairs.

Both name a mechanism class with its parameters, a family of histograms (``--d`` items,
counts up to ``--max-count``) and a neighbour relation (``--relation``, ``--max-items``,
``--max-change``); the options are defined once here and read by
[`mechanism_and_relation`][dpaudit.cli.family.mechanism_and_relation].
"""

from __future__ import annotations

import dataclasses

from .errors import UsageError
from .mechanism_args import build_mechanism, find_mechanism_class

__all__ = ["add_family_options", "max_items", "mechanism_and_relation"]


def add_family_options(
    parser, *, example: str, max_count: int, max_count_help: str, relations: tuple[str, ...]
) -> None:
    """``MECH``, ``--d``, ``--max-count``, ``--relation`` (one of ``relations``), ``--max-items``
    and ``--max-change``.

    Parameters
    ----------
    parser : the subcommand's parser.
    example : a mechanism class named in the help of ``MECH``.
    max_count, max_count_help : the default of ``--max-count`` and what it means here.
    relations : the relations ``--relation`` offers besides ``claim`` (the claim's own).
    """
    parser.add_argument("mechanism", metavar="MECH", help=f"mechanism class name, e.g. {example}")
    parser.add_argument("--d", type=int, default=5, help="number of items (default 5)")
    parser.add_argument(
        "--max-count",
        type=int,
        default=max_count,
        help=f"{max_count_help} (default {max_count})",
    )
    parser.add_argument(
        "--relation",
        choices=["claim", *relations],
        default="claim",
        help="neighbour relation (default: the one the mechanism's claim is stated for)",
    )
    touched = "users (or substituted records)" if "substitute" in relations else "users"
    parser.add_argument(
        "--max-items",
        default=None,
        metavar="DELTA",
        help=f"add/remove {touched} touching at most DELTA items; also passed to the "
        "mechanism when it has a max_items parameter",
    )
    parser.add_argument(
        "--max-change",
        type=int,
        default=1,
        help="per-count change for --relation bounded-change (default 1)",
    )


def max_items(text: str | None) -> int | str | None:
    """``--max-items``: a positive integer, ``"unrestricted"`` (none, inf) or None (not given)."""
    if text is None:
        return None
    if text.lower() in ("none", "inf", "unrestricted"):
        return "unrestricted"
    try:
        value = int(text)
    except ValueError:
        raise UsageError(
            f"--max-items must be a positive integer or 'none', got {text!r}"
        ) from None
    if value < 1:
        raise UsageError(f"--max-items must be a positive integer or 'none', got {text!r}")
    return value


def mechanism_and_relation(args):
    """The mechanism ``args`` name and the relation to check it under (None: its claim's).

    ``--max-items`` is passed on to a mechanism with a ``max_items`` parameter not given
    among its own parameters. Refuses (UsageError) a mechanism with no exact law.
    """
    # The mechanisms and exact laws (scipy, mpmath) only once a command runs: --help stays fast.
    from mechanisms.claims import AddRemoveUser, BoundedChange, NeighbourRelation, Substitute

    from ..exact import output_law

    tokens = list(args.extra)
    limit = max_items(args.max_items)
    count = limit if isinstance(limit, int) else None  # None: unrestricted, or not given
    cls = find_mechanism_class(args.mechanism)
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    given = any(t.split("=", 1)[0] in ("--max-items", "--max_items") for t in tokens)
    if count is not None and "max_items" in fields and not given:
        tokens += ["--max-items", str(count)]
    mech = build_mechanism(args.mechanism, tokens, getattr(args, "known_options", ()))

    relation: NeighbourRelation | None = None
    if args.relation == "bounded-change":
        if args.max_items is not None:
            raise UsageError("--max-items applies to add/remove neighbours, not bounded-change")
        try:
            relation = BoundedChange(args.max_change)
        except ValueError as error:
            raise UsageError(f"--max-change: {error}") from None
    elif args.relation == "substitute":
        relation = Substitute(None if limit == "unrestricted" else (count or 1))
    elif args.relation == "add-remove" or limit is not None:
        relation = AddRemoveUser(count)
    if output_law.dispatch(type(mech)) is output_law.dispatch(object):
        raise UsageError(f"no exact law is registered for {type(mech).__name__}")
    return mech, relation
