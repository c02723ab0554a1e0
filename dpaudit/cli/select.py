"""``dpaudit select MECH --data NAME_OR_FILE ...``: run a mechanism on a real log.

    dpaudit select LimitDomain --data gowalla --k 10 --kbar 100 --epsilon 1 --delta 1e-6
    dpaudit select GumbelTopK --data my_log.parquet --user-column uid --item-column song --k 5 --epsilon 1

Prints the released items with their names and counts, the mechanism's claim, and its
threshold where it has one. Exit status: 0 done, 2 usage error (missing file, missing
columns, empty log, bad parameters).
"""

from __future__ import annotations

from .arguments import options_of
from .errors import UsageError
from .mechanism_args import build_mechanism


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "select",
        help="run a mechanism on a real user–item log and print what it releases",
        description=(
            "Count distinct users per item of a log (a shared data set by name, or a "
            "CSV/TSV/Parquet file, read by DuckDB), run MECH once on that histogram, "
            "and print the released items. Mechanism parameters follow as --PARAM VALUE."
        ),
        epilog="Exit status: 0 done, 2 usage error, 3 interrupted, 4 could not run.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "mechanism", metavar="MECH", help="mechanism class name (dpaudit mechanisms)"
    )
    parser.add_argument(
        "--data",
        required=True,
        metavar="NAME_OR_FILE",
        help="shared data set (gowalla, lastfm, retail, amazon-beauty) or a file",
    )
    parser.add_argument("--user-column", default="user", help="user column (default user)")
    parser.add_argument("--item-column", default="item", help="item column (default item)")
    parser.add_argument("--seed", type=int, default=None, help="seed (default: fresh randomness)")
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def handle(args) -> int:
    import numpy as np

    from dpaudit.data import load_log_histogram
    from mechanisms import BOTTOM

    mech = build_mechanism(args.mechanism, list(args.extra), args.known_options)
    try:
        log = load_log_histogram(args.data, args.user_column, args.item_column)
    except (FileNotFoundError, ValueError, ImportError) as error:
        raise UsageError(str(error)) from None
    rng = np.random.default_rng(args.seed)
    try:
        outcome = mech.run(log.counts, rng)
    except ValueError as error:
        raise UsageError(f"{type(mech).__name__}: {error}") from None
    print(f"{mech}")
    print(f"data: {args.data}: {len(log):,} items, top count {int(log.counts.max()):,}")
    print(f"claim: {mech.claim}")
    threshold = getattr(mech, "threshold", None)
    if callable(threshold):
        print(f"threshold (noise-free): {threshold(log.counts):.6g}")
    elif isinstance(threshold, (int, float)):
        print(f"threshold (noise-free): {threshold:.6g}")
    released = [i for i in outcome if i != BOTTOM]
    print(
        f"released {len(released)} item{'s' if len(released) != 1 else ''}"
        + (" then ⊥ (stopped early)" if BOTTOM in outcome else "")
        + ":"
    )
    for rank, item in enumerate(released, 1):
        print(f"  {rank:>3}. {log.names[item]}  (count {int(log.counts[item]):,})")
    return 0
