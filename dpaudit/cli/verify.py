"""``dpaudit verify MECH --param value ...``: exhaustive exact check of a mechanism's claim.

Exit status: 0 the claim holds on every pair of the family, 1 it is violated
on some pair, 2 usage error (including a mechanism with no exact law).
"""

from __future__ import annotations

import json
import sys

from .arguments import (
    check_output_path,
    options_of,
)
from .dask_options import check_dask_options, close_dask_client, dask_client
from .errors import EXIT_STATUSES, UsageError, could_not_run, is_interrupt
from .family import add_family_options, mechanism_and_relation
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
    add_family_options(
        parser,
        example="LimitDomain",
        max_count=3,
        max_count_help="largest count in the family",
        relations=("add-remove", "bounded-change", "substitute"),
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
    _add_spread_options(parser)
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is none when stderr is not a terminal)",
    )
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def _add_spread_options(parser) -> None:
    """Pairs spread over Dask, or checkpointed to resume (dpaudit.exact.verify)."""
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
    from ..exact import verify
    from ..neighbours.relations import check_family

    mech, relation = mechanism_and_relation(args)
    try:
        check_family(args.d, args.max_count)
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
