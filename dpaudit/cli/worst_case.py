"""``dpaudit worst-case MECH --param value ...``: exact local search for the worst neighbouring pair.

Exit status: 0 the worst pair found is within the claim, 1 it exceeds the claim,
2 usage error (including a mechanism with no exact law).
"""

from __future__ import annotations

import json
import sys

from .arguments import check_output_path, options_of
from .errors import UsageError
from .family import add_family_options, mechanism_and_relation
from .output import write_text

__all__ = ["handle", "register"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "worst-case",
        help="search neighbouring pairs with large counts for the worst exact privacy loss",
        description=(
            "Local search over neighbouring histograms with D items and counts <= MAX_COUNT, "
            "scored by each pair's exact epsilon at delta (float64 laws), the best pairs "
            "recomputed in mpmath. Reports the worst pair found, its exact epsilon at delta "
            "and delta at the claimed epsilon, and how much of the family was scored. "
            "Mechanism parameters follow the name as --param value (see `dpaudit mechanisms`)."
        ),
        epilog=(
            "example: dpaudit worst-case TopStable --k 2 --kbar 3 --epsilon 1 --delta 1e-3 "
            "--d 5 --max-count 100.  Exit status: 0 worst found within the claim, 1 exceeds "
            "it, 2 usage error."
        ),
        allow_abbrev=False,
    )
    add_family_options(
        parser,
        example="TopStable",
        max_count=100,
        max_count_help="largest count searched",
        relations=("add-remove", "bounded-change"),
    )
    parser.add_argument(
        "--delta-check",
        type=float,
        default=None,
        dest="delta_check",
        help="compute epsilon at this delta instead of the claim's",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    parser.add_argument(
        "--budget", type=int, default=20_000, help="distinct pairs scored (default 20000)"
    )
    parser.add_argument(
        "--chains", type=int, default=8, help="search chains run together (default 8)"
    )
    parser.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="also write the result as JSON to FILE ('-' for stdout)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is none when stderr is not a terminal)",
    )
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def handle(args) -> int:
    # The exact laws (scipy, mpmath) only once a search runs: --help stays fast.
    from ..exact.worst_case import worst_case

    check_output_path(args.json, "--json")
    mech, relation = mechanism_and_relation(args)
    for option, value, low in (
        ("--d", args.d, 1),
        ("--max-count", args.max_count, 1),
        ("--budget", args.budget, 1),
        ("--chains", args.chains, 1),
    ):
        if value < low:
            raise UsageError(f"{option} must be an integer >= {low}, got {value}")
    try:
        result = worst_case(
            mech,
            d=args.d,
            max_count=args.max_count,
            relation=relation,
            delta=args.delta_check,
            seed=args.seed,
            budget=args.budget,
            chains=args.chains,
            progress=not args.no_progress and sys.stderr.isatty(),
        )
    except ValueError as error:
        raise UsageError(str(error)) from None

    # With --json - stdout carries the JSON alone; the summary goes to stderr.
    print(result, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json is not None:
        write_text(args.json, json.dumps(result.to_dict(), indent=2), "--json")
    sys.stdout.flush()
    return 0 if result.holds else 1
