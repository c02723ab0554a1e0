"""The default audit on the corpus of real bugs: verdict, bounds, samples and seconds per seed.

For every entry of :mod:`dpaudit.corpus` and seeds 0-2, ``dpaudit.audit(entry.build(),
seed=s, **entry.audit_options)`` with every other option at its default, and the same for
the entry's correct twin. One table; the last lines count the bugs flagged on every seed
and the twins ever flagged. Seconds are wall-clock on a shared machine (all from this run).

Usage: python benchmarks/bench_corpus.py [--seeds 0 1 2] [--only NAME ...] [--workers N]
                                         [--no-twins]

``--no-twins`` audits the bugs only (``benchmarks/bench_verdicts.py`` audits every twin).
"""

from __future__ import annotations

import argparse
import math
import time

import dpaudit
from dpaudit.corpus import CORPUS

_SHORT = {"violation": "VIOL", "passed": "PASS", "inconclusive": "INC"}


def _run(build, seed, options, workers):
    started = time.perf_counter()
    result = dpaudit.audit(build(), seed=seed, workers=workers, **options)
    return result, time.perf_counter() - started


def _fmt(x):
    return "inf" if math.isinf(x) else f"{x:.4g}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--only", nargs="+", default=None, help="entry names to run")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--no-twins", action="store_true", help="audit the bugs only")
    args = parser.parse_args(argv)
    by_name = {e.name: e for e in CORPUS}
    unknown = [n for n in args.only or () if n not in by_name]
    if unknown:
        parser.error(f"--only: no corpus entry {', '.join(unknown)}")
    entries = CORPUS if args.only is None else [by_name[n] for n in args.only]  # in --only's order
    header = (
        f"{'entry':38s} {'claim ε,δ':>17s} {'true ε,δ':>17s} seed {'verdict':7s} "
        f"{'ε lower':>8s} {'δ lower':>9s} {'samples':>9s} {'s':>5s}  twin"
    )
    print(header)
    print("-" * len(header))
    flagged_all, twins_flagged, total_seconds = 0, 0, 0.0
    for entry in entries:
        claim = entry.claim
        verdicts = []
        for seed in args.seeds:
            result, seconds = _run(entry.build, seed, entry.audit_options, args.workers)
            total_seconds += seconds
            verdicts.append(result.verdict)
            twin = "-"
            if entry.twin is not None and not args.no_twins:
                twin_result, twin_seconds = _run(
                    entry.twin, seed, entry.audit_options, args.workers
                )
                total_seconds += twin_seconds
                twins_flagged += twin_result.verdict == "violation"
                twin = (
                    f"{_SHORT[twin_result.verdict]} ε≥{twin_result.epsilon_lower:.3g} "
                    f"δ≥{twin_result.delta_lower:.2g} {twin_seconds:.1f}s"
                )
            print(
                f"{entry.name:38s} {claim.epsilon:>7.4g},{claim.delta:<9.3g} "
                f"{_fmt(entry.true.epsilon):>7s},{entry.true.delta:<9.3g} {seed:4d} "
                f"{_SHORT[result.verdict]:7s} {result.epsilon_lower:8.4g} "
                f"{result.delta_lower:9.3g} {result.samples:9d} {seconds:5.1f}  {twin}",
                flush=True,
            )
        flagged_all += all(v == "violation" for v in verdicts)
    print("-" * len(header))
    print(
        f"bugs flagged on every seed: {flagged_all}/{len(entries)}; "
        f"twin audits flagged: {twins_flagged}; audit seconds in all: {total_seconds:.0f}"
    )


if __name__ == "__main__":
    main()
