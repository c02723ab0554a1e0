"""``dpaudit recheck RESULT.json``: recompute an audit's witnesses, exactly or by fresh sampling.

    dpaudit audit catalog:joint-no-half --json r.json
    dpaudit recheck r.json            # exact laws for built-in mechanisms on small histograms

Exit status: 0 the recorded evidence agrees with the re-check, 1 it does not, 2 usage error.
"""

from __future__ import annotations

import json

from .arguments import check_output_path, options_of
from .errors import UsageError
from .output import write_text


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "recheck",
        help="recompute an audit's evidence from its JSON result",
        description=(
            "Rebuild the audited mechanism from the JSON result of `dpaudit audit "
            "--json` and recompute every confirmed event: exactly (dpaudit.exact) "
            "when its law is known and the histograms are small, else on fresh "
            "samples with a new seed."
        ),
        epilog="Exit status: 0 the evidence agrees, 1 it does not, 2 usage error, 3 interrupted, "
        "4 could not run (the mechanism could not be rebuilt or raised).",
        allow_abbrev=False,
    )
    parser.add_argument(
        "result", metavar="RESULT.json", help="a result written by dpaudit audit --json"
    )
    parser.add_argument(
        "--samples", type=int, help="fresh samples per histogram (default: as recorded)"
    )
    parser.add_argument("--seed", type=int, help="seed of the fresh samples")
    parser.add_argument(
        "--sampled", action="store_true", help="re-sample even when an exact law exists"
    )
    parser.add_argument("--json", metavar="FILE", help="write the re-check as JSON ('-': stdout)")
    parser.set_defaults(handler=handle, known_options=options_of(parser))


def handle(args) -> int:
    from dpaudit.recheck import recheck

    check_output_path(args.json, "--json")
    if args.samples is not None and args.samples < 1:
        raise UsageError("--samples must be >= 1")
    try:
        outcome = recheck(
            args.result, samples=args.samples, seed=args.seed, exact=False if args.sampled else None
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.json == "-":
        write_text("-", json.dumps(outcome.to_dict(), indent=2, ensure_ascii=False), "--json")
    else:
        print(outcome)
        if args.json:
            write_text(
                args.json, json.dumps(outcome.to_dict(), indent=2, ensure_ascii=False), "--json"
            )
    return 0 if outcome.agrees else 1
