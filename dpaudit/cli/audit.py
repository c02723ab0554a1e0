"""``dpaudit audit``: audit a mechanism as a black box from its sampler alone.

    dpaudit audit                                  # built-in default, < 1 min
    dpaudit audit LimitDomain --k 3 --kbar 10 --epsilon 1 --delta 1e-6 --samples 5000000
    dpaudit audit GumbelTopK --k 2 --epsilon 0.5 --counts 5,4,4,1 --json out.json --report out.html
    dpaudit audit catalog:joint-no-half            # a deliberately broken mechanism: exit 1

Exit status: 0 no violation found, 1 violation, 2 usage error.
"""

from __future__ import annotations

import json
import sys

from . import UsageError
from .mechanism_args import build_mechanism, mechanism_classes

#: The README's main job: what ``dpaudit audit`` with no arguments audits.
DEFAULT_MECHANISMS = (
    ("LimitDomain", {"k": 3, "kbar": 10, "epsilon": 1.0, "delta": 1e-6}),
    ("GumbelTopK", {"k": 3, "epsilon": 1.0}),
)
DEFAULT_SAMPLES = 2_000_000


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
            "alone: screen neighbouring pairs, choose events, and bound epsilon and delta on "
            "fresh samples with one-sided Clopper-Pearson intervals. Mechanism parameters follow "
            "as --PARAM VALUE."
        ),
        epilog="Exit status: 0 no violation found, 1 violation, 2 usage error.",
        allow_abbrev=False,
    )
    parser.add_argument("mechanism", nargs="?", metavar="MECH",
                        help="mechanism class name (see `dpaudit mechanisms`) or catalog:NAME")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES,
                        help=f"total samples, all phases (default {DEFAULT_SAMPLES:,})")
    parser.add_argument("--alpha", type=float, default=0.05, help="failure probability (default 0.05)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="sampling processes (default 1)")
    parser.add_argument("--counts", help="base histogram, e.g. 5,4,4,1 (pairs are its neighbours)")
    parser.add_argument("--pair", action="append", metavar="C;C2",
                        help="explicit neighbouring pair, e.g. '1,1,0;2,1,0' (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="write the result as JSON ('-' for stdout)")
    parser.add_argument("--report", metavar="FILE", help="write a Markdown (.md) or HTML (.html) report")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=handle, accepts_mechanism_params=True)


def _histogram(text: str):
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise UsageError(f"cannot read histogram {text!r}: expected comma-separated integers") from None
    if not values:
        raise UsageError(f"empty histogram {text!r}")
    return values


def handle(args) -> int:
    extra = list(getattr(args, "extra", []))
    if args.mechanism is None:
        if extra:
            raise UsageError("mechanism parameters given without a mechanism name")
        mech = default_mechanism()
    elif args.mechanism.startswith("-"):
        raise UsageError(f"expected a mechanism name, got {args.mechanism!r}")
    elif args.mechanism.startswith("catalog:"):
        # A deliberately broken mechanism from dpaudit.catalog (demo / self-test).
        from dpaudit.catalog import catalog_entry

        if extra:
            raise UsageError("catalog entries take no parameters")
        try:
            entry = catalog_entry(args.mechanism.split(":", 1)[1])
        except KeyError as error:
            raise UsageError(str(error.args[0])) from None
        mech = entry.build()
    else:
        mech = build_mechanism(args.mechanism, extra)
    pairs = None
    if args.pair:
        pairs = []
        for text in args.pair:
            if ";" not in text:
                raise UsageError(f"--pair wants 'C;C2', got {text!r}")
            a, b = text.split(";", 1)
            pairs.append((_histogram(a), _histogram(b)))
    counts = _histogram(args.counts) if args.counts else None

    from dpaudit.auditor import audit

    try:
        result = audit(
            mech, samples=args.samples, alpha=args.alpha, seed=args.seed, workers=args.workers,
            counts=counts, pairs=pairs, progress=not args.no_progress and sys.stderr.isatty(),
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    print(result)
    if args.json:
        text = json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as handle_:
                handle_.write(text + "\n")
    if args.report:
        from dpaudit.report import write_report

        write_report(result, args.report)
    return 1 if result.violation else 0
