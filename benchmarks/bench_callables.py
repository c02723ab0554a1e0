"""Auditing your own Python code: per-call vs batched callables, and per-call over 2 workers.

Run: ``python benchmarks/bench_callables.py [--samples N]``. Plain script, same run for
every row; report noisy max on 5 counts (Laplace 2/ε, ε = 1), audited under
BoundedChange(1) with a fixed seed, so every row gives the same verdict and bound
(same plan, same seeds), only the time differs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import dpaudit
import mechanisms as M

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from user_mechanisms import rnm_batched, rnm_per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2_000_000)
    args = parser.parse_args()
    claim = (1.0, 0.0, M.BoundedChange(1))
    rows = []
    for label, function, batched, workers in [
        ("per-call, 1 worker", rnm_per_call, False, 1),
        ("per-call, 2 workers", rnm_per_call, False, 2),
        ("batched, 1 worker", rnm_batched, True, 1),
    ]:
        start = time.perf_counter()
        result = dpaudit.audit(
            function,
            claim=claim,
            width=1,
            batched=batched,
            workers=workers,
            samples=args.samples,
            domain_size=5,
            seed=0,
        )
        rows.append((label, time.perf_counter() - start, result))
    base = rows[0][1]
    print(f"report noisy max, {args.samples:,} samples budget")
    print(f"{'route':<22}{'seconds':>9}{'samples/s':>12}{'speed-up':>10}  verdict, ε lower")
    for label, seconds, result in rows:
        print(
            f"{label:<22}{seconds:>9.2f}{result.samples / seconds:>12,.0f}{base / seconds:>9.2f}x"
            f"  {result.verdict}, {result.epsilon_lower:.4f}"
        )


if __name__ == "__main__":
    main()
