"""Speed of LimitDomain: per-selection latency on a big histogram, batch throughput.

Run: ``python benchmarks/bench_limit_domain.py [--quick]``. Plain script, one
process, time.perf_counter; every row is the median (and best) of repeats.

1. Per selection, LimitDomain(k=10, k̄=100) on a Zipf histogram of
   d = 1,280,969 items: with the top-(k̄+1) extraction (``mech.run(counts)``),
   given the extraction (``mech.run(top)``), and the floor of any exact
   extraction, one ``np.argpartition`` over the counts.
2. Batch sampling, LimitDomain(k=3, k̄=10): samples/s of ``mech.sample`` (the
   alias-table Plackett–Luce route) against the naive route measured in the
   same run (one Gumbel per candidate, argsort, cut at ⊥).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import mechanisms as M
from mechanisms.plackett_luce import sample_plackett_luce


def zipf_histogram(d: int, total: float, rng) -> np.ndarray:
    """Counts ∝ 1/rank (Zipf, exponent 1), item ids shuffled."""
    counts = np.floor(total / np.arange(1, d + 1)).astype(np.int64)
    rng.shuffle(counts)
    return counts


def timed(fn, repeats: int) -> tuple[float, float]:
    """(median, best) wall time of ``fn()`` in seconds over ``repeats`` runs."""
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def naive_gumbel_sort(mech: M.LimitDomain, top: M.TopCounts, size: int, rng) -> np.ndarray:
    """Alg. 1 literally: Gumbel(1/ε) on the k̄ counts and h_⊥, sort, cut at ⊥."""
    h_bot = mech.threshold(top)
    scores = np.append(top.counts[: mech.kbar].astype(float), h_bot)
    labels = np.append(top.items[: mech.kbar], M.BOTTOM)
    noisy = scores + rng.gumbel(scale=1 / mech.epsilon, size=(size, scores.size))
    order = np.argsort(-noisy, axis=1)[:, : mech.k]
    out = labels[order]
    is_bottom = out == M.BOTTOM
    out[(np.cumsum(is_bottom, axis=1) - is_bottom) > 0] = M.PAD
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller batches")
    args = parser.parse_args()
    repeats = 7 if args.quick else 31
    batch = 200_000 if args.quick else 1_000_000
    rng = np.random.default_rng(2026)

    print("LimitDomain speed (single process; wall clock, noisy on a shared machine)\n")

    d = 1_280_969
    counts = zipf_histogram(d, 1e7, rng)
    mech = M.LimitDomain(k=10, kbar=100, epsilon=0.1, delta=1e-6)
    top = M.top_counts(counts, mech.kbar + 1)
    floor = timed(lambda: np.argpartition(counts, d - (mech.kbar + 1)), repeats)
    rows = [
        ("np.argpartition floor", floor),
        (
            "top_counts (extraction only)",
            timed(lambda: M.top_counts(counts, mech.kbar + 1), repeats),
        ),
        ("LD run incl. extraction", timed(lambda: mech.run(counts, rng), repeats)),
        ("LD run given TopCounts", timed(lambda: mech.run(top, rng), repeats)),
    ]
    print(f"1. per selection: LimitDomain(k=10, kbar=100) on Zipf d={d:,}")
    print(f"   {'what':34s} {'median ms':>10s} {'best ms':>9s} {'median/floor':>13s}")
    for name, (median, best) in rows:
        print(f"   {name:34s} {median * 1e3:10.3f} {best * 1e3:9.3f} {median / floor[0]:13.2f}")

    small = M.LimitDomain(k=3, kbar=10, epsilon=0.5, delta=1e-6)
    small_top = M.top_counts(zipf_histogram(1000, 2000, rng), small.kbar + 1)

    def gumbel_route():
        return sample_plackett_luce(
            np.append(small_top.counts[:10], small.threshold(small_top)) * small.epsilon,
            3,
            batch,
            rng,
            stop=10,
            method="gumbel",
        )

    variants = [
        (
            "naive Gumbel + argsort",
            timed(lambda: naive_gumbel_sort(small, small_top, batch, rng), repeats // 3 or 1),
        ),
        ("Gumbel + argpartition route", timed(gumbel_route, repeats // 3 or 1)),
        (
            "LD.sample (alias table)",
            timed(lambda: small.sample(small_top, batch, rng), repeats // 3 or 1),
        ),
    ]
    base = variants[0][1][0]
    print(f"\n2. batch: LimitDomain(k=3, kbar=10), {batch:,} samples per call")
    print(f"   {'route':34s} {'median ms':>10s} {'Msamples/s':>11s} {'speed-up':>9s}")
    for name, (median, _best) in variants:
        print(
            f"   {name:34s} {median * 1e3:10.1f} {batch / median / 1e6:11.2f} {base / median:9.2f}"
        )


if __name__ == "__main__":
    main()
