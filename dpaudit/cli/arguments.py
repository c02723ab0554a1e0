"""Options shared by ``dpaudit audit`` and ``dpaudit plan``, and reading them into values.

Both commands describe one audit design (a mechanism or a claim, pairs, a budget, a seed);
its options are defined once here ([`add_design_options`][dpaudit.cli.arguments.add_design_options])
and read by the same functions ([`histogram`][dpaudit.cli.arguments.histogram],
[`parse_claim`][dpaudit.user_mechanism.parse_claim],
[`parse_relation`][dpaudit.user_mechanism.parse_relation], [`pairs`][dpaudit.cli.arguments.pairs],
[`mechanism`][dpaudit.cli.arguments.mechanism]). Every reader refuses a bad value with a
[`UsageError`][dpaudit.errors.UsageError] that names the option, before any work. Heavy modules
(``mechanisms``, the auditor) are imported inside the functions that need them, so that
``dpaudit --help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
import os

from dpaudit.user_mechanism import (
    command_mechanism,
    module_mechanism,
    parse_claim,
    parse_relation,
)

from .dask_options import check_dask_options, close_dask_client, dask_client  # noqa: F401
from .errors import UsageError
from .mechanism_args import (
    ENTRY_PREFIXES,
    build_mechanism,
    closest_option,
    entry_for,
    find_mechanism_class,
    mechanism_classes,
)

__all__ = [
    "DEFAULT_SAMPLES",
    "PLAN_SAMPLES",
    "add_design_options",
    "check_output_path",
    "close_dask_client",
    "dask_client",
    "default_mechanism",
    "histogram",
    "mechanism",
    "options_of",
    "pairs",
    "parse_claim",
    "parse_relation",
    "positive_int",
    "probability",
    "unknown_option_message",
]

#: An audit's budget when neither --samples nor --budget is given (the auditor's
#: ``dpaudit.auditor.DEFAULT_SAMPLES``, not imported at start-up; a default audit stops early).
DEFAULT_SAMPLES = 50_000_000

#: Outcomes of an offline plan when --samples is not given (someone runs them all).
PLAN_SAMPLES = 2_000_000

#: The README's main job: what ``dpaudit audit`` with no arguments audits.
DEFAULT_MECHANISMS = (
    ("LimitDomain", {"k": 3, "kbar": 10, "epsilon": 1.0, "delta": 1e-6}),
    ("GumbelTopK", {"k": 3, "epsilon": 1.0}),
)


# -- argparse types: one line naming the option, via argparse's own "invalid value" ---------


def _count(text: str) -> int:
    """An integer written as digits, ``1e6`` or ``2_000_000`` (a count, so >= 0 and whole)."""
    cleaned = text.strip().replace("_", "")
    try:
        return int(cleaned)
    except ValueError:
        pass
    try:
        value = float(cleaned)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(value)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (``1e6`` accepted, as ``--delta 1e-6`` is)."""
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    value = _count(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def probability(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    value = _float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1), got {text!r}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    value = _float(text)
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def power_factor(text: str) -> float:
    """argparse type: a finite number >= 1 (a pass needs power at this multiple of the claim)."""
    value = _float(text)
    if not value >= 1 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 1, got {text!r}")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    return value


# -- shared option definitions ---------------------------------------------------------------


def add_design_options(parser, *, planning: bool) -> None:
    """The options of an audit design, shared by ``audit`` (``planning=False``) and ``plan``."""
    parser.add_argument(
        "mechanism",
        nargs="?",
        metavar="MECH",
        help="mechanism class name (see `dpaudit mechanisms`), catalog:NAME, corpus:NAME, or "
        "package.module:attr (a mechanism, a factory, or a function with --claim and --width)",
    )
    parser.add_argument(
        "--claim",
        metavar="EPS,DELTA",
        help="the claim audited (of a module:attr function or a plan without MECH; "
        "with MECH, audited instead of its own)",
    )
    parser.add_argument(
        "--width", type=nonnegative_int, help="longest outcome of a module:attr function"
    )
    parser.add_argument(
        "--values",
        type=nonnegative_int,
        default=None if planning else 0,
        metavar="N",
        help="real values released per outcome (a module:attr function then returns "
        "(items, values), or with --width 0 just the values)"
        + ("; default: MECH's, else 0" if planning else ""),
    )
    parser.add_argument(
        "--relation",
        metavar="REL",
        help="neighbours to audit under: add-remove, add-remove:DELTA, "
        "bounded-change:M, substitute:DELTA (default: the mechanism's claim)",
    )
    _add_budget_options(parser, planning)
    parser.add_argument(
        "--alpha", type=probability, default=0.05, help="failure probability (default 0.05)"
    )
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="root seed (default 0)")
    _add_pair_options(parser)


def _add_budget_options(parser, planning: bool) -> None:
    """The samples or time an audit spends, and how (an audit's own options when not planning)."""
    default_samples = PLAN_SAMPLES if planning else DEFAULT_SAMPLES
    parser.add_argument(
        "--samples",
        type=positive_int,
        default=None,
        help=f"total samples, all phases and histograms (default {default_samples:,}, "
        "or the catalog entry's own)" + ("" if planning else "; never exceeded"),
    )
    if not planning:
        parser.add_argument(
            "--budget",
            metavar="N|Ts",
            help="the budget as samples (2e7) or wall-clock seconds (60s), never exceeded "
            "(instead of --samples)",
        )
        parser.add_argument(
            "--epsilon-only",
            action="store_true",
            help="accept a pass on epsilon alone when the budget cannot resolve the claimed "
            "delta (recorded in the result)",
        )
        parser.add_argument(
            "--black-box",
            action="store_true",
            help="sample the mechanism as a black box only: no same-seed replay check and no "
            "grey-box scan of its draws (--command children and --from-samples files are "
            "always black boxes)",
        )
        parser.add_argument(
            "--refine",
            action="store_true",
            help="spend the budget left after a first audit (a third of a large budget, "
            "half of a small one) on "
            "one fresh, full-alpha estimate of the witness it chose (DP-Sniper's final "
            "step): the tightest bound the budget allows; the verdict is that event's",
        )


def _add_pair_options(parser) -> None:
    """The user's own histograms and pairs, and the items of the default ones."""
    parser.add_argument(
        "--counts", help="a histogram whose neighbours are added to the pairs, e.g. 5,4,4,1"
    )
    parser.add_argument(
        "--pair",
        action="append",
        metavar="C;C2",
        help="a neighbouring pair that is confirmed, not only screened (up to the number of "
        "pairs kept), e.g. '1,1,0;2,1,0' (repeatable)",
    )
    parser.add_argument(
        "--restrict-to-given",
        action="store_true",
        help="use only the --counts/--pair given, not the default families",
    )
    parser.add_argument(
        "--domain-size",
        type=positive_int,
        metavar="D",
        help="items of the default histograms (default: from the mechanism)",
    )


def options_of(parser) -> list[str]:
    """Every long option string of an argparse parser."""
    return [s for action in parser._actions for s in action.option_strings if s.startswith("--")]


def unknown_option_message(token: str, known) -> str:
    """``unknown option --sample (did you mean --samples?)``."""
    name = token.split("=", 1)[0]
    if not name.startswith("-"):
        return f"unexpected argument {token!r}"
    close = closest_option(name, known)
    hint = f" (did you mean {close}?)" if close else ""
    return f"unknown option {name}{hint}"


def check_output_path(path, option: str) -> None:
    """Fail early (before any sampling) when ``path`` cannot be written; ``-`` is stdout."""
    if path is None or path == "-":
        return
    if path == "":
        raise UsageError(f"{option}: empty file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{option}: cannot write {path!r}: no directory {folder!r}")
    if os.path.isdir(path):
        raise UsageError(f"{option}: {path!r} is a directory")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{option}: cannot write {path!r}: permission denied")


# -- reading values --------------------------------------------------------------------------


def histogram(text: str, option: str) -> list[int]:
    """``5,4,4,1`` -> ``[5, 4, 4, 1]``: non-negative integer counts, at least one."""
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise UsageError(
            f"{option}: cannot read {text!r}: expected comma-separated integers"
        ) from None
    if not values:
        raise UsageError(f"{option}: empty histogram {text!r}: give counts, e.g. 5,4,4,1")
    if any(v < 0 for v in values):
        raise UsageError(f"{option}: counts must be >= 0, got {text!r}")
    return values


def pairs(texts) -> list | None:
    """``--pair 'C;C2'`` (repeatable) -> a list of histogram pairs of equal length."""
    if not texts:
        return None
    found = []
    for text in texts:
        if text.count(";") != 1:
            raise UsageError(f"--pair wants 'C;C2' (two histograms), got {text!r}")
        a, b = text.split(";")
        first, second = histogram(a, "--pair"), histogram(b, "--pair")
        if len(first) != len(second):
            raise UsageError(
                f"--pair: the two histograms of {text!r} have {len(first)} and "
                f"{len(second)} items; give them the same length"
            )
        found.append((first, second))
    return found


def default_mechanism():
    """LimitDomain(k=3, kbar=10, ε=1, δ=1e-6), or GumbelTopK(k=3, ε=1) if it is not available."""
    classes = mechanism_classes()
    for name, params in DEFAULT_MECHANISMS:
        if name in classes:
            return classes[name](**params)
    raise UsageError("no default mechanism is available; name one (see `dpaudit mechanisms`)")


def mechanism(args, extra, known):
    """The mechanism to audit, its catalog entry (or None); every error is a UsageError."""
    if args.child_command is not None:
        return command_mechanism(args), None
    if args.mechanism is None:
        if extra:
            raise UsageError(unknown_option_message(extra[0], known))
        return default_mechanism(), None
    name = args.mechanism
    if name.startswith("-"):
        raise UsageError(f"expected a mechanism name, got {name!r}")
    if name.startswith(ENTRY_PREFIXES):
        return _catalog_mechanism(name, extra, known)
    if ":" in name:
        if extra:
            raise UsageError(unknown_option_message(extra[0], known))
        return module_mechanism(args), None
    try:
        find_mechanism_class(name)
    except UsageError:
        # `dpaudit audit --sample 5` gives argparse 5 for MECH: name the option, not "5".
        option = next((t for t in extra if t.startswith("--")), None)
        if option is not None and not name.replace("-", "").replace("_", "").isalpha():
            raise UsageError(unknown_option_message(option, known)) from None
        raise  # a mistyped name is named first: its parameters are not options of the command
    return build_mechanism(name, extra, known), None


def _catalog_mechanism(name, extra, known):
    """``catalog:NAME`` (bugs written here) or ``corpus:NAME`` (real bugs rebuilt)."""
    if extra:
        raise UsageError(
            unknown_option_message(extra[0], known)
            + "; catalog entries take no parameters (nor do corpus entries)"
        )
    try:
        entry = entry_for(name)
    except KeyError as error:
        raise UsageError(str(error.args[0])) from None
    return entry.build(), entry
