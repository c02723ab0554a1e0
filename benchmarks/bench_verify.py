"""Throughput of exhaustive exact verification (dpaudit.exact.verify).

Prints, for LimitDomain(k=2, k̄=3, ε=1, δ=1e-3) on growing families, the wall
time, pairs/s and laws/s; then the hot loop alone: the exact fixed-point
hockey-stick used by ``verify`` against the mpf ``hockey_stick`` on the same
law pairs (ratio = speed-up). Timings on a shared machine are noisy.

    python benchmarks/bench_verify.py
"""

from __future__ import annotations

import time

import mpmath
import numpy as np

import dpaudit.exact.gumbel_laws  # noqa: F401  (registers the LimitDomain law)
import mechanisms as M
from dpaudit.exact import hockey_stick, output_law, verify, working_precision
from dpaudit.exact.fixed_point import excess, fixed_law, to_fixed
from dpaudit.neighbours import neighbour_pairs


def main() -> None:
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    print(f"{'family':<16}{'pairs':>9}{'laws':>7}{'seconds':>9}{'pairs/s':>10}  worst eps at delta")
    for d, max_count in [(4, 2), (5, 2), (5, 3)]:
        start = time.perf_counter()
        result = verify(mech, d=d, max_count=max_count, progress=False)
        seconds = time.perf_counter() - start
        print(
            f"d={d}, C<={max_count:<7}{result.pairs:>9}{result.laws:>7}{seconds:>9.2f}"
            f"{result.pairs / seconds:>10.0f}  {mpmath.nstr(result.epsilon_at_delta, 6)}"
        )

    low, high = neighbour_pairs(5, 2, M.AddRemoveUser())
    with working_precision():
        laws = {}
        for row in np.concatenate([low, high]):
            key = tuple(int(v) for v in row)
            if key not in laws:
                laws[key] = output_law(mech, np.array(key))
        fixed = {key: fixed_law(law) for key, law in laws.items()}
        pairs = [(tuple(int(v) for v in a), tuple(int(v) for v in b)) for a, b in zip(low, high)]
        scale = to_fixed(mpmath.exp(mpmath.mpf(2)))
        start = time.perf_counter()
        for a, b in pairs:
            excess(fixed[a], fixed[b], scale)
            excess(fixed[b], fixed[a], scale)
        fixed_seconds = time.perf_counter() - start
        start = time.perf_counter()
        for a, b in pairs:
            hockey_stick(laws[a], laws[b], 2)
            hockey_stick(laws[b], laws[a], 2)
        mpf_seconds = time.perf_counter() - start
    n = len(pairs)
    print(f"\nhot loop on {n} pairs (both directions):")
    print(f"  fixed-point ints : {fixed_seconds:7.3f} s  {n / fixed_seconds:10.0f} pairs/s")
    print(f"  mpf hockey_stick : {mpf_seconds:7.3f} s  {n / mpf_seconds:10.0f} pairs/s")
    print(f"  ratio            : {mpf_seconds / fixed_seconds:7.1f}x")


if __name__ == "__main__":
    main()
