"""``dpaudit worst-case MECH --param value ...``: exact local search for the worst neighbouring pair.

Exit status: 0 the worst pair found is within the claim, 1 it exceeds the claim,
2 usage error (including a mechanism with no exact law).
"""

from __future__ import annotations

import dataclasses
import json
import sys

from .arguments import check_output_path, options_of
from .errors import UsageError
from .mechanism_args import build_mechanism, find_mechanism_class
from .output import write_text
from .verify import _max_items

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
    parser.add_argument("mechanism", metavar="MECH", help="mechanism class name, e.g. TopStable")
    parser.add_argument("--d", type=int, default=5, help="number of items (default 5)")
    parser.add_argument(
        "--max-count", type=int, default=100, help="largest count searched (default 100)"
    )
    parser.add_argument(
        "--relation",
        choices=["claim", "add-remove", "bounded-change"],
        default="claim",
        help="neighbour relation (default: the one the mechanism's claim is stated for)",
    )
    parser.add_argument(
        "--max-items",
        default=None,
        metavar="DELTA",
        help="add/remove users touching at most DELTA items; also passed to the mechanism "
        "when it has a max_items parameter",
    )
    parser.add_argument(
        "--max-change", type=int, default=1, help="per-count change for bounded-change"
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
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def handle(args) -> int:
    # Imported here so `dpaudit --help` does not pay for mpmath and the laws.
    # The mechanisms and exact laws (scipy, mpmath) only once a search runs: --help stays fast.
    from mechanisms.claims import AddRemoveUser, BoundedChange, NeighbourRelation

    from ..exact import output_law
    from ..exact.worst_case import worst_case

    check_output_path(args.json, "--json")
    tokens = list(args.extra)
    max_items = _max_items(args.max_items)
    cls = find_mechanism_class(args.mechanism)
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    given = any(t.split("=", 1)[0] in ("--max-items", "--max_items") for t in tokens)
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
    elif args.relation == "add-remove" or max_items is not None:
        relation = AddRemoveUser(None if max_items in (None, "unrestricted") else max_items)
    if output_law.dispatch(type(mech)) is output_law.dispatch(object):
        raise UsageError(f"no exact law is registered for {type(mech).__name__}")
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
        )
    except ValueError as error:
        raise UsageError(str(error)) from None

    # With --json - stdout carries the JSON alone; the summary goes to stderr.
    print(result, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json is not None:
        write_text(args.json, json.dumps(result.to_dict(), indent=2), "--json")
    sys.stdout.flush()
    return 0 if result.holds else 1
