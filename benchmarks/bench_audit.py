"""Benchmark of the empirical auditor (plain script; prints tables).

1. Adaptive against fixed-budget confirmation, side by side in one run: each case is
   audited twice at the same budget and seed, with the sequential confirmation
   (``looks=6``, the default: stops at a confirmed violation or once the audit has power)
   and with one fixed-size confirmation (``looks=1``, as an offline plan does). The table
   prints samples, seconds, verdict and bounds of both, and the ratios of samples and
   seconds (fixed / adaptive), all from this run. Cases: correct mechanisms (report
   noisy max at ε = 1 as in DP-Sniper, Bichsel et al. S&P 2021; LimitDomain; the correct
   sparse vector at ε = 0.1) and real bugs from :mod:`dpaudit.corpus` and the catalog.
   DP-Sniper's published figure for report noisy max (0.973 at 90 % confidence, 125.6M
   samples, 106 s on its authors' machine) is printed for scale only: no ratio is
   computed against a number measured elsewhere.
2. Throughput of the audit loop (samples/s) on LimitDomain(k=3, k̄=10).
3. Wall time of the default CLI audit (`dpaudit audit`, the README's main job).

Timings are wall-clock on a shared machine and noisy; compare rows of one run.
1b. (``--refine-budget 3e8``) The tightest bound a budget allows (``refine=True``) on Lee &
   Clifton's sparse vector, beside the default audit and DP-Sniper's published 0.17.

Usage: python benchmarks/bench_audit.py [--workers N] [--quick] [--budget N] [--refine-budget N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

import dpaudit
import dpaudit.catalog
import mechanisms as M

DPSNIPER_SAMPLES = 125_600_000
DPSNIPER_SECONDS = 106.0
DPSNIPER_BOUND = 0.973
#: DP-Sniper's published ε lower bound on Lee & Clifton's sparse vector at ε = 0.1.
DPSNIPER_SVT_BOUND = 0.17


def rnm_mechanism():
    """mechanisms.ReportNoisyMax(monotonic=False): argmax with Lap(2/ε), BoundedChange(1), DP-Sniper's setup."""
    mech = M.ReportNoisyMax(epsilon=1.0, monotonic=False)
    assert mech.scale == 2.0 and isinstance(mech.claim.neighbours, M.BoundedChange)
    return mech, "mechanisms.ReportNoisyMax"


def row(*cells, widths=(34, 12, 12, 10, 9, 12)):
    print(
        "  ".join(
            str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )
    )


def adaptive_cases():
    """(name, mechanism, audit options): correct mechanisms first, then real bugs."""
    from dpaudit.corpus import entry

    lee_clifton = entry("svt-lee-clifton")
    threshold = entry("opendp-laplace-threshold-delta")
    rnm, label = rnm_mechanism()
    return [
        (f"{label} (correct)", rnm, {"domain_size": 5}),
        ("LimitDomain k=3 kbar=10 (correct)", M.LimitDomain(3, 10, 1.0, 1e-6), {}),
        ("SVT Lyu-Su-Li Alg.1 ε=0.1 (correct)", lee_clifton.twin(), lee_clifton.audit_options),
        ("corpus svt-lee-clifton (bug)", lee_clifton.build(), lee_clifton.audit_options),
        ("corpus opendp threshold δ (bug)", threshold.build(), threshold.audit_options),
        (
            "catalog rnm-releases-value (bug)",
            dpaudit.catalog.catalog_entry("rnm-releases-value").build(),
            {"domain_size": 5},
        ),
    ]


def compare_adaptive(budget: int, workers: int) -> None:
    """Section 1: each case with looks=6 (adaptive) and looks=1 (fixed), same budget and seed."""
    print(f"\n1. Adaptive (looks=6) against fixed (looks=1) confirmation, budget {budget:,}\n")
    head = (
        f"{'case':38s} {'mode':8s} {'verdict':12s} {'ε lower':>8s} {'δ lower':>9s} "
        f"{'samples':>11s} {'seconds':>8s}"
    )
    print(head)
    print("-" * len(head))
    for name, mech, options in adaptive_cases():
        runs = {}
        for mode, looks in (("adaptive", 6), ("fixed", 1)):
            result = dpaudit.audit(
                mech, samples=budget, seed=0, workers=workers, looks=looks, **options
            )
            runs[mode] = result
            print(
                f"{name if mode == 'adaptive' else '':38s} {mode:8s} {result.verdict:12s} "
                f"{result.epsilon_lower:8.4f} {result.delta_lower:9.3g} "
                f"{result.samples:11,d} {result.seconds:8.2f}",
                flush=True,
            )
        adaptive, fixed = runs["adaptive"], runs["fixed"]
        print(
            f"{'':38s} {'ratio':8s} fixed/adaptive: samples "
            f"x{fixed.samples / max(adaptive.samples, 1):.2f}, seconds "
            f"x{fixed.seconds / max(adaptive.seconds, 1e-9):.2f}"
        )
    print(
        f"\nfor scale only (published, not this machine): DP-Sniper on report noisy max, "
        f"{DPSNIPER_BOUND} at 90 % confidence, {DPSNIPER_SAMPLES / 1e6:.1f}M samples, "
        f"{DPSNIPER_SECONDS:.0f} s"
    )


def refined_lee_clifton(budget: int, workers: int) -> None:
    """Section 1b: the tightest bound for a budget (``refine=True``) on Lee & Clifton's
    sparse vector, beside the default audit at the same seed, and DP-Sniper's published
    figure (printed for scale, not divided by)."""
    from dpaudit.corpus import entry

    case = entry("svt-lee-clifton")
    print("\n1b. Tightest bound for a budget (refine=True), corpus svt-lee-clifton, seed 0\n")
    runs = (
        ("default audit", {}),
        (f"refine, budget {budget:,}", {"refine": True, "samples": budget}),
    )
    for label, options in runs:
        result = dpaudit.audit(
            case.build(), seed=0, workers=workers, **options, **case.audit_options
        )
        print(
            f"  {label:32s} {result.verdict:12s} ε >= {result.epsilon_lower:.4f}  "
            f"{result.samples:,} samples, {result.seconds:.0f} s",
            flush=True,
        )
    print(f"  DP-Sniper (published, ~2e8 samples): ε >= {DPSNIPER_SVT_BOUND}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="smaller budgets")
    parser.add_argument(
        "--budget", type=float, default=None, help="section 1's budget (default 5e7, quick 1e7)"
    )
    parser.add_argument(
        "--refine-budget",
        type=float,
        default=None,
        help="also run section 1b: svt-lee-clifton with refine=True at this budget (3e8: minutes)",
    )
    args = parser.parse_args()
    budget = int(args.budget or (10_000_000 if args.quick else 50_000_000))
    compare_adaptive(budget, args.workers)
    if args.refine_budget:
        refined_lee_clifton(int(args.refine_budget), args.workers)

    print("\n2. Audit loop throughput, LimitDomain(k=3, kbar=10, ε=1, δ=1e-6)\n")
    row("setting", "samples", "seconds", "samples/s", "", "", widths=(34, 12, 10, 12, 1, 1))
    ld = M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6)
    # Top counts straddle the ⊥ threshold (cut 20 + 1 + ln(3/δ)/ε ≈ 35.9): a realistic outcome mix.
    counts = np.array([60, 58, 55, 50, 48, 45, 44, 40, 38, 35, 30, 20, 10])
    for n in (1_000_000,) if args.quick else (1_000_000, 5_000_000):
        start = time.perf_counter()
        dpaudit.auditor.sample_counts(
            ld.sample, counts, n, np.random.SeedSequence(0), workers=args.workers
        )
        t = time.perf_counter() - start
        row(
            "sample+count, one histogram",
            f"{n:,}",
            f"{t:.2f}",
            f"{n / t:,.0f}",
            "",
            "",
            widths=(34, 12, 10, 12, 1, 1),
        )
        result = dpaudit.audit(ld, samples=n, seed=0, workers=args.workers)
        row(
            "full audit (screen/select/confirm)",
            f"{result.samples:,}",
            f"{result.seconds:.2f}",
            f"{result.samples / result.seconds:,.0f}",
            "",
            "",
            widths=(34, 12, 10, 12, 1, 1),
        )

    print("\n3. Default CLI audit (`dpaudit audit`)\n")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dpaudit.cli", "audit", "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    t = time.perf_counter() - start
    print(f"  exit status {done.returncode}, {t:.2f} s wall (including interpreter start-up)")
    print("  " + "\n  ".join(done.stdout.strip().splitlines()[:4]))


if __name__ == "__main__":
    main()
