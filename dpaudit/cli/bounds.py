"""``dpaudit bounds``: the papers' Laplace tail bounds against the exact tail, and δ_q.

Two tables over a grid of ε and δ:

1. tails — for each δ, the probability ``P[Lap(1/ε_a) > ln(1/δ)/ε_a + Lap(1/ε_b)]`` that
   an unstable item passes (it depends on ε_a, ε_b only through ``c = ε_b/ε_a``): seed 000
   (000_4bf15007bce596ab.txt) Lemma 3.1's bound at TopStable's c = 2p₁/(1 − p₁), and seed
   001 (001_49698e97f2ea8cba.txt) eq. (6) ``¼δ(3 + ln 1/δ)`` at c = 1 (framework F), each
   next to the exact value (``mechanisms.tail_bounds``) and bound/exact;
2. calibration — for each (ε, δ): δ_q of TopStable (Alg. 3 line 2, target δ/k̄) and of F
   (Alg. 1 line 2, target δ), solved against the paper bound and against the exact tail,
   and the thresholds T they imply (T = ln(1/δ_q)/(ε₂/2) for TS, ln(1/δ_q)/(ε/2) for F).

Exit status: 0 if every paper bound is >= the exact value on the grid, 1 otherwise.
"""

from __future__ import annotations

import json
import math
import sys

from .arguments import check_output_path, options_of
from .errors import UsageError
from .output import write_text

__all__ = ["calibration_rows", "handle", "register", "tail_rows"]


def _floats(text: str, name: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(
            f"--{name} must be a comma-separated list of numbers, got {text!r}"
        ) from None
    if not values:
        raise UsageError(f"--{name} must list at least one number")
    return values


def tail_rows(deltas, p1: float = 0.37) -> list[dict]:
    """Paper bound vs exact tail at T = ln(1/δ)/ε_a, for TopStable's c and for c = 1."""
    from mechanisms import tail_bounds as tb  # scipy.optimize: only when tables are made

    c_ts = 2.0 * p1 / (1.0 - p1)
    rows = []
    for delta in deltas:
        for name, c in (("TS Lemma 3.1", c_ts), ("F eq. (6)", 1.0)):
            # ε_a = 1, ε_b = c, T = ln(1/δ): the probability depends on c and δ only
            log_bound = tb.log_laplace_tail_bound(delta, c)
            log_exact = tb.log_laplace_difference_tail(1.0, c, math.log(1.0 / delta))
            rows.append(
                {
                    "bound": name,
                    "c": c,
                    "delta": delta,
                    "paper": math.exp(log_bound),
                    "exact": math.exp(log_exact),
                    "ratio": math.exp(log_bound - log_exact),
                    "holds": log_bound >= log_exact,
                }
            )
    return rows


def calibration_rows(epsilons, deltas, kbar: int = 10, p1: float = 0.37) -> list[dict]:
    """δ_q (paper vs exact) and the thresholds they imply, for TopStable and for F."""
    from mechanisms import tail_bounds as tb  # scipy.optimize: only when tables are made

    rows = []
    for epsilon in epsilons:
        epsilon2 = (1.0 - p1) * epsilon
        for delta in deltas:
            for name in ("TS", "F"):
                entry = {"mechanism": name, "epsilon": epsilon, "delta": delta}
                for calibration in tb.CALIBRATIONS:
                    if name == "TS":
                        dq = tb.top_stable_delta_q(epsilon, delta, kbar, p1, calibration)
                        threshold = tb.tail_threshold(epsilon2 / 2.0, dq)
                    else:
                        dq = tb.restricted_domain_delta_q(delta, calibration)
                        threshold = tb.tail_threshold(epsilon / 2.0, dq)
                    entry[f"delta_q_{calibration}"] = dq
                    entry[f"T_{calibration}"] = threshold
                entry["T_saved"] = entry["T_paper"] - entry["T_exact"]
                rows.append(entry)
    return rows


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bounds",
        help="paper Laplace tail bounds vs the exact tail, and delta_q (paper vs exact)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        epilog="example: dpaudit bounds --epsilons 0.1,1 --deltas 1e-6 --json out.json. "
        "Exit status: 0 every bound holds, 1 a bound is below the exact value, "
        "2 usage error.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--epsilons", default="0.1,0.5,1,2", help="comma-separated ε values (default 0.1,0.5,1,2)"
    )
    parser.add_argument(
        "--deltas",
        default="1e-3,1e-6,1e-9",
        help="comma-separated δ values (default 1e-3,1e-6,1e-9)",
    )
    parser.add_argument("--kbar", type=int, default=10, help="k̄ of TopStable (default 10)")
    parser.add_argument("--p1", type=float, default=0.37, help="p₁ of TopStable (default 0.37)")
    parser.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="also write both tables as JSON ('-': stdout, JSON only)",
    )
    parser.set_defaults(handler=handle, known_options=options_of(parser))


def handle(args) -> int:
    epsilons = _floats(args.epsilons, "epsilons")
    deltas = _floats(args.deltas, "deltas")
    if any(not (e > 0 and math.isfinite(e)) for e in epsilons):
        raise UsageError("--epsilons must all be finite and > 0")
    if any(not 0 < d < 1 for d in deltas):
        raise UsageError("--deltas must all lie in (0, 1)")
    if args.kbar < 1:
        raise UsageError("--kbar must be >= 1")
    if not 0 < args.p1 < 1:
        raise UsageError("--p1 must lie in (0, 1)")
    check_output_path(args.json, "--json")
    tails = tail_rows(deltas, args.p1)
    # With --json - stdout carries the JSON alone; the tables go to stderr.
    out = sys.stderr if args.json == "-" else sys.stdout
    calib = calibration_rows(epsilons, deltas, args.kbar, args.p1)

    print(
        "Tail of an unstable item: P[Lap(1/ea) > ln(1/delta)/ea + Lap(1/eb)], c = eb/ea", file=out
    )
    print(
        f"{'bound':<14}{'c':>8}{'delta':>10}{'paper':>13}{'exact':>13}{'paper/exact':>13}", file=out
    )
    for r in tails:
        flag = "" if r["holds"] else "  BELOW EXACT"
        print(
            f"{r['bound']:<14}{r['c']:>8.4f}{r['delta']:>10.0e}{r['paper']:>13.4e}"
            f"{r['exact']:>13.4e}{r['ratio']:>13.4f}{flag}",
            file=out,
        )
    print(file=out)
    print(
        f"delta_q and threshold T, paper vs exact calibration (TS: kbar={args.kbar}, "
        f"p1={args.p1}; F: delta_R = delta)",
        file=out,
    )
    print(
        f"{'mech':<5}{'eps':>6}{'delta':>9}{'dq paper':>12}{'dq exact':>12}"
        f"{'T paper':>10}{'T exact':>10}{'T saved':>9}",
        file=out,
    )
    for r in calib:
        print(
            f"{r['mechanism']:<5}{r['epsilon']:>6g}{r['delta']:>9.0e}{r['delta_q_paper']:>12.4e}"
            f"{r['delta_q_exact']:>12.4e}{r['T_paper']:>10.3f}{r['T_exact']:>10.3f}"
            f"{r['T_saved']:>9.3f}",
            file=out,
        )
    if args.json:
        write_text(
            args.json, json.dumps({"tails": tails, "calibration": calib}, indent=2), "--json"
        )
    return 0 if all(r["holds"] for r in tails) else 1
