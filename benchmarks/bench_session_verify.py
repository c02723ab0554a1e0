"""Exhaustive verification of pay-what-you-get sessions on four items with counts up to four.

Run: ``python benchmarks/bench_session_verify.py``. Plain script, one process. For each claim
(ε*, δ*) in (1, 1e-2), (2, 1e-2), (3, 1e-3): every session with k* <= 3 items and ℓ* <= 4
queries under five analyst policies (repeat, widen after ⊥, scripted), verified exactly by
``dpaudit.exact.verify`` on every neighbouring pair of d = 4 items with counts <= 4; prints the
worst δ(ε*)/δ* and the time (about 75 s per claim on one core). The test suite verifies the same
sessions on three items with counts up to three (``tests/dpaudit/exact/test_session_laws.py``);
this larger family is only here. Run it after any change to the session laws or ``verify``.
"""

from __future__ import annotations

import time

import dpaudit.exact as E
import mechanisms as M
from mechanisms.analyst_policies import RepeatQuery, ScriptedQueries, WidenAfterBottom

POLICIES = [
    RepeatQuery(k=1, kbar=1),
    RepeatQuery(k=2, kbar=2),
    WidenAfterBottom(k=1, kbar=1, step=1, max_kbar=3),
    WidenAfterBottom(k=2, kbar=2, step=1, max_kbar=3),
    ScriptedQueries(((1, 1), (2, 2), (1, 3), (3, 3))),
]


def worst_ratio(epsilon: float, delta: float, d: int = 4, max_count: int = 4) -> tuple[float, bool]:
    """The worst δ(ε*)/δ* over every session and policy, and whether every claim held."""
    worst, holds = 0.0, True
    for total_k in (1, 2, 3):
        for max_queries in (1, 2, 3, 4):
            for policy in POLICIES:
                if isinstance(policy, (RepeatQuery, WidenAfterBottom)) and policy.k > total_k:
                    continue
                session = M.MultiLimitDomain(
                    total_k=total_k, max_queries=max_queries, epsilon=epsilon, delta=delta
                )
                result = E.verify(
                    session.transcript_mechanism(policy), d=d, max_count=max_count, progress=False
                )
                holds = holds and bool(result.holds)
                worst = max(worst, float(result.delta_at_epsilon / result.delta))
    return worst, holds


def main() -> None:
    print(f"{'claim':<14}{'holds':>6}{'worst delta ratio':>19}{'seconds':>9}")
    for epsilon, delta in [(1.0, 1e-2), (2.0, 1e-2), (3.0, 1e-3)]:
        start = time.perf_counter()
        worst, holds = worst_ratio(epsilon, delta)
        print(
            f"({epsilon:g}, {delta:g}){'':<4}{holds!s:>6}{worst:>19.4f}{time.perf_counter() - start:>9.1f}"
        )


if __name__ == "__main__":
    main()
