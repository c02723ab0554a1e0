"""Benchmark JOINT (sets) and JointSequence: first sample and samples per second in a batch.

Histograms as in seed 004 Sec. 4: "spread" = synthetic uniform counts
~ U(0, 10 d); "zipf" = counts floor(10 d / r) for ranks r = 1..d, shuffled
(distinct at the top, huge tie blocks in the tail). "first" = one sample on
a fresh mechanism (includes the per-histogram preparation: sort, utility
grid, bounds, exact counts at the knots); "batch" = ``--batch`` samples once
the preparation is cached. Columns: grid = utility values kept, knots =
mixture components ("all" = the exact mixture over the whole grid, else the
coarse knots, docs/joint.md), acc = planned acceptance of the knot proposal.

Targets (Joint, spread counts): first <= 2 s everywhere, batch
>= 1,000 sets/s at k = 100 and >= 200 sets/s at k = 1,000; JointSequence at
k = 1,000 >= 5,000 samples/s in a batch.

Usage: python benchmarks/bench_joint.py [--quick] [--batch N]
The machine is shared: timings are noisy wall-clock seconds; the load
average (``os.getloadavg``) is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from mechanisms import Joint, JointSequence

EPSILONS = (0.1, 0.5, 1.0, 2.0)


def histogram(kind: str, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "spread":
        return rng.integers(0, 10 * d, d)
    return rng.permutation(10 * d // np.arange(1, d + 1))


def bench(cls, counts, k, epsilon, batch, seed=0):
    rng = np.random.default_rng(seed)
    mech = cls(k=k, epsilon=epsilon)
    t0 = time.perf_counter()
    mech.sample(counts, 1, rng)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    mech.sample(counts, batch, rng)
    rate = batch / (time.perf_counter() - t0)
    return first, rate, mech.prepare(counts)


def row(name, kind, d, k, epsilon, first, rate, prepared):
    knots = "all" if prepared.exact_mixture else str(prepared.knots.size)
    print(
        f"{name:<14}{kind:<7}{d:>9}{k:>6}{epsilon:>6}{prepared.grid.size:>8}{knots:>7}"
        f"{prepared.acceptance:>6.2f}{first:>9.2f}{rate:>11.0f}",
        flush=True,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d = 1e5 only")
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    ds = [10**5] if args.quick else [10**5, 10**6]
    one, five, fifteen = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"
    )
    header = (
        f"{'mechanism':<14}{'counts':<7}{'d':>9}{'k':>6}{'eps':>6}{'grid':>8}{'knots':>7}"
        f"{'acc':>6}{'first s':>9}{'samples/s':>11}"
    )
    print(header)
    print("-" * len(header))
    for kind in ("spread", "zipf"):
        for d in ds:
            counts = histogram(kind, d)
            for k in (100, 1000):
                for epsilon in EPSILONS:
                    first, rate, prepared = bench(Joint, counts, k, epsilon, args.batch)
                    row("Joint", kind, d, k, epsilon, first, rate, prepared)
    for kind in ("spread", "zipf"):
        for d in ds:
            counts = histogram(kind, d)
            for epsilon in EPSILONS:
                first, rate, prepared = bench(
                    JointSequence, counts, 1000, epsilon, max(args.batch, 5000)
                )
                row("JointSequence", kind, d, 1000, epsilon, first, rate, prepared)
    one, five, fifteen = os.getloadavg()
    print(f"load average (1, 5, 15 min): {one:.1f} {five:.1f} {fifteen:.1f}")


if __name__ == "__main__":
    main()
