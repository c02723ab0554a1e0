"""Speed of session transcripts: batched MultiLimitDomainTranscript vs driving sessions per call.

Run: ``python benchmarks/bench_session.py [--quick]``. Plain script, one process,
time.perf_counter, median of repeats. Both routes sample the same law (tested in
tests/dpaudit/auditor/run/test_sessions.py); the ratio is what batching buys an audit.

Rows: the free-⊥ counterexample's session shape (k* = 1, ℓ* = 5, top-1 of 1 until spent) on (15, 0), and an
adaptive analyst (WidenAfterBottom, k* = 10, ℓ* = 6) on a Zipf histogram of 10,000 items.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import mechanisms as M
from dpaudit.auditor import SessionBlackBox, session_transcript_mechanism


def samples_per_second(mech, counts, size, repeats) -> float:
    rates = []
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        mech.sample(counts, size, rng)
        rates.append(size / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller batches, one repeat")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    zipf = np.floor(1e5 / np.arange(1, 10_001)).astype(np.int64)
    cases = [
        (
            "issue-10 session, (15, 0)",
            {"total_k": 1, "max_queries": 5, "epsilon": 1.0, "delta": 1e-6},
            M.RepeatQuery(k=1, kbar=1),
            np.array([15, 0]),
        ),
        (
            "adaptive, Zipf d=1e4",
            {"total_k": 10, "max_queries": 6, "epsilon": 0.5, "delta": 1e-6},
            M.WidenAfterBottom(k=3, kbar=10, step=5, max_kbar=40),
            zipf,
        ),
    ]
    print(f"{'case':<28} {'batched/s':>12} {'per call/s':>12} {'ratio':>8}")
    for name, params, policy, counts in cases:

        def factory(params=params):
            return M.MultiLimitDomain(**params)

        batched = session_transcript_mechanism(factory, policy)
        per_call = session_transcript_mechanism(factory, policy, width=batched.width)
        assert isinstance(per_call, SessionBlackBox)
        fast = samples_per_second(batched, counts, 20_000 if args.quick else 200_000, repeats)
        slow = samples_per_second(per_call, counts, 500 if args.quick else 3_000, repeats)
        print(f"{name:<28} {fast:>12,.0f} {slow:>12,.0f} {fast / slow:>7.0f}x")


if __name__ == "__main__":
    main()
