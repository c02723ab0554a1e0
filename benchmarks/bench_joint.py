"""Benchmark JOINT (sets) and JointSequence: first sample and per-sample cost in a batch.

Histograms as in seed 004 Sec. 4 (synthetic uniform: counts ~ U(0, 10 d)),
ε = 1. "first" = one sample on a fresh mechanism (includes the per-histogram
preparation: sort, utility grid, counts per utility); "batch" = 1,000 samples
once the preparation is cached. Reference (task brief, same machine): the
google-research dp_topk/joint.py sequence sampler takes 0.37 s per sample at
d=1e5, k=10 and 4.6 s at d=1e5, k=100, with no reuse across samples.

Usage: python benchmarks/bench_joint.py [--quick]
The machine is shared: timings are noisy wall-clock seconds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mechanisms import Joint, JointSequence
from mechanisms.joint import MAX_SET_DP_WORK

REFERENCE_SECONDS = {(10**5, 10): 0.37, (10**5, 100): 4.6}


def bench(cls, d, k, epsilon, batch, seed=0):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 10 * d, d)
    mech = cls(k=k, epsilon=epsilon)
    t0 = time.perf_counter()
    mech.sample(counts, 1, rng)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    mech.sample(counts, batch, rng)
    per = (time.perf_counter() - t0) / batch
    return first, per, mech.prepare(counts).grid.size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d <= 1e5, k <= 100 only")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    ds = [10**3, 10**5] if args.quick else [10**3, 10**5, 10**6]
    ks = [10, 100] if args.quick else [10, 100, 1000]
    header = (f"{'mechanism':<14}{'d':>9}{'k':>6}{'grid':>8}{'first s':>10}"
              f"{'batch s/sample':>16}{'samples/s':>11}{'vs ref (first)':>16}")
    print(header)
    print("-" * len(header))
    for cls in (JointSequence, Joint):
        for d in ds:
            for k in ks:
                if k > d:
                    continue
                name = cls.__name__
                if cls is Joint:
                    # Joint refuses (ValueError) a set count planned above MAX_SET_DP_WORK
                    # cells (~10 s); report its own plan instead of timing it.
                    counts = np.random.default_rng(0).integers(0, 10 * d, d)
                    work, _ = Joint(k=k, epsilon=args.epsilon).dp_work(counts)
                    if work > MAX_SET_DP_WORK:
                        print(f"{name:<14}{d:>9}{k:>6}   refused: banded set count ~{work:.1e}"
                              f" cells > {MAX_SET_DP_WORK:.0e}", flush=True)
                        continue
                first, per, grid = bench(cls, d, k, args.epsilon, args.batch)
                # the reference numbers are for the ordered (sequence) sampler
                ref = REFERENCE_SECONDS.get((d, k)) if cls is JointSequence else None
                ratio = f"{ref / first:>15.1f}x" if ref else f"{'':>16}"
                print(f"{name:<14}{d:>9}{k:>6}{grid:>8}{first:>10.3f}{per:>16.2e}"
                      f"{1 / per:>11.0f}{ratio}", flush=True)


if __name__ == "__main__":
    main()
