"""``dpaudit plan``: the plan of an offline audit, for systems the auditor cannot drive.

    dpaudit plan GumbelTopK --k 2 --epsilon 1 --samples 1000000 --out audit-dir
    dpaudit plan --claim 1,0 --width 2 --relation add-remove --domain-size 5 --out audit-dir
    (run the system; write audit-dir/outcomes/<id>.<split>.csv|jsonl|parquet)
    dpaudit audit --from-samples audit-dir

``--simulate FORMAT`` also writes the outcome files by sampling MECH itself (a dry run of
the whole pipeline). The rules that keep the bounds valid are in
:mod:`dpaudit.auditor.offline`. ``dpaudit audit --from-samples DIR`` is handled here too
(:func:`handle_from_samples`).
"""

from __future__ import annotations

import os
import shlex
import sys

from . import UsageError, check_output_path, options_of

#: Options of ``dpaudit audit`` that --from-samples takes from plan.json instead, with
#: their defaults (any other value is refused).
_FIXED_BY_PLAN = (
    ("mechanism", None, "MECH"),
    ("claim", None, "--claim"),
    ("width", None, "--width"),
    ("child_command", None, "--command"),
    ("samples", None, "--samples"),
    ("seed", 0, "--seed"),
    ("workers", 1, "--workers"),
    ("counts", None, "--counts"),
    ("pair", None, "--pair"),
    ("restrict_to_given", False, "--restrict-to-given"),
    ("relation", None, "--relation"),
    ("domain_size", None, "--domain-size"),
    ("dask", None, "--dask"),
    ("scheduler", None, "--scheduler"),
    ("resume", None, "--resume"),
)


def register(subparsers) -> None:
    from dpaudit.auditor.offline import DEFAULT_MAX_PAIRS, DEFAULT_SELECT_SHARE, EXTENSIONS

    parser = subparsers.add_parser(
        "plan",
        help="write the plan of an offline audit (histograms and sample sizes to run)",
        description=(
            "Write DIR/plan.json, DIR/histograms.csv and DIR/README.txt: the candidate pairs, "
            "every histogram with an id, and per histogram the number of outcomes wanted in the "
            "select and the confirm split. Run the system and write "
            "DIR/outcomes/<id>.<split>.{csv,jsonl,parquet}, then `dpaudit audit --from-samples "
            "DIR`. MECH (optional) describes the system: its claim, width and parameters steer "
            "the pairs; without it give --claim and --width. Mechanism parameters follow as "
            "--PARAM VALUE."
        ),
        epilog="Exit status: 0 plan written, 2 usage error.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "mechanism",
        nargs="?",
        metavar="MECH",
        help="mechanism class name, catalog:NAME or package.module:attr",
    )
    parser.add_argument("--out", metavar="DIR", required=True, help="directory of the plan")
    parser.add_argument("--claim", metavar="EPS,DELTA", help="the claim audited")
    parser.add_argument("--width", type=int, help="longest outcome of the system")
    parser.add_argument(
        "--values",
        type=int,
        default=None,
        metavar="N",
        help="real values the system releases per outcome (default: MECH's, else "
        "0); outcome files then carry value columns v0..",
    )
    parser.add_argument(
        "--relation",
        metavar="REL",
        help="add-remove, add-remove:DELTA or bounded-change:M (default: the "
        "claim's, add-remove without MECH)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        help="total outcomes, all histograms and both splits (default 2,000,000)",
    )
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="failure probability (default 0.05)"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument(
        "--keep", type=int, default=2, help="pairs kept for confirmation (default 2)"
    )
    parser.add_argument(
        "--events-per-pair", type=int, default=3, help="events confirmed per kept pair (default 3)"
    )
    parser.add_argument(
        "--max-pairs",
        type=int,
        default=DEFAULT_MAX_PAIRS,
        help=f"candidate pairs (default {DEFAULT_MAX_PAIRS})",
    )
    parser.add_argument(
        "--select-share",
        type=float,
        default=DEFAULT_SELECT_SHARE,
        help=f"share of the samples in the select split (default {DEFAULT_SELECT_SHARE})",
    )
    parser.add_argument("--counts", help="a histogram whose neighbours are added to the pairs")
    parser.add_argument(
        "--pair",
        action="append",
        metavar="C;C2",
        help="a neighbouring pair added to the pairs, e.g. '1,1,0;2,1,0' (repeatable)",
    )
    parser.add_argument(
        "--restrict-to-given",
        action="store_true",
        help="plan only the --counts/--pair given, not the default families",
    )
    parser.add_argument(
        "--domain-size", type=int, metavar="D", help="items of the default histograms"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing DIR/plan.json")
    parser.add_argument(
        "--simulate",
        choices=EXTENSIONS,
        metavar="FORMAT",
        help="also write the outcome files by sampling MECH (csv, jsonl or parquet): "
        "a dry run of the pipeline",
    )
    parser.set_defaults(
        handler=handle,
        accepts_mechanism_params=True,
        child_command=None,
        timeout=60.0,
        known_options=options_of(parser),
    )


def _pairs(args):
    from .audit import _histogram

    if not args.pair:
        return None
    pairs = []
    for text in args.pair:
        if ";" not in text:
            raise UsageError(f"--pair wants 'C;C2', got {text!r}")
        a, b = text.split(";", 1)
        pairs.append((_histogram(a, "--pair"), _histogram(b, "--pair")))
    return pairs


def handle(args) -> int:
    from dpaudit.auditor.offline import OfflineInputError, fill_outcomes, write_plan

    from .audit import _histogram, _mechanism, _parse_claim, parse_relation

    extra = list(getattr(args, "extra", []))
    known = getattr(args, "known_options", [])
    out = args.out
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out: {out!r} is not a directory")
    check_output_path(os.path.join(out, "plan.json") if os.path.isdir(out) else out, "--out")
    claim = _parse_claim(args.claim)
    relation = parse_relation(args.relation)
    options = {}
    if args.mechanism is None:
        if extra:
            from . import unknown_option_message

            raise UsageError(unknown_option_message(extra[0], known))
        if claim is None or args.width is None:
            raise UsageError("give MECH, or --claim EPS,DELTA and --width N")
        mech = None
    else:
        mech, entry = _mechanism(args, extra, known)
        if entry is not None:
            options = {
                k: v for k, v in entry.audit_options.items() if k in ("domain_size", "samples")
            }
    if args.simulate and mech is None:
        raise UsageError("--simulate needs MECH (the mechanism to sample)")
    samples = args.samples if args.samples is not None else options.pop("samples", 2_000_000)
    options.pop("samples", None)
    if args.domain_size is not None:
        options["domain_size"] = args.domain_size
    counts = _histogram(args.counts, "--counts") if args.counts else None
    pairs = _pairs(args)
    if args.restrict_to_given and counts is None and pairs is None:
        raise UsageError("--restrict-to-given needs --counts or --pair")
    try:
        plan = write_plan(
            out,
            mech,
            overwrite=args.force,
            claim=claim,
            width=args.width,
            neighbours=relation,
            counts=counts,
            pairs=pairs,
            restrict=args.restrict_to_given,
            samples=samples,
            alpha=args.alpha,
            seed=args.seed,
            keep=args.keep,
            events_per_pair=args.events_per_pair,
            max_pairs=args.max_pairs,
            select_share=args.select_share,
            values=args.values,
            **options,
        )
        if args.simulate:
            fill_outcomes(out, mech, fmt=args.simulate)
    except OfflineInputError as error:
        hint = "; or give --force" if str(error).endswith("another directory") else ""
        raise UsageError(f"{error}{hint}") from None
    except ValueError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"--out: cannot write {out!r}: {error.strerror or error}") from None
    n_rows = sum(h["select"] + h["confirm"] for h in plan["histograms"])
    print(
        f"plan written to {out}: {len(plan['pairs'])} pairs, {len(plan['histograms'])} "
        f"histograms, {plan['histograms'][0]['select']:,} select + "
        f"{plan['histograms'][0]['confirm']:,} confirm outcomes each ({n_rows:,} in all), "
        f"claim ({plan['claim']['epsilon']:.6g}, {plan['claim']['delta']:.6g}), "
        f"width {plan['width']}, domain {plan['domain_size']}"
    )
    if args.simulate:
        print(
            f"outcome files sampled from the mechanism ({args.simulate}) in "
            f"{os.path.join(out, 'outcomes')}"
        )
    else:
        print(
            f"next: write {os.path.join(out, 'outcomes', '<id>.<split>.csv')} for every id in "
            f"{os.path.join(out, 'histograms.csv')} (see README.txt there), then "
            f"`dpaudit audit --from-samples {shlex.quote(out)}`"
        )
    return 0


def handle_from_samples(args) -> int:
    """``dpaudit audit --from-samples DIR``: bounds from the outcome files of a plan."""
    from dpaudit.auditor.offline import OfflineInputError, audit_from_samples, read_plan

    extra = list(getattr(args, "extra", []))
    if extra:
        raise UsageError(
            f"--from-samples takes the mechanism and its options from plan.json, not {extra[0]!r}"
        )
    for dest, default, spelling in _FIXED_BY_PLAN:
        if getattr(args, dest, default) != default:
            raise UsageError(f"--from-samples takes {spelling} from DIR/plan.json; drop {spelling}")
    check_output_path(args.json, "--json")
    check_output_path(args.report, "--report")
    if args.report == "-":
        raise UsageError("--report needs a file name (.md or .html)")
    try:
        plan = read_plan(args.from_samples)
        if args.alpha not in (0.05, plan["alpha"]):
            raise UsageError(
                f"--from-samples uses the plan's alpha {plan['alpha']:g}; drop --alpha"
            )
        evidence = {
            "command": "dpaudit " + " ".join(shlex.quote(a) for a in getattr(args, "argv", []))
        }
        chosen = {} if args.power_factor is None else {"power_factor": args.power_factor}
        result = audit_from_samples(
            args.from_samples,
            evidence=evidence,
            epsilon_only=bool(getattr(args, "epsilon_only", False)),
            **chosen,
        )
    except OfflineInputError as error:
        raise UsageError(str(error).replace("\n", " ")) from None
    except ValueError as error:
        raise UsageError(str(error).replace("\n", " ")) from None
    from .audit import emit_result

    return emit_result(result, args, sys.stderr if args.json == "-" else sys.stdout)
