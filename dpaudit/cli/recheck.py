"""``dpaudit recheck RESULT.json``: recheck an audit's evidence from first principles, or rerun it.

    dpaudit audit catalog:joint-no-half --json r.json
    dpaudit recheck r.json            # recomputed bounds, verdict; exact laws where known
    dpaudit recheck r.json --sampled  # fresh samples (the seed is printed; --seed repeats)
    dpaudit recheck r.json --rerun    # the whole audit again from spec + seed + options

A certificate of ``dpaudit worst-case --certify --certificate CERT.json`` (recognised by its
``format`` field) is rechecked by ``dpaudit.exact.certify.recheck_certificate``: every leaf bound
re-derived, the cover of every shape checked, and the pair of the lower end recomputed exactly
with the mechanism rebuilt from the certificate's ``mechanism_spec``. Exit status: 0 the
certificate holds, 1 it is refused (one line names the leaf or the uncovered gaps), 2 unreadable,
4 the recorded mechanism cannot be rebuilt.

Exit status: 0 the evidence is consistent (with a note when a recorded interval misses the
exact law within the audit's alpha: a genuine miss), 1 it is inconsistent or forged (one line
names what), 2 usage error, 3 interrupted, 4 could not run (the mechanism cannot be rebuilt, or
raised).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from .arguments import check_output_path, options_of
from .errors import UsageError
from .output import write_text

if TYPE_CHECKING:
    from dpaudit.recheck import RecheckResult
    from dpaudit.rerun import RerunResult


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "recheck",
        help="recheck an audit's evidence from its JSON result, or rerun the audit",
        description=(
            "Rebuild the audited mechanism from the JSON result of `dpaudit audit --json`, "
            "take the claim from it, recompute every bound, the headline figures and the "
            "verdict from the recorded hits, and test every confirmed event against the "
            "mechanism: exactly (dpaudit.exact) when its law is known and the histograms are "
            "small, else on fresh samples from a fresh seed. With --rerun, repeat the whole "
            "audit from its spec, seed and options and compare every field."
        ),
        epilog="Exit status: 0 the evidence is consistent (with a note when a recorded interval "
        "misses the exact law within the audit's alpha), 1 it is inconsistent or forged, 2 usage "
        "error, 3 interrupted, 4 could not run (the mechanism could not be rebuilt or raised).",
        allow_abbrev=False,
    )
    parser.add_argument(
        "result",
        metavar="RESULT.json",
        help="a result written by dpaudit audit --json, or a certificate written by "
        "dpaudit worst-case --certify --certificate",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="rerun the audit from spec + seed + options and compare the whole result",
    )
    parser.add_argument(
        "--samples", type=int, help="fresh samples per histogram (default: as recorded)"
    )
    parser.add_argument(
        "--seed", type=int, help="seed of the fresh samples (default: fresh entropy, printed)"
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=1e-3,
        help="level of the recheck's tests in all (default 0.001)",
    )
    parser.add_argument(
        "--sampled", action="store_true", help="re-sample even when an exact law exists"
    )
    parser.add_argument(
        "--allow-command",
        action="store_true",
        help="run the --command child the audit ran again (the result file names it)",
    )
    parser.add_argument(
        "--arithmetic",
        choices=("float", "interval"),
        default=None,
        help="certificates only: re-derive each leaf bound with the search's own bounds "
        "(float, the default) or with the second derivation in mpmath interval arithmetic",
    )
    parser.add_argument("--json", metavar="FILE", help="write the re-check as JSON ('-': stdout)")
    parser.set_defaults(handler=handle, known_options=options_of(parser))


def handle(args) -> int:
    from dpaudit.recheck import CannotRecheck, RecheckResult, recheck

    check_output_path(args.json, "--json")
    certificate = _certificate_data(args.result)
    if certificate is not None:
        return _recheck_certificate(args, certificate)
    if args.arithmetic is not None:
        raise UsageError("--arithmetic applies to a certificate (dpaudit worst-case --certify)")
    if args.samples is not None and args.samples < 1:
        raise UsageError("--samples must be >= 1")
    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must be in (0, 1), got {args.alpha!r}")
    if args.seed is not None and args.seed < 0:
        raise UsageError("--seed must be >= 0")
    if args.rerun and (args.sampled or args.samples is not None or args.seed is not None):
        raise UsageError(
            "--rerun repeats the recorded audit: it takes no --sampled/--samples/--seed"
        )
    outcome: RerunResult | RecheckResult
    try:
        if args.rerun:
            from dpaudit.rerun import rerun

            outcome = rerun(args.result, allow_command=args.allow_command)
        else:
            outcome = recheck(
                args.result,
                samples=args.samples,
                seed=args.seed,
                alpha=args.alpha,
                exact=False if args.sampled else None,
                allow_command=args.allow_command,
            )
    except CannotRecheck as error:
        print(f"dpaudit recheck: could not run: {error}", file=sys.stderr)
        return 4
    except ValueError as error:
        raise UsageError(str(error)) from None
    text = json.dumps(outcome.to_dict(), indent=2, ensure_ascii=False)
    if args.json == "-":
        write_text("-", text, "--json")
    else:
        print(outcome)
        if args.json:
            write_text(args.json, text, "--json")
    # A rerun's report is that one line already.
    if not outcome.agrees and isinstance(outcome, RecheckResult):
        print(f"dpaudit recheck: {outcome.first_problem}", file=sys.stderr)
    return 0 if outcome.agrees else 1


def _certificate_data(path: str) -> dict | None:
    """The file's JSON if it is a certificate (by its ``format`` field), else None."""
    from dpaudit.exact.certify.certificate import is_certificate

    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None  # the audit route reports an unreadable file
    return data if is_certificate(data) else None


def _recheck_certificate(args, data: dict) -> int:
    from dpaudit.exact.certify import read_certificate, recheck_certificate
    from dpaudit.provenance import rebuild_mechanism

    given = [
        name
        for name, value in (
            ("--rerun", args.rerun),
            ("--sampled", args.sampled),
            ("--samples", args.samples is not None),
            ("--seed", args.seed is not None),
            ("--allow-command", args.allow_command),
        )
        if value
    ]
    if given:
        raise UsageError(f"{', '.join(given)}: not for a certificate, which is rechecked exactly")
    try:
        read_certificate(args.result)  # refuses a newer version
    except ValueError as error:
        raise UsageError(str(error)) from None
    mechanism = None
    spec = data.get("mechanism_spec")
    if spec is not None:
        try:
            mechanism = rebuild_mechanism(spec)
        except (ValueError, TypeError, ImportError, AttributeError) as error:
            print(
                f"dpaudit recheck: could not run: cannot rebuild the mechanism: {error}",
                file=sys.stderr,
            )
            return 4
    try:
        check = recheck_certificate(data, mechanism, arithmetic=args.arithmetic or "float")
    except (KeyError, TypeError, ValueError) as error:
        raise UsageError(f"{args.result} is not a readable certificate: {error!r}") from None
    text = json.dumps(check.to_dict(), indent=2)
    if args.json == "-":
        write_text("-", text, "--json")
    else:
        print(check)
        if mechanism is None:
            print("the certificate records no mechanism spec: the lower end was not recomputed")
        if args.json:
            write_text(args.json, text, "--json")
    if not check.ok:
        print(f"dpaudit recheck: {check.problems[0]}", file=sys.stderr)
    return 0 if check.ok else 1
