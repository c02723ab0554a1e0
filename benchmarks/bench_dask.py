"""Sampling throughput: in-process vs a Dask LocalCluster (1 and 2 workers), and task overhead.

Run: ``python benchmarks/bench_dask.py [--samples N] [--quick]``. Plain script; needs the
``dask`` extra. Every engine draws the same plan (same seeds, same chunks), so the
counts are identical (checked here too); only the wall time differs.

1. ``--samples`` (default 1e8) samples of LimitDomain(k=3, k̄=10, ε=1, δ=1e-6) on one
   histogram, in chunks of 250,000: samples/s per engine and the ratio to in-process.
2. Task overhead: 400 chunks of 1 sample each, seconds per chunk.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mechanisms as M
from dpaudit.auditor import AuditPlan
from dpaudit.auditor.sources import DaskExecutor, LocalExecutor, local_cluster_client


def timed_draw(executor, histogram, samples, plan):
    start = time.perf_counter()
    result = executor.draw([histogram], samples, [plan.seed_for("confirm", 0, 0)])
    return time.perf_counter() - start, result[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=float, default=1e8)
    parser.add_argument("--quick", action="store_true", help="1e7 samples")
    args = parser.parse_args()
    samples = int(1e7 if args.quick else args.samples)
    mech = M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6)
    histogram = np.array([30, 28, 27, 25, 24, 22, 20, 19, 18, 16, 15, 3, 2, 1], dtype=np.int64)
    plan = AuditPlan(samples=samples, seed=0, alpha=0.05)
    rows = []
    seconds, reference = timed_draw(LocalExecutor(mech, 1, 250_000), histogram, samples, plan)
    rows.append(("in-process", seconds, True))
    for workers in (1, 2):
        client = local_cluster_client(workers)
        try:
            executor = DaskExecutor(mech, client, 250_000)
            timed_draw(executor, histogram, 250_000, plan)  # warm-up: imports on the workers
            seconds, counts = timed_draw(executor, histogram, samples, plan)
            rows.append(
                (
                    f"LocalCluster, {workers} worker{'s' if workers > 1 else ''}",
                    seconds,
                    counts == reference,
                )
            )
            tiny = DaskExecutor(mech, client, 1)
            start = time.perf_counter()
            tiny.draw([histogram], 400, [plan.seed_for("screen", 0, 0)])
            overhead = (time.perf_counter() - start) / 400
        finally:
            client.close()
            client.cluster.close()
        rows.append((f"  task overhead ({workers} w.)", overhead, None))
    base = rows[0][1]
    print(f"{samples:,} samples of {mech}")
    print(f"{'engine':<30}{'seconds':>10}{'samples/s':>14}{'vs in-process':>15}  same counts")
    for name, seconds, same in rows:
        if same is None:
            print(f"{name:<30}{seconds * 1e3:>9.2f}ms per chunk")
            continue
        print(
            f"{name:<30}{seconds:>10.2f}{samples / seconds:>14,.0f}{base / seconds:>14.2f}x  {same}"
        )


if __name__ == "__main__":
    main()
