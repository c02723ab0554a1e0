"""``dpaudit verify MECH --param value ...``: exhaustive exact check of a mechanism's claim.

Exit status: 0 the claim holds on every pair of the family, 1 it is violated
on some pair, 2 usage error (including a mechanism with no exact law).
"""

from __future__ import annotations

import dataclasses
import json
import sys

from mechanisms.claims import AddRemoveUser, BoundedChange, Substitute

from . import UsageError, check_output_path, options_of, write_text
from .mechanism_args import build_mechanism, find_mechanism_class

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
            "--d 5 --max-count 3.  Exit status: 0 claim holds, 1 violated, 2 usage error."
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
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
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


def handle(args) -> int:
    # Imported here so `dpaudit --help` does not pay for mpmath and the laws.
    from ..exact import output_law, verify
    from ..neighbours import count_histograms

    check_output_path(args.json, "--json")
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

    relation = None
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
        raise UsageError(
            str(error).replace("max_count", "--max-count").replace("d must", "--d must")
        )
    if args.block < 1:
        raise UsageError("--block must be >= 1")
    check_output_path(args.resume, "--resume")
    from .audit import _close_dask_client, _dask_client

    client = _dask_client(args)
    try:
        result = verify(
            mech,
            d=args.d,
            max_count=args.max_count,
            neighbours=relation,
            progress=not args.no_progress,
            epsilon=args.epsilon_check,
            delta=args.delta_check,
            client=client,
            block=args.block,
            resume=args.resume,
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    except Exception as error:
        raise UsageError(f"verification failed: {type(error).__name__}: {error}") from None
    finally:
        _close_dask_client(client, args)

    # With --json - stdout carries the JSON alone; the summary goes to stderr.
    print(result, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json is not None:
        write_text(args.json, json.dumps(result.to_dict(), indent=2), "--json")
    sys.stdout.flush()
    return 0 if result.holds else 1
