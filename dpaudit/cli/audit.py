"""``dpaudit audit``: audit a mechanism as a black box from its sampler alone.

    dpaudit audit                                  # built-in default, < 1 min
    dpaudit audit LimitDomain --k 3 --kbar 10 --epsilon 1 --delta 1e-6 --samples 5000000
    dpaudit audit GumbelTopK --k 2 --epsilon 0.5 --counts 5,4,4,1 --json out.json --report out.html
    dpaudit audit catalog:joint-no-half            # a deliberately broken mechanism: exit 1

Exit status: 0 passed (no violation, and the audit had power), 1 violation, 2 usage
error, 3 inconclusive (no violation found, but no power, or interrupted), 4 could not run.
Every option is checked (and the memory the audit needs estimated) before any sampling.
"""

from __future__ import annotations

import shlex
import sys

from .arguments import (
    DEFAULT_SAMPLES,
    ENTRY_PREFIXES,
    add_design_options,
    check_output_path,
    histogram,
    mechanism,
    options_of,
    pairs,
    parse_claim,
    parse_relation,
    positive_float,
    positive_int,
    power_factor,
)
from .dask_options import check_dask_options, close_dask_client, dask_client
from .errors import EXIT_STATUSES, UsageError, could_not_run, is_interrupt
from .output import check_report_path, emit_result, parameters_line, summary_stream

__all__ = ["handle", "register"]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="audit a mechanism's privacy claim as a black box",
        description=(
            "Audit MECH (default: LimitDomain k=3 kbar=10 epsilon=1 delta=1e-6) from its sampler "
            "alone: search for where its output changes, screen neighbouring pairs, choose "
            "events, and bound epsilon and delta on fresh samples with one-sided "
            "Clopper-Pearson intervals. Mechanism parameters follow as --PARAM VALUE."
        ),
        epilog=EXIT_STATUSES,
        allow_abbrev=False,
    )
    add_design_options(parser, planning=False)
    _add_sampling_options(parser)
    _add_output_options(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def _add_sampling_options(parser) -> None:
    """Where and how the mechanism is sampled: a child process, workers, Dask, a checkpoint."""
    parser.add_argument(
        "--command",
        metavar="CMD",
        dest="child_command",
        help="audit a child process speaking JSON lines (any language; see "
        "dpaudit.auditor.sources.subprocess_mechanism), with --claim and --width",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=60.0,
        help="seconds a --command child may take per answer (default 60)",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="sampling processes (default 1)"
    )
    parser.add_argument(
        "--power-factor",
        type=power_factor,
        default=None,
        help="a pass needs a detectable epsilon and delta <= this x the claim (default 1.25)",
    )
    parser.add_argument(
        "--dask",
        metavar="local[:N]",
        help="sample on a Dask LocalCluster of N worker processes (default 2); "
        "needs the dask extra; not with --resume",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="sample on a running Dask cluster, e.g. tcp://HOST:8786; not with --resume",
    )
    parser.add_argument(
        "--resume",
        metavar="FILE",
        help="checkpoint to FILE (DuckDB); rerun with the same FILE to continue an "
        "interrupted audit with the same result (samples in this process or --workers)",
    )


def _add_output_options(parser) -> None:
    """Offline bounds from files, the result written, and a baseline re-tested."""
    parser.add_argument(
        "--from-samples",
        metavar="DIR",
        help="offline audit: bounds from the outcome files of a `dpaudit plan` "
        "directory (its plan.json fixes the claim, pairs and alpha)",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="write the result as JSON ('-': stdout, JSON only)"
    )
    parser.add_argument(
        "--report", metavar="FILE", help="write a report: Markdown to FILE.md, HTML to FILE.html"
    )
    parser.add_argument(
        "--baseline",
        metavar="OLD.json",
        help="after the audit, re-test every (pair, event) of OLD.json (an earlier `dpaudit "
        "audit --json` of the same claim) on this mechanism, as `dpaudit compare OLD.json` does; "
        "a significantly worse privacy loss on one of them exits 1, as a VIOLATION does",
    )


def _check_options(args) -> None:
    """Everything that can be refused from the options alone, before the mechanism is built."""
    check_output_path(args.json, "--json")
    check_report_path(args.report)
    check_output_path(args.resume, "--resume")
    check_dask_options(args)
    if args.resume is not None and (args.dask is not None or args.scheduler is not None):
        option = "--dask" if args.dask is not None else "--scheduler"
        raise UsageError(
            f"--resume works with local sampling only, not with {option}; drop one "
            "(--workers N samples in N local processes and resumes)"
        )
    if args.workers > 1 and (args.dask is not None or args.scheduler is not None):
        raise UsageError("--workers applies to local sampling; with --dask or --scheduler drop it")
    if args.child_command is None and args.timeout != 60.0:
        raise UsageError("--timeout applies to --command children only; drop it")
    if args.restrict_to_given and args.counts is None and not args.pair:
        raise UsageError("--restrict-to-given needs --counts or --pair")
    if args.baseline is not None:
        _baseline(args)  # refuse an unreadable baseline before the audit spends its budget


def _check_design(mech, args, counts, given_pairs, samples) -> None:
    """Refuse a design the mechanism cannot be audited under, with the option to change."""
    from .preflight import audit_domain, check_memory

    d, option = audit_domain(mech, args.domain_size, counts)
    k = getattr(mech, "k", None)
    if isinstance(k, int) and not isinstance(k, bool) and k > d and option != "--k":
        raise UsageError(
            f"{option}: {d} items, fewer than the k={k} the mechanism selects; "
            f"give at least {k} items"
        )
    if counts is not None and args.domain_size is not None and len(counts) != args.domain_size:
        raise UsageError(
            f"--counts has {len(counts)} items but --domain-size is {args.domain_size}; "
            "give one, or make them agree"
        )
    if given_pairs and counts is not None and len(given_pairs[0][0]) != len(counts):
        raise UsageError("--pair and --counts histograms have different lengths; make them agree")
    check_memory(mech, domain_size=args.domain_size, counts=counts, samples=samples)


def handle(args) -> int:
    if getattr(args, "from_samples", None) is not None:  # offline: files, no mechanism to drive
        from .plan import handle_from_samples

        return handle_from_samples(args)
    _check_options(args)
    extra = list(getattr(args, "extra", []))
    known = getattr(args, "known_options", [])
    relation = parse_relation(args.relation)
    given_pairs = pairs(args.pair)
    counts = histogram(args.counts, "--counts") if args.counts is not None else None
    claim_override = None
    if args.claim is not None and args.child_command is None:
        name = args.mechanism or ""
        user_code = ":" in name and not name.startswith(ENTRY_PREFIXES)
        claim_override = None if user_code else parse_claim(args.claim)
    mech, entry = mechanism(args, extra, known)
    try:
        return _audit(mech, entry, args, relation, given_pairs, counts, claim_override)
    finally:
        if hasattr(mech, "close"):
            mech.close()


def _audit(mech, entry, args, relation, given_pairs, counts, claim_override) -> int:
    options, samples = _options(entry, args)
    _check_design(mech, args, counts, given_pairs, samples or DEFAULT_SAMPLES)
    evidence = _evidence(entry, args)
    from dpaudit.auditor import audit

    client = dask_client(args)
    try:
        result = audit(
            mech,
            samples=samples,
            alpha=args.alpha,
            seed=args.seed,
            workers=args.workers,
            counts=counts,
            pairs=given_pairs,
            restrict=args.restrict_to_given,
            neighbours=relation,
            client=client,
            resume=args.resume,
            claim=claim_override,
            progress=not args.no_progress and sys.stderr.isatty(),
            evidence=evidence,
            **options,
        )
    except (KeyboardInterrupt, UsageError):
        raise
    except Exception as error:
        if is_interrupt(error):
            raise KeyboardInterrupt from None
        raise _audit_error(error) from None
    finally:
        close_dask_client(client, args)
    summary = summary_stream(args)
    line = parameters_line(mech)
    if line:
        print(line, file=summary)
    status = emit_result(result, args, summary)
    if args.baseline is None:
        return status
    comparison = _compare_with_baseline(mech, result, args)
    print(comparison, file=summary)
    # Worse than the baseline fails the run as a VIOLATION does; otherwise the audit's own status.
    return comparison.exit_status if comparison.exit_status == 1 else status


def _options(entry, args) -> tuple[dict, int | None]:
    """The audit's keyword options from the command line and a catalog or corpus entry, and
    its samples (None with --budget)."""
    options = dict(entry.audit_options) if entry is not None else {}
    # An entry's own budget is a default: --samples (or --budget) replaces it.
    entry_samples = options.pop("samples", DEFAULT_SAMPLES)
    samples = entry_samples if args.samples is None else args.samples
    if args.budget is not None:
        if args.samples is not None:
            raise UsageError("give --budget or --samples (the same budget), not both")
        options["budget"], samples = args.budget, None
    if args.power_factor is not None:
        options["power_factor"] = args.power_factor
    if args.epsilon_only:
        options["epsilon_only"] = True
    if args.refine:
        options["refine"] = True
    if getattr(args, "black_box", False):
        options["black_box"] = True
    if args.domain_size is not None:
        options["domain_size"] = args.domain_size
    return options, samples


def _evidence(entry, args) -> dict:
    """What the result records of how it was run: the command, the entry, the source."""
    evidence: dict = {
        "command": "dpaudit " + " ".join(shlex.quote(a) for a in getattr(args, "argv", []))
    }
    if entry is not None:
        collection = args.mechanism.partition(":")[0]  # "catalog" or "corpus"
        evidence[collection] = {"name": entry.name, "bug": entry.bug, "reference": entry.reference}
    from dpaudit.user_source import source_record

    if (source := source_record(args)) is not None:  # module:attr or --command: for recheck
        evidence["mechanism_source"] = source
    return evidence


def _baseline(args) -> dict:
    """OLD.json of ``--baseline``, read as `dpaudit compare` reads it (a usage error if not)."""
    from dpaudit.auditor import AuditResult
    from dpaudit.recheck import load_result_data

    try:
        data = load_result_data(args.baseline)
        AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        reason = f"no field {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
        raise UsageError(
            f"--baseline: cannot read {args.baseline}: {reason}; give the JSON that "
            "`dpaudit audit --json FILE` wrote"
        ) from None
    if args.from_samples is not None:
        raise UsageError("--baseline re-tests a mechanism; an offline audit has none: drop it")
    return data


def _compare_with_baseline(mech, result, args):
    """``compare_with_baseline`` of ``--baseline`` on the audited mechanism.

    The baseline must have audited this audit's claim and relation. The re-test's samples come
    from the comparison's own stream (``dpaudit.compare.COMPARE_KEY``) of the audit's seed, so
    they are fresh for the audit's bounds and the run repeats with ``--seed``.
    """
    from dpaudit.auditor import AuditResult
    from dpaudit.compare import (
        CannotRecheck,
        IncomparableResults,
        compare_with_baseline,
        require_same_claim,
    )

    baseline = _baseline(args)
    try:
        require_same_claim(AuditResult.from_dict(baseline), result)
        return compare_with_baseline(baseline, mech, seed=args.seed)
    except IncomparableResults as error:
        raise UsageError(f"--baseline: {error}") from None
    except CannotRecheck as error:
        cause = error.__cause__
        raise could_not_run(cause if cause is not None else error) from None


def _audit_error(error: Exception) -> Exception:
    """A usage error for the auditor's refusal of an option; could-not-run for anything else.

    A ValueError raised before any user frame ran is the auditor refusing an argument (exit 2);
    one raised inside the mechanism, a crashed ``--command`` child, a MemoryError or a
    DuckDB failure is exit 4, with where the mechanism raised it.
    """
    from .errors import user_frame

    if isinstance(error, ValueError) and user_frame(error) is None and not _while_sampling(error):
        return UsageError(" ".join(str(error).split()))
    return could_not_run(error)


#: Modules of the auditor that draw samples: an error raised through them came from the
#: mechanism's output (a bad batch, a crashed child), not from the options.
_SAMPLING_MODULES = ("sampling.py", "executors.py", "dask_executor.py", "subprocess_mechanism.py")


def _while_sampling(error: BaseException) -> bool:
    import traceback

    if type(error.__cause__).__name__ == "_RemoteTraceback":  # raised in a worker process
        return True
    frames = traceback.extract_tb(error.__traceback__)
    return any(frame.filename.endswith(_SAMPLING_MODULES) for frame in frames)
