"""``dpaudit compare OLD.json [NEW.json]``: did this change break privacy? (issue 46)

    dpaudit compare old.json new.json                                 # two stored audits
    dpaudit compare old.json --mechanism "PermuteAndFlip --epsilon 2"  # re-test on the new one
    dpaudit compare old.json                     # re-test on OLD's mechanism as installed now

Two stored audits of one claim are compared on the (pair, event)s both confirmed; a re-test
draws every (pair, event) of OLD.json again, on fresh samples, from the new mechanism (given
with ``--mechanism``, or rebuilt from OLD.json's spec by the code installed now) and compares
the counts with OLD.json's. Each (pair, event) gets a one-sided test that its privacy loss
grew (``dpaudit.compare.growth_p_value``: Wald tests on counts + 1/2, Bonferroni over the
(pair, event)s).

Exit status: 0 no significant change, 1 the new version is significantly worse on some
(pair, event), 2 usage error (unreadable file, different claims or relations), 3 nothing to
compare (no (pair, event) in both files) or interrupted, 4 could not run (the new mechanism
cannot be built or raised).
"""

from __future__ import annotations

import argparse

from .arguments import check_output_path, nonnegative_int, options_of, positive_int, probability
from .errors import UsageError
from .output import summary_stream, write_json

__all__ = ["handle", "register"]

#: The comparison's level when --alpha is not given (``dpaudit.compare.DEFAULT_ALPHA``, not
#: imported at start-up).
DEFAULT_ALPHA = 0.01


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="did a change break privacy? compare two audits of one claim, event by event",
        description=(
            "Compare OLD.json (written by `dpaudit audit --json`) with NEW.json, an audit of "
            "the same claim, on the (pair, event)s both confirmed; or, without NEW.json, draw "
            "every (pair, event) of OLD.json again on fresh samples of the new mechanism "
            "(--mechanism, default: OLD.json's mechanism rebuilt by the code installed now). "
            "Each (pair, event) gets a one-sided Wald test that its privacy loss |ln(P/Q)| "
            "(and its delta at the claimed epsilon, when delta > 0) grew; Bonferroni over them."
        ),
        epilog="Exit status: 0 no significant change, 1 significantly worse, 2 usage error "
        "(unreadable file, different claims or relations), 3 nothing to compare or "
        "interrupted, 4 could not run (the new mechanism could not be built or raised).",
        allow_abbrev=False,
    )
    parser.add_argument("old", metavar="OLD.json", help="the baseline: dpaudit audit --json")
    parser.add_argument(
        "new", metavar="NEW.json", nargs="?", help="an audit of the new version, same claim"
    )
    _add_retest_options(parser)
    parser.add_argument(
        "--alpha",
        type=probability,
        default=DEFAULT_ALPHA,
        help=f"level of the comparison in all (default {DEFAULT_ALPHA:g})",
    )
    parser.add_argument(
        "--allow-command",
        action="store_true",
        help="re-test: run the --command child OLD.json's audit ran (its new version)",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="write the comparison as JSON ('-': stdout, JSON only)"
    )
    parser.set_defaults(
        handler=handle, accepts_mechanism_params=True, known_options=options_of(parser)
    )


def _add_retest_options(parser) -> None:
    """Without NEW.json: the mechanism re-tested, its width, samples and seed."""
    parser.add_argument(
        "--mechanism",
        metavar="MECH",
        help="re-test on this mechanism: a class name with its parameters, quoted "
        '("PermuteAndFlip --epsilon 2") or following, catalog:NAME, corpus:NAME or '
        "package.module:attr (a function takes OLD.json's claim and width)",
    )
    parser.add_argument(
        "--width",
        type=positive_int,
        help="re-test: the longest outcome of a package.module:attr function (default: "
        "OLD.json's, when its audit recorded one)",
    )
    parser.add_argument(
        "--samples",
        type=positive_int,
        help="re-test: fresh samples per histogram (default: the most OLD.json drew on it)",
    )
    parser.add_argument(
        "--seed",
        type=nonnegative_int,
        help="re-test: seed of the fresh samples (default: fresh entropy, printed)",
    )


def _check_options(args) -> None:
    check_output_path(args.json, "--json")
    extra = list(getattr(args, "extra", []))
    if extra and args.mechanism is None:
        from .arguments import unknown_option_message

        raise UsageError(
            unknown_option_message(extra[0], args.known_options)
            + "; mechanism parameters follow --mechanism MECH (e.g. --mechanism "
            "'PermuteAndFlip --epsilon 2')"
        )
    if args.new is not None:
        given = [
            option
            for option, value in (
                ("--mechanism", args.mechanism),
                ("--width", args.width),
                ("--samples", args.samples),
                ("--seed", args.seed),
                ("--allow-command", args.allow_command or None),
            )
            if value is not None
        ]
        if given:
            raise UsageError(
                f"{given[0]} applies to a re-test; with NEW.json the two stored audits are "
                f"compared: drop {given[0]}, or drop NEW.json to re-test"
            )


def _new_mechanism(args, baseline: dict):
    """The mechanism --mechanism names (None: rebuilt from OLD.json's spec)."""
    if args.mechanism is None:
        return None
    import shlex

    from .arguments import mechanism

    try:
        tokens = shlex.split(args.mechanism)
    except ValueError as error:
        raise UsageError(f"--mechanism: cannot read {args.mechanism!r}: {error}") from None
    if not tokens:
        raise UsageError("--mechanism: empty; name a mechanism, e.g. 'PermuteAndFlip --epsilon 2'")
    # A package.module:attr function takes the baseline's claim, relation and outcome width.
    evidence = baseline.get("evidence") or {}
    source = evidence.get("mechanism_source") or {}
    options = evidence.get("options") or {}
    claim = baseline.get("claim") or {}
    spec = argparse.Namespace(
        mechanism=tokens[0],
        child_command=None,
        claim=f"{claim.get('epsilon')},{claim.get('delta')}" if claim else None,
        width=args.width if args.width is not None else source.get("width", options.get("width")),
        values=source.get("values", options.get("values")) or 0,
        relation=source.get("relation"),
        timeout=60.0,
    )
    built, _ = mechanism(spec, [*tokens[1:], *args.extra], args.known_options)
    return built


def _load(path: str, label: str) -> dict:
    from dpaudit.recheck import load_result_data

    try:
        return load_result_data(path)
    except ValueError as error:
        raise UsageError(
            f"{label}: {error}; give the JSON that `dpaudit audit --json FILE` wrote"
        ) from None


def handle(args) -> int:
    _check_options(args)
    from dpaudit.compare import CannotRecheck, IncomparableResults

    baseline = _load(args.old, "OLD.json")
    try:
        if args.new is not None:
            from dpaudit.compare import compare_results

            comparison = compare_results(
                _result(baseline, args.old, "OLD.json"),
                _result(_load(args.new, "NEW.json"), args.new, "NEW.json"),
                alpha=args.alpha,
            )
        else:
            from dpaudit.compare import compare_with_baseline

            _result(baseline, args.old, "OLD.json")
            new = _new_mechanism(args, baseline)
            try:
                comparison = compare_with_baseline(
                    baseline,
                    new,
                    samples=args.samples,
                    alpha=args.alpha,
                    seed=args.seed,
                    allow_command=args.allow_command,
                )
            finally:
                if new is not None and hasattr(new, "close"):
                    new.close()  # a --command child
    except IncomparableResults as error:
        raise UsageError(str(error)) from None
    except CannotRecheck as error:
        from .errors import could_not_run

        cause = error.__cause__
        raise (
            could_not_run(cause, "the re-test") if cause is not None else _cannot(error)
        ) from None
    print(comparison, file=summary_stream(args))
    if args.json:
        write_json(args.json, comparison.to_dict())
    return comparison.exit_status


def _cannot(error: Exception):
    from .errors import CouldNotRun

    return CouldNotRun(f"the re-test could not run: {error}")


def _result(data: dict, path: str, label: str):
    """The AuditResult of a loaded file; a file it cannot read is a usage error naming it."""
    from dpaudit.auditor import AuditResult

    try:
        return AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        reason = f"no field {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
        raise UsageError(
            f"{label}: {path!r} is not a dpaudit audit result ({reason}); give the JSON that "
            "`dpaudit audit --json FILE` wrote"
        ) from None
