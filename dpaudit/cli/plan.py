"""``dpaudit plan``: the plan of an offline audit, for systems the auditor cannot drive.

    dpaudit plan GumbelTopK --k 2 --epsilon 1 --samples 1000000 --out audit-dir
    dpaudit plan --claim 1,0 --width 2 --relation add-remove --domain-size 5 --out audit-dir
    (run the system; write audit-dir/outcomes/<id>.<split>.csv|jsonl|parquet)
    dpaudit audit --from-samples audit-dir

``--simulate FORMAT`` also writes the outcome files by sampling MECH itself (a dry run of
the whole pipeline). The rules that keep the bounds valid are in
[`dpaudit.auditor.offline`][dpaudit.auditor.offline]. ``dpaudit audit --from-samples DIR`` is
handled here too ([`handle_from_samples`][dpaudit.cli.plan.handle_from_samples]).
"""

from __future__ import annotations

import os
import shlex

from .arguments import (
    PLAN_SAMPLES,
    add_design_options,
    check_output_path,
    histogram,
    mechanism,
    options_of,
    pairs,
    parse_claim,
    parse_relation,
    positive_int,
    probability,
)
from .errors import UsageError
from .output import check_report_path, emit_result, summary_stream

__all__ = ["handle", "handle_from_samples", "register"]

#: Options of ``dpaudit audit`` that --from-samples takes from plan.json instead, with
#: their defaults (any other value is refused).
_FIXED_BY_PLAN = (
    ("mechanism", None, "MECH"),
    ("claim", None, "--claim"),
    ("width", None, "--width"),
    ("child_command", None, "--command"),
    ("samples", None, "--samples"),
    ("budget", None, "--budget"),
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
    ("values", 0, "--values"),
)


class _OfflineDefault:
    """A default kept in [`dpaudit.auditor.offline`][dpaudit.auditor.offline], read only when it is needed.

    ``dpaudit --help`` then does not import the auditor; ``dpaudit plan --help`` prints it.
    """

    def __init__(self, name: str):
        self.name = name

    def value(self):
        from dpaudit.auditor import offline

        return getattr(offline, self.name)

    def __str__(self) -> str:
        return str(self.value())


def _resolved(value):
    return value.value() if isinstance(value, _OfflineDefault) else value


def register(subparsers) -> None:
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
        epilog="Exit status: 0 plan written, 2 usage error, 3 interrupted, 4 could not run.",
        allow_abbrev=False,
    )
    add_design_options(parser, planning=True)
    parser.add_argument("--out", metavar="DIR", required=True, help="directory of the plan")
    parser.add_argument(
        "--keep", type=positive_int, default=2, help="pairs kept for confirmation (default 2)"
    )
    parser.add_argument(
        "--events-per-pair",
        type=positive_int,
        default=3,
        help="events confirmed per kept pair (default 3)",
    )
    parser.add_argument(
        "--max-pairs",
        type=positive_int,
        default=_OfflineDefault("DEFAULT_MAX_PAIRS"),
        help="candidate pairs (default %(default)s)",
    )
    parser.add_argument(
        "--select-share",
        type=probability,
        default=_OfflineDefault("DEFAULT_SELECT_SHARE"),
        help="share of the samples in the select split (default %(default)s)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing DIR/plan.json")
    parser.add_argument(
        "--simulate",
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


def handle(args) -> int:
    _check_arguments(args)
    claim = parse_claim(args.claim)
    relation = parse_relation(args.relation)
    mech, options = _mechanism_and_options(args, claim)
    samples = args.samples if args.samples is not None else options.pop("samples", PLAN_SAMPLES)
    options.pop("samples", None)
    if args.domain_size is not None:
        options["domain_size"] = args.domain_size
    counts = histogram(args.counts, "--counts") if args.counts is not None else None
    given_pairs = pairs(args.pair)
    from .preflight import check_memory

    check_memory(mech, domain_size=args.domain_size, counts=counts, samples=samples)
    plan = _write_plan(args, mech, claim, relation, (counts, given_pairs), samples, options)
    _print_plan(args, plan)
    return 0


def _check_arguments(args) -> None:
    """Refuse an --out that is not a directory, an unknown --simulate format, and
    --restrict-to-given without given pairs."""
    out = args.out
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out: {out!r} is not a directory")
    check_output_path(os.path.join(out, "plan.json") if os.path.isdir(out) else out, "--out")
    if args.simulate is not None and args.simulate not in ("csv", "jsonl", "parquet"):
        raise UsageError(f"--simulate: expected csv, jsonl or parquet, got {args.simulate!r}")
    if args.restrict_to_given and args.counts is None and not args.pair:
        raise UsageError("--restrict-to-given needs --counts or --pair")


def _mechanism_and_options(args, claim) -> tuple:
    """MECH (None without it: then --claim and --width are needed) and the catalog
    entry's audit options it brings (``domain_size``, ``samples``)."""
    extra = list(getattr(args, "extra", []))
    known = getattr(args, "known_options", [])
    options = {}
    if args.mechanism is None:
        if extra:
            from .arguments import unknown_option_message

            raise UsageError(unknown_option_message(extra[0], known))
        if claim is None or args.width is None:
            raise UsageError("give MECH, or --claim EPS,DELTA and --width N")
        mech = None
    else:
        mech, entry = mechanism(args, extra, known)
        if entry is not None:
            options = {
                k: v for k, v in entry.audit_options.items() if k in ("domain_size", "samples")
            }
    if args.simulate and mech is None:
        raise UsageError("--simulate needs MECH (the mechanism to sample)")
    return mech, options


def _write_plan(args, mech, claim, relation, given, samples, options) -> dict:
    """Write the plan (and with --simulate its outcome files) to --out; return the plan.

    ``given`` is ``(counts, pairs)``: the histogram and the pairs given on the command line.
    """
    out = args.out
    counts, given_pairs = given
    from dpaudit.auditor.offline import OfflineInputError, fill_outcomes, write_plan

    try:
        plan = write_plan(
            out,
            mech,
            overwrite=args.force,
            claim=claim,
            width=args.width,
            neighbours=relation,
            counts=counts,
            pairs=given_pairs,
            restrict=args.restrict_to_given,
            samples=samples,
            alpha=args.alpha,
            seed=args.seed,
            keep=args.keep,
            events_per_pair=args.events_per_pair,
            max_pairs=_resolved(args.max_pairs),
            select_share=_resolved(args.select_share),
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
    return plan


def _print_plan(args, plan) -> None:
    """What was written, and what to do next (nothing, after --simulate, but audit)."""
    out = args.out
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
    check_report_path(args.report)
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
    return emit_result(result, args, summary_stream(args))
