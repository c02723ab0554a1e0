"""``dpaudit worst-case MECH --param value ...``: exact local search for the worst neighbouring pair.

Exit status: 0 the worst pair found is within the claim, 1 it exceeds the claim,
2 usage error (including a mechanism with no exact law). With ``--certify`` (LimitDomain):
0 the certified upper end is within the claim, 1 the certified lower end exceeds it, 3 the
interval contains the claim.
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
    _add_search_options(parser)
    _add_certify_options(parser)
    _add_output_options(parser)
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def _add_search_options(parser) -> None:
    """The local search: the δ checked, its seed and its budget."""
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


def _add_certify_options(parser) -> None:
    """The certified interval (branch and bound) in place of the search."""
    certify = parser.add_argument_group(
        "certified interval (LimitDomain; docs page 'Certified worst cases')"
    )
    certify.add_argument(
        "--certify",
        action="store_true",
        help="instead of a local search, certify [lower, upper] on the worst epsilon at delta "
        "over every pair on --d items with any counts (branch and bound; --max-count unused)",
    )
    certify.add_argument(
        "--every-d",
        action="store_true",
        help="with --certify: every number of items d >= 2 kbar at once instead of --d",
    )
    certify.add_argument(
        "--rtol",
        type=float,
        default=0.01,
        help="with --certify: stop when upper <= (1 + RTOL) lower (default 0.01)",
    )
    certify.add_argument(
        "--seconds",
        type=float,
        default=600.0,
        help="with --certify: time budget in seconds (default 600); the interval stays rigorous",
    )
    certify.add_argument(
        "--certificate",
        metavar="FILE",
        default=None,
        help="with --certify: write the certificate (leaf regions and bounds) as JSON to FILE",
    )


def _add_output_options(parser) -> None:
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


def handle(args) -> int:
    # The exact laws (scipy, mpmath) only once a search runs: --help stays fast.
    from ..exact.worst_case import worst_case

    check_output_path(args.json, "--json")
    mech, relation = mechanism_and_relation(args)
    if args.certify:
        return _certify(args, mech, relation)
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


def _certify(args, mech, relation) -> int:
    # Branch and bound with the exact laws: imported only when a certification runs.
    from ..exact.certify import certify_worst_case, write_certificate

    check_output_path(args.certificate, "--certificate")
    if relation is not None and relation != mech.claim.neighbours:
        raise UsageError("--certify covers the claim's own relation only")
    if args.rtol <= 0 or args.seconds <= 0:
        raise UsageError("--rtol and --seconds must be positive")
    try:
        result = certify_worst_case(
            mech,
            None if args.every_d else args.d,
            quantity="epsilon",
            at=args.delta_check,
            rtol=args.rtol,
            seconds=args.seconds,
        )
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None
    print(result, file=sys.stderr if args.json == "-" else sys.stdout)
    data = result.to_dict()
    if args.certificate is not None:
        write_certificate(result, args.certificate)
    if args.json is not None:
        summary = {key: value for key, value in data.items() if key != "leaves"}
        write_text(args.json, json.dumps(summary, indent=2), "--json")
    sys.stdout.flush()
    claim = mech.claim.epsilon
    if result.upper <= claim:
        return 0
    return 1 if result.lower > claim else 3
