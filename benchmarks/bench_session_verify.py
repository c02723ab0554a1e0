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

from dpaudit.exact.session_verify import verify_sessions


def main() -> None:
    print(f"{'claim':<14}{'holds':>6}{'worst delta ratio':>19}{'seconds':>9}")
    for epsilon, delta in [(1.0, 1e-2), (2.0, 1e-2), (3.0, 1e-3)]:
        start = time.perf_counter()
        sweep = verify_sessions(epsilon, delta, d=4, max_count=4)
        worst, holds = sweep.worst_delta_ratio, sweep.holds
        print(
            f"({epsilon:g}, {delta:g}){'':<4}{holds!s:>6}{worst:>19.4f}{time.perf_counter() - start:>9.1f}"
        )


if __name__ == "__main__":
    main()
