"""``dpaudit audit``: audit a mechanism as a black box from its sampler alone.

    dpaudit audit                                  # built-in default, < 1 min
    dpaudit audit LimitDomain --k 3 --kbar 10 --epsilon 1 --delta 1e-6 --samples 5000000
    dpaudit audit GumbelTopK --k 2 --epsilon 0.5 --counts 5,4,4,1 --json out.json --report out.html
    dpaudit audit catalog:joint-no-half            # a deliberately broken mechanism: exit 1

Exit status: 0 passed (no violation, and the audit had power), 1 violation, 2 usage
error, 3 inconclusive (no violation found, but no power, or interrupted).
"""

from __future__ import annotations

import json
import shlex
import sys

from mechanisms import AddRemoveUser, BoundedChange

from . import EXIT_STATUSES, UsageError, check_output_path, options_of, write_text
from .mechanism_args import build_mechanism, mechanism_classes

#: The README's main job: what ``dpaudit audit`` with no arguments audits.
DEFAULT_MECHANISMS = (
    ("LimitDomain", {"k": 3, "kbar": 10, "epsilon": 1.0, "delta": 1e-6}),
    ("GumbelTopK", {"k": 3, "epsilon": 1.0}),
)
#: The auditor's default budget (dpaudit.auditor.DEFAULT_SAMPLES, not imported at start-up).
DEFAULT_SAMPLES = 50_000_000


def default_mechanism():
    """LimitDomain(k=3, kbar=10, ε=1, δ=1e-6), or GumbelTopK(k=3, ε=1) if it is not available."""
    classes = mechanism_classes()
    for name, params in DEFAULT_MECHANISMS:
        if name in classes:
            return classes[name](**params)
    raise UsageError("no default mechanism is available; name one (see `dpaudit mechanisms`)")


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
    parser.add_argument(
        "mechanism",
        nargs="?",
        metavar="MECH",
        help="mechanism class name (see `dpaudit mechanisms`), catalog:NAME, or "
        "package.module:attr (a mechanism, a factory, or a function with "
        "--claim and --width)",
    )
    parser.add_argument(
        "--claim",
        metavar="EPS,DELTA",
        help="the claim of a module:attr function (or to audit instead of a mechanism's own)",
    )
    parser.add_argument("--width", type=int, help="longest outcome of a module:attr function")
    parser.add_argument(
        "--values",
        type=int,
        default=0,
        metavar="N",
        help="real values a module:attr function releases per outcome (it then "
        "returns (items, values), or with --width 0 just the values)",
    )
    parser.add_argument(
        "--command",
        metavar="CMD",
        dest="child_command",
        help="audit a child process speaking JSON lines (any language; see "
        "dpaudit.auditor.subprocess_mechanism), with --claim and --width",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds a --command child may take per answer (default 60)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=None,
        help=f"total samples, all phases (default {DEFAULT_SAMPLES:,}, or the catalog entry's own)",
    )
    parser.add_argument(
        "--budget",
        metavar="N|Ts",
        help="the budget as samples (2e7) or wall-clock seconds (60s); never exceeded "
        "(instead of --samples)",
    )
    parser.add_argument(
        "--epsilon-only",
        action="store_true",
        help="accept a pass on epsilon alone when the budget cannot resolve the claimed "
        "delta (recorded in the result)",
    )
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="failure probability (default 0.05)"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="sampling processes (default 1)")
    parser.add_argument(
        "--counts", help="a histogram whose neighbours are added to the pairs, e.g. 5,4,4,1"
    )
    parser.add_argument(
        "--pair",
        action="append",
        metavar="C;C2",
        help="a neighbouring pair added to the pairs, e.g. '1,1,0;2,1,0' (repeatable)",
    )
    parser.add_argument(
        "--restrict-to-given",
        action="store_true",
        help="screen only the --counts/--pair given, not the default families",
    )
    parser.add_argument(
        "--relation",
        metavar="REL",
        help="neighbours to audit under: add-remove, add-remove:DELTA, "
        "bounded-change:M (default: the mechanism's claim)",
    )
    parser.add_argument(
        "--domain-size",
        type=int,
        metavar="D",
        help="items of the default histograms (default: from the mechanism)",
    )
    parser.add_argument(
        "--power-factor",
        type=float,
        default=None,
        help="a pass needs a detectable epsilon and delta <= this x the claim (default 1.25)",
    )
    parser.add_argument(
        "--dask",
        metavar="local[:N]",
        help="sample on a Dask LocalCluster of N worker processes (default 2); "
        "needs the dask extra",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="sample on a running Dask cluster, e.g. tcp://HOST:8786",
    )
    parser.add_argument(
        "--resume",
        metavar="FILE",
        help="checkpoint to FILE (DuckDB); rerun with the same FILE to continue an "
        "interrupted audit with the same result",
    )
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
        "--report", metavar="FILE", help="write a Markdown (.md) or HTML (.html) report"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def _histogram(text: str, option: str):
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise UsageError(
            f"{option}: cannot read {text!r}: expected comma-separated integers"
        ) from None
    if not values:
        raise UsageError(f"{option}: empty histogram {text!r}")
    return values


def parse_relation(text: str | None):
    """``add-remove``, ``add-remove:3``, ``bounded-change:1`` -> a relation (None: the claim's)."""
    if text is None:
        return None
    name, _, value = text.partition(":")
    try:
        if name == "add-remove":
            return AddRemoveUser(int(value) if value else None)
        if name == "bounded-change":
            return BoundedChange(int(value) if value else 1)
    except ValueError:
        pass
    raise UsageError(
        f"--relation: cannot read {text!r}; use add-remove, add-remove:DELTA or "
        "bounded-change:M with positive integers"
    )


def _mechanism(args, extra, known):
    """The mechanism to audit, its catalog entry (or None), and the entry's audit options."""
    if args.child_command is not None:
        if args.mechanism is not None:
            raise UsageError("give a mechanism name or --command, not both")
        claim = _parse_claim(args.claim)
        if claim is None or args.width is None:
            raise UsageError("--command needs --claim EPS,DELTA and --width N")
        from dpaudit.auditor.blackbox import make_claim
        from dpaudit.auditor.subprocess_mechanism import SubprocessMechanism

        relation = parse_relation(args.relation) or AddRemoveUser()
        try:
            return SubprocessMechanism(
                args.child_command,
                make_claim((*claim, relation)),
                args.width,
                args.timeout,
                args.values,
            ), None
        except ValueError as error:
            raise UsageError(str(error)) from None
    if args.mechanism is None:
        if extra:
            from . import unknown_option_message

            raise UsageError(unknown_option_message(extra[0], known))
        return default_mechanism(), None
    if args.mechanism.startswith("-"):
        raise UsageError(f"expected a mechanism name, got {args.mechanism!r}")
    if not args.mechanism.startswith("catalog:") and extra:
        # `dpaudit audit --sample 5` makes argparse take 5 for the mechanism: name the option.
        from . import unknown_option_message
        from .mechanism_args import find_mechanism_class

        try:
            find_mechanism_class(args.mechanism)
        except UsageError:
            option = next((t for t in extra if t.startswith("--")), None)
            if option is not None:
                raise UsageError(unknown_option_message(option, known)) from None
            raise
    if ":" in args.mechanism and not args.mechanism.startswith("catalog:"):
        if extra:
            from . import unknown_option_message

            raise UsageError(unknown_option_message(extra[0], known))
        return _user_mechanism(args), None
    if args.mechanism.startswith("catalog:"):
        from dpaudit.catalog import catalog_entry

        if extra:
            from . import unknown_option_message

            raise UsageError(
                unknown_option_message(extra[0], known) + "; catalog entries take no parameters"
            )
        try:
            entry = catalog_entry(args.mechanism.split(":", 1)[1])
        except KeyError as error:
            raise UsageError(str(error.args[0])) from None
        return entry.build(), entry
    return build_mechanism(args.mechanism, extra, known), None


def _dask_client(args):
    """A Dask client for --dask local[:N] or --scheduler ADDRESS, or None."""
    if args.dask is None and args.scheduler is None:
        return None
    if args.dask is not None and args.scheduler is not None:
        raise UsageError("give --dask or --scheduler, not both")
    try:
        from dask.distributed import Client
    except ImportError:
        raise UsageError("Dask is not installed: pip install 'dpaudit[dask]'") from None
    if args.scheduler is not None:
        try:
            return Client(args.scheduler, timeout="10s")
        except OSError as error:
            raise UsageError(f"--scheduler: cannot reach {args.scheduler!r}: {error}") from None
    name, _, count = args.dask.partition(":")
    if name != "local" or (count and not count.isdigit()) or count == "0":
        raise UsageError(f"--dask: expected local or local:N with N >= 1, got {args.dask!r}")
    from dpaudit.auditor.dask_executor import local_cluster_client

    return local_cluster_client(int(count) if count else 2)


def _parse_claim(text):
    if text is None:
        return None
    try:
        parts = [float(v) for v in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) != 2:
        raise UsageError(f"--claim wants EPS,DELTA (two numbers), got {text!r}")
    return tuple(parts)


def _user_mechanism(args):
    """``package.module:attr``: a mechanism, a factory of one, or a per-call/batched function."""
    import importlib
    import inspect
    import os

    from dpaudit.auditor.blackbox import as_auditable

    module_name, _, attr = args.mechanism.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the user's own modules import
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"cannot import {module_name!r}: {error}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    claim = _parse_claim(args.claim)
    if hasattr(obj, "sample") and hasattr(obj, "claim"):
        return obj
    if not callable(obj):
        raise UsageError(f"{args.mechanism} is neither a mechanism nor a function")
    try:
        parameters = [
            p
            for p in inspect.signature(obj).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        parameters = []
    if not parameters:  # a factory (or a class with defaults): build the mechanism
        built = obj()
        if hasattr(built, "sample") and hasattr(built, "claim"):
            return built
        raise UsageError(f"{args.mechanism}() returned {type(built).__name__}, not a mechanism")
    if len(parameters) not in (2, 3):
        raise UsageError(
            f"{args.mechanism} takes {len(parameters)} arguments: a per-call function "
            "takes (counts, rng), a batched one (counts, size, rng)"
        )
    if claim is None or args.width is None:
        raise UsageError(f"{args.mechanism} is a function: give --claim EPS,DELTA and --width N")
    relation = parse_relation(args.relation) or AddRemoveUser()
    try:
        mech, _, _ = as_auditable(
            obj,
            (*claim, relation),
            args.width,
            args.mechanism,
            batched=len(parameters) == 3,
            values=args.values,
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    return mech


def _close_dask_client(client, args) -> None:
    """Close the client, and the LocalCluster too when --dask started one."""
    if client is None:
        return
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None and args.dask:
        cluster.close()


def _parameters_line(mech) -> str | None:
    """Per-selection parameters next to the total claim, so the two ε are not confused."""
    epsilon = getattr(mech, "epsilon", None)
    if not isinstance(epsilon, (int, float)):
        return None
    claim = mech.claim
    return (
        f"parameters: epsilon={epsilon:g} is the mechanism's own (per-selection) epsilon; "
        f"the total claim audited is ({claim.epsilon:.6g}, {claim.delta:.6g})"
    )


def handle(args) -> int:
    if getattr(args, "from_samples", None) is not None:  # offline: files, no mechanism to drive
        from .plan import handle_from_samples

        return handle_from_samples(args)
    extra = list(getattr(args, "extra", []))
    known = getattr(args, "known_options", [])
    check_output_path(args.json, "--json")
    check_output_path(args.report, "--report")
    check_output_path(args.resume, "--resume")
    if args.report == "-":
        raise UsageError("--report needs a file name (.md or .html)")
    mech, entry = _mechanism(args, extra, known)
    relation = parse_relation(args.relation)
    pairs = None
    if args.pair:
        pairs = []
        for text in args.pair:
            if ";" not in text:
                raise UsageError(f"--pair wants 'C;C2', got {text!r}")
            a, b = text.split(";", 1)
            pairs.append((_histogram(a, "--pair"), _histogram(b, "--pair")))
    counts = _histogram(args.counts, "--counts") if args.counts else None
    options = dict(entry.audit_options) if entry is not None else {}
    samples = options.pop("samples", DEFAULT_SAMPLES) if args.samples is None else args.samples
    if args.budget is not None:
        if args.samples is not None:
            raise UsageError("give --budget or --samples (the same budget), not both")
        options["budget"], samples = args.budget, None
    if args.power_factor is not None:
        options["power_factor"] = args.power_factor
    if args.epsilon_only:
        options["epsilon_only"] = True
    if args.domain_size is not None:
        options["domain_size"] = args.domain_size
    if args.restrict_to_given and counts is None and pairs is None:
        raise UsageError("--restrict-to-given needs --counts or --pair")
    evidence = {"command": "dpaudit " + " ".join(shlex.quote(a) for a in getattr(args, "argv", []))}
    if entry is not None:
        evidence["catalog"] = {"name": entry.name, "bug": entry.bug, "reference": entry.reference}

    from dpaudit.auditor import audit

    claim_override = None
    if (
        args.claim is not None
        and args.child_command is None
        and ":" not in (args.mechanism or "").replace("catalog:", "")
    ):
        claim_override = _parse_claim(args.claim)
    client = _dask_client(args)
    try:
        result = audit(
            mech,
            samples=samples,
            alpha=args.alpha,
            seed=args.seed,
            workers=args.workers,
            counts=counts,
            pairs=pairs,
            restrict=args.restrict_to_given,
            neighbours=relation,
            client=client,
            resume=args.resume,
            claim=claim_override,
            progress=not args.no_progress and sys.stderr.isatty(),
            evidence=evidence,
            **options,
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    except RuntimeError as error:  # a --command child that crashed or hung
        from dpaudit.auditor.subprocess_mechanism import ChildMechanismError

        if isinstance(error, ChildMechanismError):
            raise UsageError(str(error).replace("\n", " ")) from None
        raise
    finally:
        _close_dask_client(client, args)
        if hasattr(mech, "close"):
            mech.close()
    # With --json - stdout carries the JSON alone; the summary goes to stderr.
    summary = sys.stderr if args.json == "-" else sys.stdout
    line = _parameters_line(mech)
    if line:
        print(line, file=summary)
    return emit_result(result, args, summary)


def emit_result(result, args, summary) -> int:
    """Print the result, write ``--json`` and ``--report``; return the exit status."""
    print(result, file=summary)
    if args.json:
        write_text(args.json, json.dumps(result.to_dict(), indent=2, ensure_ascii=False), "--json")
    if args.report:
        from dpaudit.report import to_html, to_markdown

        page = (
            to_html(result)
            if args.report.lower().endswith((".html", ".htm"))
            else to_markdown(result)
        )
        write_text(args.report, page, "--report")
    return result.exit_status
