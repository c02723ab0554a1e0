"""Speed of the Laplace-family samplers and of their exact laws (closed form vs quadrature).

Run: python benchmarks/bench_laplace.py [--quick]
Prints two tables. Timings are wall-clock best-of-3 and noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mechanisms as M
from dpaudit.exact import laplace_calculus as L
from dpaudit.exact import output_law, working_precision


def best_of(fn, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def sampler_table(d: int, size: int):
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 10 * d, size=d)
    mechs = [
        M.ReportNoisyMax(epsilon=1.0),
        M.PermuteAndFlip(epsilon=1.0),
        M.LaplaceTopK(k=5, epsilon=1.0),
        M.GaussianTopK(k=5, epsilon=1.0, delta=1e-6, max_items=1),
        M.LaplaceLimitDomain(k=5, kbar=50, epsilon=1.0, delta=1e-6, max_items=1),
    ]
    if hasattr(M, "GumbelTopK"):
        mechs.append(M.GumbelTopK(k=5, epsilon=1.0))
    print(f"\nSampling: d={d}, size={size} (rows per call)")
    print(f"{'mechanism':<22}{'seconds':>10}{'samples/s':>14}{'ratio to RNM':>14}")
    base = None
    for mech in mechs:
        t = best_of(lambda m=mech: m.sample(counts, size, np.random.default_rng(1)))
        base = base or t
        print(f"{type(mech).__name__:<22}{t:>10.4f}{size / t:>14.0f}{t / base:>14.2f}")


def law_table():
    print("\nExact ordering probability P[X0 > X1 > rest], 4 Laplace variables")
    print(f"{'route':<10}{'digits':>8}{'seconds':>10}{'ratio':>10}")
    means, scales = [3, 2, 2, 0], [1.0, 1.0, 2.0, 1.0]
    results = []
    for method, digits in (("closed", 50), ("closed", 15), ("quad", 15)):
        # One quadrature level; three levels take minutes by quadrature.
        with working_precision(digits):
            t = best_of(lambda m=method: L.probability_of_order(means, scales, [0, 1], method=m), 1)
        results.append((method, digits, t))
    base = results[0][2]
    for method, digits, t in results:
        print(f"{method:<10}{digits:>8}{t:>10.4f}{t / base:>10.1f}")
    print("\nWhole exact laws (50 digits; Gaussian at 40)")
    print(f"{'mechanism':<40}{'outcomes':>10}{'seconds':>10}")
    cases = [
        (M.ReportNoisyMax(epsilon=1.0), [3, 2, 2, 0, 1]),
        (M.LaplaceTopK(k=2, epsilon=1.0), [3, 2, 2, 0, 1]),
        (M.PermuteAndFlip(epsilon=1.0), [3, 2, 2, 0, 1]),
        (M.LaplaceLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3, max_items=1), [3, 2, 2, 0, 1]),
        (M.GaussianTopK(k=1, epsilon=1.0, delta=1e-3, max_items=1), [2, 0, 1]),
    ]
    for mech, counts in cases:
        start = time.perf_counter()
        law = output_law(mech, counts)
        t = time.perf_counter() - start
        name = f"{type(mech).__name__} d={len(counts)}"
        print(f"{name:<40}{len(law):>10}{t:>10.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    if args.quick:
        sampler_table(1_000, 2_000)
    else:
        sampler_table(1_000, 20_000)
        sampler_table(100_000, 200)
    law_table()


if __name__ == "__main__":
    main()
