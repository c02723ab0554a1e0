"""Benchmark: exact vs paper calibration of TopStable (TS) and RestrictedGumbel (RG).

Two tables, on real histograms (dpaudit.data.load_histogram; data outside the repo):

1. utility — mean number of items returned over TRIALS runs, calibration="paper" vs
   "exact", for k in {10, 50}, k̄ in {k, 10k}, on gowalla and lastfm, at ε = 1 and
   δ = 1/(2n) (seed 001 §8.2's δ_total; n = number of users). TS: TopStable(k, k̄, ε, δ)
   with ε_EM = 0. RG: RestrictedGumbel.from_total(k, k̄, ε, δ) (§8.2's split, Ind).
   The gain column is exact/paper.
2. speed — seconds per selection (one ``run`` call, full histogram in, top-k̄ found in
   O(d)), and per-sample throughput of a batched ``sample`` call, on gowalla (d = 40,981).

Usage: python benchmarks/bench_stability.py [--trials 200] [--quick]
Timings are wall-clock on a shared machine: treat them as rough.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpaudit.data import load_histogram, load_pairs
from mechanisms import RestrictedGumbel, TopStable, top_counts


def returned(batch: np.ndarray) -> np.ndarray:
    """Items returned per row (BOTTOM and PAD excluded)."""
    return (batch >= 0).sum(axis=1)


def make(kind: str, k: int, kbar: int, epsilon: float, delta: float, calibration: str):
    if kind == "TS":
        return TopStable(k=k, kbar=kbar, epsilon=epsilon, delta=delta, calibration=calibration)
    return RestrictedGumbel.from_total(
        k=k, kbar=kbar, epsilon_total=epsilon, delta_total=delta, calibration=calibration
    )


def utility_table(names, trials: int, epsilon: float, seed: int) -> None:
    print(f"Items returned (mean ± sd over {trials} trials), epsilon={epsilon}, delta=1/(2n)")
    header = (
        f"{'data':<8}{'mech':<5}{'k':>4}{'kbar':>6}{'paper':>16}{'exact':>16}"
        f"{'gain':>8}{'T paper':>10}{'T exact':>10}"
    )
    print(header)
    print("-" * len(header))
    for name in names:
        counts = load_histogram(name)
        n_users = np.unique(load_pairs(name)[:, 0]).size
        delta = 1.0 / (2 * n_users)
        for kind in ("TS", "RG"):
            for k in (10, 50):
                for kbar in (k, 10 * k):
                    means, sds, thresholds = [], [], []
                    for calibration in ("paper", "exact"):
                        mech = make(kind, k, kbar, epsilon, delta, calibration)
                        # same seed for both calibrations: common random numbers
                        batch = mech.sample(counts, trials, np.random.default_rng(seed))
                        r = returned(batch)
                        means.append(r.mean())
                        sds.append(r.std(ddof=1))
                        t = mech.threshold if kind == "TS" else mech.framework.threshold
                        thresholds.append(t)
                    gain = means[1] / means[0] if means[0] > 0 else float("nan")
                    print(
                        f"{name:<8}{kind:<5}{k:>4}{kbar:>6}"
                        f"{means[0]:>9.2f} ±{sds[0]:>5.2f}{means[1]:>9.2f} ±{sds[1]:>5.2f}"
                        f"{gain:>8.3f}{thresholds[0]:>10.2f}{thresholds[1]:>10.2f}"
                    )
    print()


def speed_table(name: str, repeats: int, batch: int, epsilon: float, seed: int) -> None:
    counts = load_histogram(name)
    n_users = np.unique(load_pairs(name)[:, 0]).size
    delta = 1.0 / (2 * n_users)
    print(
        f"Speed on {name} (d={counts.size:,}); run(): mean of {repeats} calls; "
        f"sample(): one batch of {batch}"
    )
    header = (
        f"{'mech':<5}{'k':>4}{'kbar':>6}{'ms/run (full hist)':>20}"
        f"{'ms/run (TopCounts)':>20}{'ratio':>7}{'samples/s (batch)':>19}"
    )
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(seed)
    for kind in ("TS", "RG"):
        for k, kbar in ((10, 10), (10, 100), (50, 50), (50, 500)):
            mech = make(kind, k, kbar, epsilon, delta, "paper")
            mech.run(counts, rng)  # warm-up (δ_q solve, imports)
            start = time.perf_counter()
            for _ in range(repeats):
                mech.run(counts, rng)
            full = (time.perf_counter() - start) / repeats
            top = top_counts(counts, kbar + 1)
            start = time.perf_counter()
            for _ in range(repeats):
                mech.run(top, rng)
            pre = (time.perf_counter() - start) / repeats
            start = time.perf_counter()
            mech.sample(top, batch, rng)
            throughput = batch / (time.perf_counter() - start)
            print(
                f"{kind:<5}{k:>4}{kbar:>6}{full * 1e3:>20.3f}{pre * 1e3:>20.3f}"
                f"{full / pre:>7.1f}{throughput:>19,.0f}"
            )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--quick", action="store_true", help="lastfm only, 20 trials")
    args = parser.parse_args()
    names = ["lastfm"] if args.quick else ["gowalla", "lastfm"]
    trials = 20 if args.quick else args.trials
    utility_table(names, trials, args.epsilon, args.seed)
    speed_table(
        "lastfm" if args.quick else "gowalla", args.repeats, args.batch, args.epsilon, args.seed
    )


if __name__ == "__main__":
    main()
