"""``dpaudit verify MECH --param value ...``: exhaustive exact check of a mechanism's claim.

Exit status: 0 the claim holds on every pair of the family, 1 it is violated
on some pair, 2 usage error (including a mechanism with no exact law).
"""

from __future__ import annotations

import dataclasses
import json
import sys

from .arguments import (
    check_dask_options,
    check_output_path,
    close_dask_client,
    dask_client,
    options_of,
)
from .errors import EXIT_STATUSES, UsageError, could_not_run, is_interrupt
from .mechanism_args import build_mechanism, find_mechanism_class
from .output import write_text

__all__ = ["handle", "register"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a mechanism's claim exactly on every neighbouring pair of a small family",
        description=(
            "Exhaustive exact verification: for every histogram with D items and counts "
            "<= MAX_COUNT and every neighbour of each, compute the exact privacy profile "
            "and check the mechanism's (epsilon, delta) claim. Mechanism parameters follow "
            "the name as --param value (see `dpaudit mechanisms`)."
        ),
        epilog=(
            "example: dpaudit verify LimitDomain --k 2 --kbar 3 --epsilon 1 --delta 1e-3 "
            "--d 5 --max-count 3.  " + EXIT_STATUSES
        ),
        # Mechanism parameters are unknown to this parser; never let argparse
        # read `--m` as an abbreviation of `--max-count`.
        allow_abbrev=False,
    )
    parser.add_argument("mechanism", metavar="MECH", help="mechanism class name, e.g. LimitDomain")
    parser.add_argument("--d", type=int, default=5, help="number of items (default 5)")
    parser.add_argument(
        "--max-count", type=int, default=3, help="largest count in the family (default 3)"
    )
    parser.add_argument(
        "--relation",
        choices=["claim", "add-remove", "bounded-change", "substitute"],
        default="claim",
        help="neighbour relation (default: the one the mechanism's claim is stated for)",
    )
    parser.add_argument(
        "--max-items",
        default=None,
        metavar="DELTA",
        help="add/remove users (or substituted records) touching at most DELTA items; also "
        "passed to the mechanism "
        "when it has a max_items parameter",
    )
    parser.add_argument(
        "--max-change",
        type=int,
        default=1,
        help="per-count change for --relation bounded-change (default 1)",
    )
    parser.add_argument(
        "--epsilon-check",
        type=float,
        default=None,
        dest="epsilon_check",
        help="check this epsilon instead of the claim's",
    )
    parser.add_argument(
        "--delta-check",
        type=float,
        default=None,
        dest="delta_check",
        help="check this delta instead of the claim's",
    )
    parser.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="also write the result as JSON to FILE ('-' for stdout)",
    )
    parser.add_argument(
        "--dask",
        metavar="local[:N]",
        help="spread the pairs over a Dask LocalCluster of N processes (default 2)",
    )
    parser.add_argument("--scheduler", metavar="ADDRESS", help="spread over a running Dask cluster")
    parser.add_argument(
        "--resume",
        metavar="FILE",
        help="checkpoint finished blocks to FILE (DuckDB); rerun to continue",
    )
    parser.add_argument(
        "--block",
        type=int,
        default=2_000,
        help="pairs per task with --dask/--scheduler/--resume (default 2000)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is none when stderr is not a terminal)",
    )
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def _max_items(text):
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


def _family_message(error: ValueError, args) -> str:
    """The refusal of a family, naming the options that size it."""
    message = str(error).replace("max_count", "--max-count").replace("d must", "--d must")
    if "histogram family" in message:
        message = f"--d {args.d} --max-count {args.max_count}: {message}"
    return message


def handle(args) -> int:
    check_output_path(args.json, "--json")
    check_output_path(args.resume, "--resume")
    check_dask_options(args)
    if args.block < 1:
        raise UsageError("--block must be >= 1")
    # Imported here so `dpaudit --help` does not pay for mpmath and the laws.
    from mechanisms.claims import AddRemoveUser, BoundedChange, NeighbourRelation, Substitute

    from ..exact import output_law, verify
    from ..neighbours import count_histograms

    tokens = list(args.extra)
    max_items = _max_items(args.max_items)
    cls = find_mechanism_class(args.mechanism)
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    given = any(
        t in ("--max-items", "--max_items") or t.startswith(("--max-items=", "--max_items="))
        for t in tokens
    )
    if max_items not in (None, "unrestricted") and "max_items" in fields and not given:
        tokens += ["--max-items", str(max_items)]
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
        relation = Substitute(None if max_items == "unrestricted" else (max_items or 1))
    elif args.relation == "add-remove" or max_items is not None:
        relation = AddRemoveUser(None if max_items in (None, "unrestricted") else max_items)

    if output_law.dispatch(type(mech)) is output_law.dispatch(object):
        raise UsageError(f"no exact law is registered for {type(mech).__name__}")
    try:
        count_histograms(args.d, args.max_count)
    except ValueError as error:
        raise UsageError(_family_message(error, args)) from None
    client = dask_client(args)
    try:
        result = verify(
            mech,
            d=args.d,
            max_count=args.max_count,
            neighbours=relation,
            # A bar is for a person at a terminal, not for a CI log (88 KB for one Dask run).
            progress=not args.no_progress and sys.stderr.isatty(),
            epsilon=args.epsilon_check,
            delta=args.delta_check,
            client=client,
            block=args.block,
            resume=args.resume,
        )
    except ValueError as error:
        raise UsageError(_family_message(error, args)) from None
    except Exception as error:  # the law or the cluster failed: exit 4, not a usage error
        if is_interrupt(error):
            raise KeyboardInterrupt from None
        raise could_not_run(error, "the verification") from None
    finally:
        close_dask_client(client, args)

    # With --json - stdout carries the JSON alone; the summary goes to stderr.
    print(result, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json is not None:
        write_text(args.json, json.dumps(result.to_dict(), indent=2), "--json")
    sys.stdout.flush()
    return 0 if result.holds else 1
